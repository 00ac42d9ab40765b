#!/usr/bin/env bash
# Probe 3 (session 8): where the A8W4 fp8-MMA fragment decode stops paying at few tokens per
# expert: the A8W4 default (swapped kernels below 3 tokens per expert, per-element fp8 decode)
# against the 16-token fd8 pair at backbone / draft / EP M = 1, 8, 16, 32 (0.02-1.5 tokens per
# expert), and the 32-token pair against the 16-token one at 16-64 tokens per expert.
# Usage: p3.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
s1=moetune_s1_a8w4_fp8_; s2=moetune_s2_a8w4_fp8_
F16=${s1}t16x64x128_w4_kp1_nk16_wv0_st3_stg_fd_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_ks1_dw0_atomic
F16W=${s1}t16x64x128_w4_kp1_nk16_wv4_st3_stg_fd_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv4_st4_stg_fd_ks1_dw0_atomic
F32B=${s1}t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_ks1_dw0_atomic
for spec in "backbone 5120,640,384,6 1 8 16 32 128 2048" "draft 5120,640,128,3 1 8 16 64 2048" "ep 5120,2304,96,6 1 8 16"; do
  set -- $spec; name=$1; shape=$2; shift 2
  LIM=150 t $b/bin/moe-tune bench --shape $shape --dtype a8w4 --m "$@" --samples 7 --cache-dir $cache \
    --config default "$F16" "$F16W" "$F32B" --json $out/bench_a8w4_$name.json > $out/bench_a8w4_$name.log 2>&1
  grep -E "^ +[0-9]+ +[0-9.]+ " -B1 $out/bench_a8w4_$name.log | grep -v "^--" | sed 's/moetune_s[12]_a8w4_fp8_//g' | paste - - | awk '{print $1, $3, $4, $8}'
done

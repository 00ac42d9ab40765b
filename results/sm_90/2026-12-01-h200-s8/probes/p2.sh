#!/usr/bin/env bash
# Probe 2 (session 8): A8W4 fragment decode into fp8 MMAs (mma.sync m16n8k32 e4m3, natural
# MXFP4 words -> e4m3 codes, one scaled FMA per accumulator and 32-K piece).
#  1. verify every fd8 variant of p2_fd8_space.json (all gates) on the backbone at M = 512 and
#     on H2048 I544 E64 top4 at M = 96 (partial N tile, ragged K);
#  2. bench A8W4 (roofline): the default against the 16- and 32-token fd8 pairs, backbone
#     M = 64 / 512 / 4096, draft M = 512, EP M = 64 / 512; the A16W4 default beside it;
#  3. the exec gates that cover fd8 (A8W4 backbone, out-of-range scales) and the runtime's
#     [gpu] cases after helper-8's forward restructuring, its host cost and device time.
# Usage: p2.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
sp=results/sm_90/2026-12-01-h200-s8/probes/p2_fd8_space.json
LIM=150 t $b/bin/moe-tune verify --space $sp --dtype a8w4 --m 512 --cache-dir $cache --json $out/verify_backbone_512.json > $out/verify_backbone.log 2>&1
tail -4 $out/verify_backbone.log
LIM=120 t $b/bin/moe-tune verify --space $sp --dtype a8w4 --shape 2048,544,64,4 --m 96 --cache-dir $cache --json $out/verify_odd_96.json > $out/verify_odd.log 2>&1
tail -4 $out/verify_odd.log
s1=moetune_s1_a8w4_fp8_; s2=moetune_s2_a8w4_fp8_
F16=${s1}t16x64x128_w4_kp1_nk16_wv0_st3_stg_fd_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_ks1_dw0_atomic
F16B=${s1}t16x64x64_w4_kp1_nk16_wv0_st4_stg_fd_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv0_st3_stg_fd_ks1_dw0_atomic
F32=${s1}t32x64x64_w4_kp1_nk16_wv4_st4_stg_fd_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_ks1_dw0_atomic
F32B=${s1}t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_ks1_dw0_atomic
for spec in "backbone 5120,640,384,6 64 512 4096" "draft 5120,640,128,3 512" "ep 5120,2304,96,6 64 512"; do
  set -- $spec; name=$1; shape=$2; shift 2
  LIM=150 t $b/bin/moe-tune bench --roofline --shape $shape --dtype a8w4 --m "$@" --samples 7 --cache-dir $cache \
    --config default "$F16" "$F16B" "$F32" "$F32B" --json $out/bench_a8w4_$name.json > $out/bench_a8w4_$name.log 2>&1
  grep -E "^\| E" $out/bench_a8w4_$name.log | cut -d'|' -f4,5,10 | sed 's/moetune_s[12]_a8w4_fp8_//g'
done
LIM=100 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 64 512 4096 --samples 7 --cache-dir $cache --json $out/bench_a16w4_backbone.json > $out/bench_a16w4_backbone.log 2>&1
grep -E "^\| E" $out/bench_a16w4_backbone.log | cut -d'|' -f4,5,10 | sed 's/moetune_s[12]_a16w4_bf16_//g'
LIM=200 t $b/bin/moetune_test_exec "gates: A8W4*","*scales outside*" > $out/exec.log 2>&1
tail -3 $out/exec.log
LIM=100 t $b/bin/moetune_test_runtime "[gpu]" > $out/runtime.log 2>&1; tail -2 $out/runtime.log
LIM=60 t $b/bin/moetune_test_runtime "[.host_cost]" > $out/host_cost.log 2>&1; grep -E "M=|us" $out/host_cost.log | head -20
LIM=150 t $b/bin/moetune_test_runtime "[.device_time]" > $out/device_time.log 2>&1; grep -vE "^\[20" $out/device_time.log | tail -20
export MOETUNE_LIBRARY=$b/lib
LIM=60 t python3 python/tests/test_fused_moe.py > $out/python.log 2>&1; tail -3 $out/python.log

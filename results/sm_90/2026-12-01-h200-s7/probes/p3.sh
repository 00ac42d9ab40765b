#!/usr/bin/env bash
# Probe 3 (session 7): fragment decode after moving the exact-scale test out of the fast k-tile
# (one basic block per k-tile): A/B against the default at M = 512 (three shapes) and 128,
# with 16- and 32-token blocks. Usage: p3.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
F1=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_fd_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_fd_rp_ks1_dw0_atomic
F3=${s1}t32x64x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_ks1_dw0_atomic
G1=${s1}t16x64x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_ks1_dw0_atomic
G2=${s1}t16x128x64_w8_kp1_nk16_wv0_st4_stg_fd_rp_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_ks1_dw0_atomic
for shape in "backbone 5120,640,384,6 512" "draft 5120,640,128,3 512" "ep 5120,2304,96,6 512" "backbone 5120,640,384,6 128"; do
  set -- $shape
  LIM=120 t $b/bin/moe-tune bench --roofline --shape $2 --m $3 --samples 5 --cache-dir $cache \
    --config default "$F1" "$F3" "$G1" "$G2" --json $out/bench_$1_$3.json > $out/bench_$1_$3.log 2>&1
  grep -E "^ +[0-9]+ |^ +moetune_s1" $out/bench_$1_$3.log | sed 's/moetune_s[12]_a16w4_bf16_//g; s/_kp1_nk16//g' | paste - - | awk '{print $1, $5, $6, $7, $8}'
done
tar czf $out/../p3.tgz -C $out .

#!/usr/bin/env bash
# Session 15, probe 1 (issue #13): the 8-token kernels' ring depth, k-tile and occupancy at
# few tokens per expert (backbone M = 1 / 8 / 64, EP M = 1 / 8 / 64). The search space never
# offered rings deeper than 4 for them, nor the occupancy hint (waves) on the wgmma loop; the
# 8-token stage two holds 78 registers (3 CTAs per SM) where its LDS allows 4 (wv4: 50).
# Pairs i = (stage one i, stage two i): the bench times each stage on its own, so one run
# covers both lists. Logs into OUT. Usage: p1.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
p=moetune_s1_a16w4_bf16_ q=moetune_s2_a16w4_bf16_
s1=(t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp t8x8x128_w8_kp1_nk16_wv2_st4_sab_rp
    t8x32x256_w4_kp1_nk16_wv0_st4_wg t8x32x256_w4_kp1_nk16_wv0_st6_wg t8x32x128_w4_kp1_nk16_wv0_st8_wg
    t8x32x128_w4_kp1_nk16_wv0_st4_wg t8x64x256_w8_kp1_nk16_wv0_st3_wg t8x64x128_w8_kp1_nk16_wv0_st8_wg
    t8x32x256_w4_kp1_nk16_wv0_st8_wg)
s2=(t8x128x128_w8_kp1_nk16_wv0_st4 t8x128x128_w8_kp1_nk16_wv4_st4 t8x128x128_w8_kp1_nk16_wv4_st3
    t8x128x128_w8_kp1_nk16_wv0_st6 t8x128x128_w8_kp1_nk16_wv0_st8 t8x64x128_w4_kp1_nk16_wv0_st4
    t8x64x128_w4_kp1_nk16_wv0_st8 t8x128x256_w8_kp1_nk16_wv0_st3 t8x64x128_w4_kp1_nk16_wv4_st6)
cfg=(default)
for i in "${!s1[@]}"; do cfg+=("${p}${s1[$i]}_gi_dw0,${q}${s2[$i]}_wg_ks1_dw0_atomic"); done
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  ${DRY:-} timeout 200 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" --config "${cfg[@]}" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-100
}
bench backbone_1 --shape 5120,640,384,6 --m 1 8 64
bench ep --shape 5120,2304,96,6 --m 1 8 64
bench backbone_2 --shape 5120,640,384,6 --m 1 8 64

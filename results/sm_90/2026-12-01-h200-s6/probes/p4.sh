#!/usr/bin/env bash
# Probe 4 (session 6): the repacked default candidates. Swapped 8-token blocks: the natural
# waves-4 pair against repacked pairs without the 8-byte spill (stage one block_k 128, 3-4
# stages); staged: repacked with stage two's 8-warp tile held at 2 CTAs per SM (waves 2).
# Usage: p4.sh BUILD OUT (all output in OUT/p4.tgz)
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
w=$out/p4_out; mkdir -p "$w"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
SW4=${s1}t8x8x256_w4_kp1_nk16_wv4_st2_sab_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_ks1_dw0_atomic
R3=${s1}t8x8x128_w4_kp1_nk16_wv4_st3_sab_rp_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic
R4=${s1}t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic
ST64=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
ST64R=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv2_st3_stg_rp_ks1_dw0_atomic
bench() {  # bench NAME SHAPE "M..." CONFIG...
  local name=$1 shape=$2 ms=$3; shift 3
  LIM=200 t $b/bin/moe-tune bench --roofline --shape $shape --m $ms --samples 7 --cache-dir $cache --config "$@" --json $w/bench_$name.json > $w/bench_$name.log 2>&1
  echo "== $name"; grep -E "^ +[0-9]+ " $w/bench_$name.log
}
bench backbone_small 5120,640,384,6 "8 64" "$SW4" "$R3" "$R4"
bench draft_small 5120,640,128,3 "8 64" "$SW4" "$R3" "$R4"
bench backbone_4096 5120,640,384,6 "4096" "$ST64" "$ST64R"
bench draft_4096 5120,640,128,3 "4096" "$ST64" "$ST64R"
tar czf $out/p4.tgz -C $out p4_out

#!/usr/bin/env bash
# Probe 3 (session 6): repacked MXFP4 weights (`_rp`). Verify of the repack space (A16W4 and
# A8W4, swapped and staged, natural beside repacked) and the exec [gpu] tests, then A/B of the
# natural default against the same tiles repacked at decode and serving sizes. All output is
# tarred into OUT/p3.tgz (the device tool returns few files). Usage: p3.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s6/probes
w=$out/p3_out; mkdir -p "$w"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
for d in a16w4 a8w4; do
  LIM=150 t $b/bin/moe-tune verify --space $here/p3_repack_space.json --m 64 --dtype $d --cache-dir $cache --json $w/verify_$d.json > $w/verify_$d.log 2>&1
  tail -2 $w/verify_$d.log
done
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
SW4=${s1}t8x8x256_w4_kp1_nk16_wv4_st2_sab_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_ks1_dw0_atomic
RP0=${s1}t8x8x256_w4_kp1_nk16_wv0_st2_sab_rp_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv0_st2_sab_rp_ks1_dw0_atomic
RP4=${s1}t8x8x256_w4_kp1_nk16_wv4_st2_sab_rp_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic
ST=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
STR=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_rp_ks1_dw0_atomic
ST64=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
ST64R=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_rp_ks1_dw0_atomic
bench() {  # bench NAME SHAPE "M..." CONFIG...
  local name=$1 shape=$2 ms=$3; shift 3
  LIM=200 t $b/bin/moe-tune bench --roofline --shape $shape --m $ms --samples 7 --cache-dir $cache --config "$@" --json $w/bench_$name.json > $w/bench_$name.log 2>&1
  echo "== $name"; grep -E "^ +[0-9]+ |^weights" $w/bench_$name.log
}
bench backbone_small 5120,640,384,6 "8 64" "$SW4" "$RP0" "$RP4"
bench backbone_large 5120,640,384,6 "512 4096" "$ST" "$STR" "$ST64" "$ST64R"
bench draft 5120,640,128,3 "64 512" "$SW4" "$RP4" "$ST" "$STR"
bench ep 5120,2304,96,6 "64 512" "$SW4" "$RP4" "$ST" "$STR"
a1=moetune_s1_a8w4_fp8_; a2=moetune_s2_a8w4_fp8_
ASW=${a1}t8x32x256_w4_kp1_nk16_wv4_st2_sab_gi_dw0,${a2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_ks1_dw0_atomic
ARP=${a1}t8x32x256_w4_kp1_nk16_wv4_st2_sab_rp_gi_dw0,${a2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic
AST=${a1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${a2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
ASTR=${a1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_rp_gi_dw0,${a2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_rp_ks1_dw0_atomic
bench a8w4 "5120,640,384,6 --dtype a8w4" "64 512" "$ASW" "$ARP" "$AST" "$ASTR"
LIM=200 t $b/bin/moetune_test_exec "[gpu]" > $w/exec_tests.log 2>&1; tail -2 $w/exec_tests.log
tar czf $out/p3.tgz -C $out p3_out

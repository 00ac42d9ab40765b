#!/usr/bin/env bash
# Session 24's first GPU pass (#13).
#   part sweep:   stage two split over K (ksplit along the grid's z, atomic accumulation) for the
#                 8-token wgmma stage two where it has few CTAs: M = 1, 2, 4 (EP also 8), the
#                 backbone, the draft and EP (A16W4), and M = 1 for A8W4. Per point the default
#                 pair, then the default's stage one with its stage two at ks2 / ks3 / ks5 (EP,
#                 18 k-tiles: ks6), and the one-warpgroup stage two (block_n 64, twice the CTAs)
#                 at ks1 / ks2. At backbone M = 1 the stage two has 240 CTAs of 8 warps, each
#                 running its 5 128-K k-tiles in a row (EP: 18).
#   part runtime: the runtime suite and the Python package's tests with this tree's defaults
#                 (A8W4's from 16 tokens per expert is the _xb + _hb pair since session 23).
# Usage: p1.sh OUT PART...   (carry build/cuda/{bin,lib}); logs archived into OUT.
set -uo pipefail
out=${1:?out}; shift
mkdir -p $out
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
cat $out/gpu.txt
step() {  # name limit cmd...
  local n=$1 l=$2; shift 2; local s=$SECONDS
  timeout $l "$@" > $out/$n.log 2>&1
  echo "$n: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed|passed|Ran |^OK|Error" $out/$n.log | head -6
}
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 200 $b/bin/moe-tune bench --samples 9 --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "M=%s | %s | sort %s s1 %s s2 %s tot %s %s\n", $4, $5, $6, $7, $8, $9, $10}' | sed 's/moetune_s[12]_a[0-9]*w4_[a-z0-9]*_//g; s/`//g'
}
# point: name shape dtype M stage1 stage2 lastsplit
point() {
  local n=$1 shape=$2 dt=$3 M=$4 s1=$5 s2=$6 ksl=$7
  local w4=${s2/t8x128x128_w8/t8x64x128_w4}
  bench $n --shape $shape --dtype $dt --m $M --config default \
    $s1,${s2/_ks1_/_ks2_} $s1,${s2/_ks1_/_ks3_} $s1,${s2/_ks1_/_ks${ksl}_} $s1,$w4 $s1,${w4/_ks1_/_ks2_}
}
A=moetune_s1_a16w4_bf16_; B=moetune_s2_a16w4_bf16_
S2=${B}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
S2K=${B}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic
A8=moetune_s1_a8w4_fp8_; B8=moetune_s2_a8w4_fp8_
S28=${B8}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
for part in "$@"; do
  echo "== $part"
  case $part in
    sweep)
      point bb_M1 5120,640,384,6 a16w4 1 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0 $S2 5
      point bb_M2 5120,640,384,6 a16w4 2 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks2_gi_dw0 $S2 5
      point bb_M4 5120,640,384,6 a16w4 4 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0 $S2 5
      point dr_M1 5120,640,128,3 a16w4 1 ${A}t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0 $S2 5
      point dr_M2 5120,640,128,3 a16w4 2 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0 $S2 5
      point dr_M4 5120,640,128,3 a16w4 4 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_ks2_gi_dw0 $S2 5
      point ep_M1 5120,2304,96,6 a16w4 1 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0 $S2 6
      point ep_M2 5120,2304,96,6 a16w4 2 ${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0 $S2K 6
      point ep_M4 5120,2304,96,6 a16w4 4 ${A}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0 $S2K 6
      point ep_M8 5120,2304,96,6 a16w4 8 ${A}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0 $S2K 6
      point a8bb_M1 5120,640,384,6 a8w4 1 ${A8}t8x32x128_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0 $S28 5
      point a8dr_M1 5120,640,128,3 a8w4 1 ${A8}t8x32x128_w4_kp1_nk16_wv0_st4_wg_ks4_gi_dw0 $S28 5
      point a8ep_M1 5120,2304,96,6 a8w4 1 ${A8}t8x32x128_w4_kp1_nk16_wv0_st4_wg_gi_dw0 $S28 6 ;;
    runtime)
      step runtime 150 $b/bin/moetune_test_runtime
      MOETUNE_LIBRARY=$b/lib step python 120 python3 python/tests/test_fused_moe.py -v ;;
  esac
done
# Everything in one archive (the device returns a limited number of files).
(cd $out && tar czf logs_$(date +%H%M%S).tgz $(ls *.log *.md *.json *.txt 2>/dev/null) && rm -f *.log *.md *.json)

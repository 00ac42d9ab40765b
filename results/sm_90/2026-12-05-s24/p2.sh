#!/usr/bin/env bash
# Session 24's second GPU pass (#13).
#   part ep:     EP (E96 top6 H5120 I2304: stage two reduces 18 128-K k-tiles) with 8-token
#                blocks, M = 4 / 8 / 16 / 32 / 64: the default, then its stage one with the
#                stage two as one warpgroup (block_n 64, twice the CTAs) at ks1 / ks2 / ks3 and
#                as two at ks2 (p1 found the one-warpgroup ks2 ahead at M = 4 and 8, one run);
#                two rounds, the second with the configurations in reverse order.
#   part big:    M = 4096 (64-token blocks): the default's stage two accumulating atomically
#                against the reduce form (each slot's row stored, then summed per token in a
#                fixed order by the rounding kernel), backbone, draft and EP.
#   part gpu:    the whole [gpu] exec suite with this tree's defaults (A8W4's _xb + _hb from 16
#                tokens per expert since session 23).
# Usage: p2.sh OUT PART...   (carry build/cuda/{bin,lib}); logs archived into OUT.
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
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "M=%s | %s | s1 %s s2 %s tot %s %s\n", $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a[0-9]*w4_[a-z0-9]*_//g; s/`//g'
}
A=moetune_s1_a16w4_bf16_; B=moetune_s2_a16w4_bf16_
EP=5120,2304,96,6
for part in "$@"; do
  echo "== $part"
  case $part in
    ep)
      for round in 1 2; do
        for M in 4 8 16 32 64; do
          s1=${A}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0  # the default's stage one at each of these M
          s2=${B}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic
          w4=${B}t8x64x128_w4_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic
          cfgs=(default $s1,${w4} $s1,${w4/_ks1_/_ks2_} $s1,${w4/_ks1_/_ks3_} $s1,${s2/_ks1_/_ks2_})
          if [ $round = 2 ]; then cfgs=($s1,${s2/_ks1_/_ks2_} $s1,${w4/_ks1_/_ks3_} $s1,${w4/_ks1_/_ks2_} $s1,${w4} default); fi
          bench ep_M${M}_r$round --shape $EP --m $M --config "${cfgs[@]}"
        done
      done ;;
    big)
      s1=${A}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_gi_dw0
      s2=${B}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic
      for sh in 5120,640,384,6 5120,640,128,3 $EP; do
        bench big_${sh//,/_} --shape $sh --m 4096 --config default $s1,${s2/_atomic/_reduce} \
          $s1,${B}t64x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_reduce default
      done ;;
    gpu)
      step exec_gpu 340 $b/bin/moetune_test_exec "[gpu]" ;;
  esac
done
(cd $out && tar czf logs_$(date +%H%M%S).tgz $(ls *.log *.md *.json *.txt 2>/dev/null) && rm -f *.log *.md *.json)

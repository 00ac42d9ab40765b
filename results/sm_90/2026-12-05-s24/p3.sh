#!/usr/bin/env bash
# Session 24's third GPU pass (#13), on the tree with the new EP stage-two default.
#   part gpu:  the whole [gpu] exec suite with this tree's defaults (A8W4's _xb + _hb pair from
#              16 tokens per expert since session 23; EP's one-warpgroup split stage two).
#   part ab:   EP, the default (from M = 4 the one-warpgroup stage two split over K in 2) against
#              session 23's default pair, M = 2 / 4 / 8 / 32 / 64, two rounds in reverse order.
#   part w4:   the backbone and the draft (I = 640) at M = 8 / 64 / 128 (8-token blocks, the
#              bounded k16 stage two): the default against its stage two as one warpgroup
#              (block_n 64, ks1), two rounds in reverse order -- whether the EP finding holds
#              without the split where the K loop is short.
# Usage: p3.sh OUT PART...   (carry build/cuda/{bin,lib}); logs archived into OUT.
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
S1W8=${A}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0
S1W4=${A}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0
S2K=${B}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic
S2W4=${B}t8x64x128_w4_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic
for part in "$@"; do
  echo "== $part"
  case $part in
    gpu)
      step exec_gpu 340 $b/bin/moetune_test_exec "[gpu]" ;;
    ab)
      for round in 1 2; do
        for M in 2 4 8 32 64; do
          s1=$S1W8; [ $M = 2 ] && s1=$S1W4
          if [ $round = 1 ]; then cfgs=(default $s1,$S2K); else cfgs=($s1,$S2K default); fi
          bench ab_ep_M${M}_r$round --shape 5120,2304,96,6 --m $M --config "${cfgs[@]}"
        done
      done ;;
    w4)
      for round in 1 2; do
        for sh in 5120,640,384,6 5120,640,128,3; do
          for M in 8 64 128; do
            s1=$S1W8; [ $sh = 5120,640,384,6 ] && [ $M = 8 ] && s1=$S1W4
            if [ $round = 1 ]; then cfgs=(default $s1,$S2W4); else cfgs=($s1,$S2W4 default); fi
            bench w4_${sh//,/_}_M${M}_r$round --shape $sh --m $M --config "${cfgs[@]}"
          done
        done
      done ;;
  esac
done
(cd $out && tar czf logs_$(date +%H%M%S).tgz $(ls *.log *.md *.json *.txt 2>/dev/null) && rm -f *.log *.md *.json)

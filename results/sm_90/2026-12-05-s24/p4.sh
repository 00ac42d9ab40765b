#!/usr/bin/env bash
# Session 24's fourth GPU pass (#13), on the final tree (the bounded 8-token stage two as one
# warpgroup from 0.1 tokens per expert, split over K in 2 where I >= 2048 from 0.2).
#   part gpu:     the whole [gpu] exec suite, the runtime suite and the Python package's tests
#                 with this tree's defaults.
#   part s16:     16-token blocks (6-16 tokens per expert): the default against its stage two
#                 as one warpgroup (block_n 64; launch bound 4 and none) and, at EP (18 k-tiles),
#                 split over K in 2 -- backbone M = 512, draft M = 512, EP M = 128; two rounds in
#                 reverse order. Exploration for the next rule, not a default change.
# Usage: p4.sh OUT PART...   (carry build/cuda/{bin,lib}); logs archived into OUT.
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
S1=${A}t16x64x256_w8_kp1_nk16_wv0_st3_wg_gi_dw0
V4=${B}t16x64x128_w4_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic
V0=${B}t16x64x128_w4_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic
for part in "$@"; do
  echo "== $part"
  case $part in
    gpu)
      step exec_gpu 320 $b/bin/moetune_test_exec "[gpu]"
      step runtime 120 $b/bin/moetune_test_runtime
      MOETUNE_LIBRARY=$b/lib step python 90 python3 python/tests/test_fused_moe.py -v ;;
    s16)
      for round in 1 2; do
        for pt in 5120,640,384,6:512 5120,640,128,3:512 5120,2304,96,6:128; do
          sh=${pt%:*}; M=${pt#*:}
          cfgs=(default $S1,$V4 $S1,$V0)
          [ $sh = 5120,2304,96,6 ] && cfgs+=($S1,${V4/_ks1_/_ks2_})
          if [ $round = 2 ]; then r=(); for ((i=${#cfgs[@]}-1; i>=0; i--)); do r+=(${cfgs[$i]}); done; cfgs=("${r[@]}"); fi
          bench s16_${sh//,/_}_M${M}_r$round --shape $sh --m $M --config "${cfgs[@]}"
        done
      done ;;
  esac
done
(cd $out && tar czf logs_$(date +%H%M%S).tgz $(ls *.log *.md *.json *.txt 2>/dev/null) && rm -f *.log *.md *.json)

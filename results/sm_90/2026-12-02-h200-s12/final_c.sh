#!/usr/bin/env bash
# Session 12, call C (issue #13): the stage kernels let the next kernel start after their main
# loop instead of at their start (call B: stage two's CTAs, placed while stage one ran, were
# badly spread: EP M = 1 69.4 us). The launch-overlap test and the runtime suite
# (device time was short), then docs/performance.md's tables again. Lands in
# OUT/final_c.tgz.
# Usage: final_c.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/final_c; rm -rf $work; mkdir -p $work/perf
# (Device time was short: the launch-overlap test of the exec suite and the runtime suite;
# every bench row below is also checked against the CPU reference.)
for t in "exec:launch overlap*" "runtime:"; do
  s=$SECONDS
  name=${t%%:*}; filter=${t#*:}
  timeout 100 $b/bin/moetune_test_$name ${filter:+"$filter"} > $work/test_$name.log 2>&1
  echo "moetune_test_$name $filter: exit $?, $((SECONDS-s)) s: $(grep -E 'All tests|test cases' $work/test_$name.log | tail -1)"
done
s=$SECONDS
cp docs/performance.md "$work/performance.md"
timeout 260 bash test/performance_table.sh "$b" "$work/performance.md" "$work/perf" > "$work/perf.log" 2>&1
echo "performance_table: exit $?, $((SECONDS-s)) s" | tee -a "$work/perf.log"
tar czf "$out/final_c.tgz" -C $work .
sed -n '/generated:begin/,/^### backbone$/p' "$work/performance.md" | grep "^| " | cut -d"|" -f2-6,11 | cut -c1-120

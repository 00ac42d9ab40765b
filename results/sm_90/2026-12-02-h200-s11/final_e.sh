#!/usr/bin/env bash
# Session 11, call E, with the new sm_90 A16W4 default (issues #13, #15): the 16-bucket tune of
# the DeepSeek-V4.1-Flash TP4 A16W4 list again (cold code cache; the table to publish, tuned
# against the default the runtime now uses), then docs/performance.md's tables regenerated
# by test/performance_table.sh. Lands in OUT/final_e.tgz.
# Usage: final_e.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/final_e; rm -rf $work; mkdir -p $work/tune/report $work/perf
s=$SECONDS
timeout 330 "$b/bin/moe-tune" tune -i shapes/dsv41_flash_tp4_a16w4_untuned_fmoe.csv \
  -o "$work/tune/dsv41_flash_tp4_a16w4_tuned_fmoe.csv" --report "$work/tune/report" \
  --cache-dir /tmp/mt-cache-final > "$work/tune/tune.log" 2>&1
echo "tune: exit $?, $((SECONDS-s)) s" | tee -a "$work/tune/tune.log"
grep -E "rows written|compiled" "$work/tune/tune.log" | cut -c1-200
s=$SECONDS
cp docs/performance.md "$work/performance.md"
timeout 250 bash test/performance_table.sh "$b" "$work/performance.md" "$work/perf" > "$work/perf.log" 2>&1
echo "performance_table: exit $?, $((SECONDS-s)) s" | tee -a "$work/perf.log"
tar czf "$out/final_e.tgz" -C $work .
sed -n '/generated:begin/,/^### backbone$/p' "$work/performance.md" | head -40 | cut -c1-240

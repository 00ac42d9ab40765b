#!/usr/bin/env bash
# Session 7's final GPU pass, part 1 (one device call): the [gpu] test suites on the committed
# tree (fragment decode sections and the out-of-range-scale gate included) and the performance
# table (docs/performance.md's generated part + every bench JSON). Lands in OUT/final and is
# tarred into OUT/final.tgz. Usage: final_pass.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
w=$out/final; mkdir -p "$w"
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
STEP_LIMIT=250 bash test/gpu_pass.sh "$b" "$w/tests" tests > "$w/gpu_pass.log" 2>&1
grep -E "All tests|FAILED|failed|test cases|exit" "$w/gpu_pass.log" | tail -12
cp docs/performance.md "$w/performance.md"
LIM=300 t bash test/performance_table.sh "$b" "$w/performance.md" "$w/json" > "$w/performance_table.log" 2>&1
tail -3 "$w/performance_table.log"
sed -n '/### Summary/,/### backbone/p' "$w/performance.md" | grep "^|" | cut -d'|' -f2-12
tar czf $out/final.tgz -C $out final

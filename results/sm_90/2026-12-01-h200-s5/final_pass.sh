#!/usr/bin/env bash
# Session 5's final GPU pass: the [gpu] suites (test/gpu_pass.sh tests) and the performance
# table (test/performance_table.sh) on a copy of docs/performance.md. Usage: final_pass.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
mkdir -p "$out/json"
start=$SECONDS
bash test/gpu_pass.sh "$b" "$out" tests > "$out/gpu_tests.log" 2>&1
echo "gpu_pass tests: exit $?, $((SECONDS - start)) s"
grep -E "All tests passed|test cases|FAILED|failed" "$out/gpu_tests.log" | head -20
cp docs/performance.md "$out/performance.md"
start=$SECONDS
bash test/performance_table.sh "$b" "$out/performance.md" "$out/json" > "$out/performance_table.log" 2>&1
echo "performance_table: exit $?, $((SECONDS - start)) s"
sed -n '/### Summary/,/^### backbone$/p' "$out/performance.md" | head -40

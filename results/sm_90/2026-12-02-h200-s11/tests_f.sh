#!/usr/bin/env bash
# Session 11, call F: every [gpu] suite with the new sm_90 A16W4 default (test/gpu_pass.sh
# tests: the gates, GpuSampler, the runtime, the Python package, the example). Lands in
# OUT/tests_f.tgz.
# Usage: tests_f.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
work=/tmp/tests_f; rm -rf $work; mkdir -p $work
s=$SECONDS
STEP_LIMIT=200 timeout 330 bash test/gpu_pass.sh "$b" "$work/gpu" tests > "$work/gpu_pass.log" 2>&1
echo "gpu_pass tests: exit $?, $((SECONDS-s)) s" | tee -a "$work/gpu_pass.log"
grep -E "^\+|exit|passed|failed|FAILED" "$work/gpu_pass.log" "$work"/gpu/*.log 2>/dev/null | grep -v "^\[" | cut -c1-220 | tail -30
tar czf "$out/tests_f.tgz" -C $work .

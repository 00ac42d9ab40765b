#!/usr/bin/env bash
# Session 10's final GPU pass, part A: every [gpu] suite with the wgmma default
# (test/gpu_pass.sh tests: the gates, GpuSampler, the runtime with wgmma-tiled prepared
# weights, the Python package, the example on the published table) and requalify of the
# published table against the new default. Everything lands in OUT/final_a.tgz.
# Usage: final_a.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
work=/tmp/final_a; rm -rf $work; mkdir -p $work
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=400 STEP_LIMIT=200 t bash test/gpu_pass.sh "$b" "$work/gpu" tests > "$work/gpu_pass.log" 2>&1
grep -E "^\+|exit|passed|failed|FAILED" "$work/gpu_pass.log" | grep -v "^\[" | cut -c1-200 | tail -30
LIM=160 STEP_LIMIT=150 t bash test/gpu_pass.sh "$b" "$work/req" requalify > "$work/requalify_pass.log" 2>&1
grep -E "qualif|exit" "$work/requalify_pass.log" | cut -c1-200 | tail -20
tar czf "$out/final_a.tgz" -C $work .

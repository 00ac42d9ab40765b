#!/usr/bin/env bash
# Session 11, call C (issue #15): calibrate of tune's design with the futility stop, at the
# calibrate default (backbone M = 8, its default pair): 400 null trials, 60 per slowdown of
# 1, 2 and 3 %. Every trial measures every block; the stop's verdicts and cost are derived
# from the same samples. Everything lands in OUT/calibrate_c.tgz.
# Usage: calibrate_c.sh BUILD OUT [LIMIT]
set -uo pipefail
b=${1:?build}; out=${2:?out}; limit=${3:-540}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/calibrate_c; rm -rf $work; mkdir -p $work
s=$SECONDS
timeout "$limit" "$b/bin/moe-tune" calibrate --trials 400 --power-trials 60 --slowdowns 1,2,3 \
  --json $work/calibrate_m8.json --cache-dir /tmp/mt-cache-tune > $work/calibrate.log 2>&1
echo "(exit $?, $((SECONDS-s)) s)" | tee -a $work/calibrate.log
grep -v "^trial " $work/calibrate.log | tail -45
xz -9 $work/calibrate_m8.json
tar czf "$out/calibrate_c.tgz" -C $work .

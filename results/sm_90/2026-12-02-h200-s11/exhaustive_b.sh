#!/usr/bin/env bash
# Session 11, call B (issue #15): the reference the fast screen is checked against: tune
# --exhaustive-screen (no racing, no first cut, every screen sample at the sampler's 16
# launches) of backbone tokens 8, 64, 512 and 1024 (four_untuned.csv, the four lines of the
# 16-bucket list). Everything lands in OUT/exhaustive_b.tgz.
# Usage: exhaustive_b.sh BUILD OUT [LIMIT]
set -uo pipefail
b=${1:?build}; out=${2:?out}; limit=${3:-480}
here=$(dirname "$0")
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/exhaustive_b; rm -rf $work; mkdir -p $work/report
s=$SECONDS
timeout "$limit" "$b/bin/moe-tune" tune --exhaustive-screen -i "$here/four_untuned.csv" \
  -o "$work/four_tuned_exhaustive.csv" --report "$work/report" \
  --cache-dir /tmp/mt-cache-tune > "$work/tune_exhaustive.log" 2>&1
echo "(exit $?, $((SECONDS-s)) s)" | tee -a "$work/tune_exhaustive.log"
grep -E "screened|confirmation|correct at|compiled|qualified" "$work/tune_exhaustive.log" | cut -c1-220 | tail -30
tar czf "$out/exhaustive_b.tgz" -C $work .

#!/usr/bin/env bash
# Session 35's second call (main's tree with sort_halves, build/cuda): the [gpu] gate section of
# the stage two reading the sort in halves on the A16W4 and A8W4 backbones, then the `_hs` pair
# near 96 tokens per expert (halves_more_pairs.txt). Usage: call2.sh OUT.
set -uo pipefail
out=${1:?out}; mkdir -p "$out/gate"
export LD_LIBRARY_PATH=build/cuda/lib XDG_CACHE_HOME=$PWD/.cache
for t in "gates: A16W4 on the DSv4.1-Flash backbone*" "gates: A8W4 on the DSv4.1-Flash backbone"; do
  s=$SECONDS
  timeout 150 build/cuda/bin/moetune_test_exec "$t" -c "a stage two reading the 128-token sort in halves" > "$out/gate/$(echo "$t" | tr -c 'A-Za-z0-9\n' _).log" 2>&1
  echo "$t: exit $?, $((SECONDS - s)) s"; tail -3 "$out/gate/"*"$(echo "$t" | tr -c 'A-Za-z0-9\n' _ | head -c 20)"*.log
done
BUILD=build/cuda PAIRS_FILE=results/sm_90/2026-12-07-s35/halves_more_pairs.txt \
  timeout 250 bash results/sm_90/2026-12-05-s25/next_gpu.sh "$out/pairs" pairs
(cd "$out" && find . -name code_cache.tgz -delete && tar czf call2.tgz gate pairs && rm -rf gate pairs)

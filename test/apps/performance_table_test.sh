#!/usr/bin/env bash
# test/performance_table.sh without a GPU (SKIP_BENCH=1) on session 20's H200 bench files: the
# summary compares against the peer's H200 figures only where the bench ran on an H200. The
# same files relabelled as an H100's must show the peer's figure without a ratio or a verdict
# from it, while the roofline columns stay as they were.
# Usage: performance_table_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?source dir}
json=$src/results/sm_90/2026-12-04-h200-s20/final_out/final_b/perf
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/h200" "$tmp/h100"
cp "$json"/bench_roofline_* "$tmp/h200/"
cp "$json"/bench_roofline_* "$tmp/h100/"
for f in "$tmp"/h100/*.json; do
  python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); b["device"] = "NVIDIA H100 80GB HBM3"; json.dump(b, open(sys.argv[1], "w"))' "$f"
done
fail() { echo "FAIL: $*" >&2; exit 1; }
SKIP_BENCH=1 bash "$src/test/performance_table.sh" /nonexistent "$tmp/h200.md" "$tmp/h200" > /dev/null
SKIP_BENCH=1 bash "$src/test/performance_table.sh" /nonexistent "$tmp/h100.md" "$tmp/h100" > /dev/null
row() { grep -F "| $2 | a16w4 | $3 |" "$1" | head -1; }
grep -q '^NVIDIA H200, driver' "$tmp/h200.md" || fail "the H200 table does not name its card"
grep -q '^NVIDIA H100 80GB HBM3, driver' "$tmp/h100.md" || fail "the H100 table does not name its card"
# On the peer's card: the ratio (481.3 / 415.6) and its verdict.
row "$tmp/h200.md" backbone 64 | grep -qF '| 481.3 | 1.16× | no |' || fail "H200 backbone M=64: $(row "$tmp/h200.md" backbone 64)"
# The draft at M = 1 meets every target on the H200 (no roofline target there, 3.02x the peer).
row "$tmp/h200.md" draft 1 | grep -qF '| 60.3 | 3.02× | yes |' || fail "H200 draft M=1: $(row "$tmp/h200.md" draft 1)"
# Elsewhere: the peer's figure named as the H200's, no ratio, and the verdict from the roofline alone.
row "$tmp/h100.md" backbone 64 | grep -qF '| 481.3 (H200) | – (bench on NVIDIA H100 80GB HBM3) | no |' ||
  fail "H100 backbone M=64: $(row "$tmp/h100.md" backbone 64)"
row "$tmp/h100.md" draft 1 | grep -qF '| 60.3 (H200) | – (bench on NVIDIA H100 80GB HBM3) | yes |' ||
  fail "H100 draft M=1: $(row "$tmp/h100.md" draft 1)"
# The roofline columns are the same in both.
for p in "backbone 512" "ep 4096" "draft 8"; do
  set -- $p
  a=$(row "$tmp/h200.md" "$1" "$2" | cut -d'|' -f5-9) b=$(row "$tmp/h100.md" "$1" "$2" | cut -d'|' -f5-9)
  [[ -n "$a" && "$a" == "$b" ]] || fail "$p: roofline columns differ: '$a' vs '$b'"
done
echo "performance table: peer compared on the H200 only"

#!/usr/bin/env bash
# test/performance_table.sh without a GPU (SKIP_BENCH=1) on session 20's H200 bench files: the
# summary compares against the peer's H200 figures only where the bench ran on an H200. The
# same files relabelled as an H100's must show the peer's figure without a ratio or a verdict
# from it, while the roofline columns stay as they were. With the peer timed on the H100 itself
# (PEER_CARD_CSV, test/peer_bench.py's CSV) the H100 table compares against that instead: the best
# num_warps per point, rows of another card or without a time ignored.
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
# The peer timed on the H100: backbone M = 64 at two num_warps (the better, 450.0, listed first, counts), draft
# M = 1, a row from another card (EP M = 8) and a point that did not run (draft M = 8).
cat > "$tmp/peer_h100.csv" <<'EOF'
shape,M,num_warps,us,rel_err,card,triton_version,triton_kernels_location,layout,routing,note
backbone,64,8,450.0,,NVIDIA H100 80GB HBM3,3.6.0,/x,hopper,torch,
backbone,64,4,500.0,,NVIDIA H100 80GB HBM3,3.6.0,/x,hopper,torch,
draft,1,4,80.0,,NVIDIA H100 80GB HBM3,3.6.0,/x,hopper,torch,
ep,8,4,100.0,,NVIDIA H200,3.6.0,/x,hopper,torch,
draft,8,4,,,NVIDIA H100 80GB HBM3,3.6.0,/x,hopper,torch,
EOF
mkdir -p "$tmp/h100peer" && cp "$tmp"/h100/bench_roofline_* "$tmp/h100peer/"
PEER_CARD_CSV="$tmp/peer_h100.csv" SKIP_BENCH=1 bash "$src/test/performance_table.sh" /nonexistent "$tmp/h100peer.md" "$tmp/h100peer" > /dev/null
row() { grep -F "| $2 | a16w4 | $3 |" "$1" | head -1; }
grep -q '^NVIDIA H200, driver' "$tmp/h200.md" || fail "the H200 table does not name its card"
grep -q '^NVIDIA H100 80GB HBM3, driver' "$tmp/h100.md" || fail "the H100 table does not name its card"
# expect TABLE SHAPE M CELLS: the a16w4 row of SHAPE at M in TABLE (h200, h100, h100peer) holds CELLS.
expect() {
  row "$tmp/$1.md" "$2" "$3" | grep -qF "$4" || fail "$1 $2 M=$3: '$(row "$tmp/$1.md" "$2" "$3")' lacks '$4'"
}
# On the peer's card: the ratio (481.3 / 415.6) and its verdict.
expect h200 backbone 64 '| 481.3 | 1.16× | no |'
# The draft at M = 1 meets every target on the H200 (no roofline target there, 3.02x the peer).
expect h200 draft 1 '| 60.3 | 3.02× | yes |'
# Elsewhere: the peer's figure named as the H200's, no ratio, and the verdict from the roofline alone.
expect h100 backbone 64 '| 481.3 (H200) | – (bench on NVIDIA H100 80GB HBM3) | no |'
expect h100 draft 1 '| 60.3 (H200) | – (bench on NVIDIA H100 80GB HBM3) | yes |'
# The peer timed on the same card: its best num_warps, a ratio (450.0 / 415.6) and a verdict.
expect h100peer backbone 64 '| 450.0 (same card) | 1.08× | no |'
expect h100peer draft 1 '| 80.0 (same card) | 4.00× | yes |'
# Another card's row (EP M = 8) and a row without a time (draft M = 8): the H200 figure, no ratio.
expect h100peer ep 8 '| 300.5 (H200) | – (bench on NVIDIA H100 80GB HBM3) |'
expect h100peer draft 8 '| 88.0 (H200) | – (bench on NVIDIA H100 80GB HBM3) |'
# The roofline columns are the same in both.
for p in "backbone 512" "ep 4096" "draft 8"; do
  set -- $p
  a=$(row "$tmp/h200.md" "$1" "$2" | cut -d'|' -f5-9) b=$(row "$tmp/h100.md" "$1" "$2" | cut -d'|' -f5-9)
  [[ -n "$a" && "$a" == "$b" ]] || fail "$p: roofline columns differ: '$a' vs '$b'"
done
echo "performance table: the peer compared on its own card only (FACTS.md's figures on the H200, a timed peer on the card it ran on)"

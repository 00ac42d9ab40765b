#!/usr/bin/env bash
# Regenerates the measured part of docs/performance.md on a GPU machine: `moe-tune bench
# --roofline` for the DeepSeek-V4.1-Flash TP4 backbone, the draft model and the EP shape of
# FACTS.md (A16W4, cold weights, uniform routing), plus A8W4 on the backbone (with its own
# alternatives, below). Each shape runs the default configuration (session 11: the wgmma main
# loop from 0.04 tokens per expert, 8-token blocks below 6; session 12: A8W4's at every size)
# with overlapped launches, and fixed alternatives: session
# 9's default pairs (the 8-token swapped pair, the 16- and 32-token fragment-decode staged
# pairs), session 10's 8-token wgmma pair (two warpgroups in stage one) and the 16- and
# 64-token wgmma pairs, session 14's 8-token default and session 15's at M = 1 (the swapped
# stage one with the 8-token wgmma stage two; wg8_s14 is also sessions 16-18's backbone M = 1 default, whose stage
# one session 19's default splits over K in a cluster), sessions 15-17's 8- and 16-token defaults (the
# 64-K decode where session 18's default takes the k16 one) and sessions 15-19's 64-token pair
# (two CTAs per SM where session 20's takes three) and sessions 18-23's 8-token pair from 0.15 tokens
# per expert (wg8_s18: the two-warpgroup stage two where session 24's has one) and session 27's 8-, 16- and
# 64-token pairs with the blocks on x (wg8_s27, wg16_s27, wg64_s20: session 28's default runs them
# tile-major), so the table shows what each main loop buys at
# every point, every row
# against the roofline of ceilings measured in the same run; the backbone's default also with
# serial launches (--no-launch-overlap: what the overlap buys). A summary against the MXFP4 peer
# (test/peer_figures.csv, FACTS.md's triton_kernels figures) and issue #13's targets comes first
# (performance_summary.py).
# The tables replace everything between the "generated:begin" and "generated:end" markers of
# OUT.md; the hand-written analysis around them stays.
# Each bench run keeps its JSON and its Markdown table in JSON_DIR; SKIP_BENCH=1 rebuilds OUT.md
# from those files without a GPU (e.g. after a change to the summary), ONLY=NAME reruns the one
# bench NAME (backbone, backbone_16384, draft, ep, backbone_a8w4, backbone_serial) and takes the
# others from JSON_DIR. PEER_CARD_CSV=FILE (test/peer_bench.py's CSV from the same card) adds
# the peer measured on that card to the summary.
# Usage: test/performance_table.sh BUILD_DIR OUT.md [JSON_DIR]
set -euo pipefail
build=${1:?build dir}
out=${2:?markdown output}
json_dir=${3:-$(dirname "$out")}
export LD_LIBRARY_PATH=$build/lib:${LD_LIBRARY_PATH:-}
cd "$(dirname "$0")/.."
mkdir -p "$json_dir"
s1=moetune_s1_a16w4_bf16_
s2=moetune_s2_a16w4_bf16_
swapped8=${s1}t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic
fd16=${s1}t16x64x128_w4_kp1_nk16_wv0_st3_stg_fd_rp_gi_dw0,${s2}t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_rp_ks1_dw0_atomic
fd32=${s1}t32x64x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_rp_ks1_dw0_atomic
staged128=${s1}t128x64x64_w8_kp1_nk16_wv2_st3_stg_rp_gi_dw0,${s2}t128x128x64_w8_kp1_nk16_wv2_st3_stg_rp_ks1_dw0_reduce
wg8_s10=${s1}t8x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
wg8_s14=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic  # session 14's default; sessions 16-18's at backbone M = 1 (session 19 splits its stage one's K)
mixed1_s15=${s1}t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic  # session 15's at M = 1
wg16=${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
wg64=${s1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
wg8_s15=${s1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_ks1_dw0_atomic  # sessions 15-17's from 0.15
wg16_s15=${s1}t16x64x256_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic  # sessions 15-17's 16-token
wg64_s15=${s1}t64x64x128_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic  # sessions 15-19's 64-token (2 CTAs per SM)
wg8_s18=${s1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic  # sessions 18-23's from 0.15 (two-warpgroup stage two; session 24's is one warpgroup)
wg8_s27=${s1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_gi_dw0,${s2}t8x64x128_w4_kp1_nk16_wv4_st3_wg_k16_ks1_dw0_atomic  # sessions 24-27's from 0.15 (blocks on x)
wg16_s27=${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t16x64x128_w4_kp1_nk16_wv0_st3_wg_k16_ks1_dw0_atomic  # session 27's 16-token from 7 per expert (blocks on x)
wg64_s20=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_ks1_dw0_atomic  # sessions 20-27's 64-token (blocks on x)
wg64_s28=${s1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_tm_ks1_dw0_atomic  # session 28's 64-token (tile-major); EP's default from 128 per expert is session 29's 128-token pair on three warpgroups
# A8W4 (fp8 activations): session 9's default pairs (the 8-token swapped pair with per-element
# fp8 decode, the fragment-decode pairs into e4m3 MMAs) and the e4m3 wgmma pairs.
a1=moetune_s1_a8w4_fp8_
a2=moetune_s2_a8w4_fp8_
a8_swapped8=${a1}t8x32x256_w4_kp1_nk16_wv4_st2_sab_rp_gi_dw0,${a2}t8x64x128_w4_kp1_nk16_wv4_st2_sab_rp_ks1_dw0_atomic
a8_fd16=${a1}t16x64x128_w4_kp1_nk16_wv0_st3_stg_fd_gi_dw0,${a2}t16x128x64_w4_kp1_nk16_wv0_st4_stg_fd_ks1_dw0_atomic
a8_fd32=${a1}t32x64x64_w4_kp1_nk16_wv4_st3_stg_fd_gi_dw0,${a2}t32x128x64_w4_kp1_nk16_wv4_st4_stg_fd_ks1_dw0_atomic
a8_wg16=${a1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${a2}t16x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
a8_wg64=${a1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${a2}t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
a8_wg8_s11=${a1}t8x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${a2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic  # session 11's from 0.1
# Session 21's pairs keeping h in bf16 (`_hb`): the A8W4 default's stage one at 8, 16 and 64
# tokens writing h as bf16, and as stage two A16W4's default stage two at the same block_m.
a8_hb8=${a1}t8x32x128_w4_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${a2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
a8_hb16=${a1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${a2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_ks1_dw0_atomic
a8_hb64=${a1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_hb_gi_dw0,${a2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
# Session 22's pairs with both stages compiled as the A16W4 default's kernels: stage one
# reading x upcast to bf16 (`_xb`) and both keeping h in bf16, at 8 (one and two warpgroups),
# 16 and 64 tokens, and at M = 1 the split stage one.
a8_xh1=${a1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_hb_xb_ks4_gi_dw0,${a2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_hb_ks1_dw0_atomic
a8_xh8=${a1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_hb_xb_gi_dw0,${a2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
a8_xh8w=${a1}t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_hb_xb_gi_dw0,${a2}t8x128x128_w8_kp1_nk16_wv4_st3_wg_k16_hb_ks1_dw0_atomic
a8_xh16=${a1}t16x64x256_w8_kp1_nk16_wv0_st3_wg_hb_xb_gi_dw0,${a2}t16x128x128_w8_kp1_nk16_wv0_st3_wg_k16_hb_ks1_dw0_atomic
a8_xh64=${a1}t64x64x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_xb_gi_dw0,${a2}t64x128x128_w8_kp1_nk16_wv3_st3_wg_k16_hb_ks1_dw0_atomic
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
bench() {  # bench NAME ARGS...: one bench run, its JSON and Markdown table kept in JSON_DIR
  local name=$1; shift
  if [[ "${SKIP_BENCH:-0}" == 1 || ( -n "${ONLY:-}" && "$ONLY" != "$name" ) ]]; then
    [[ -f "$json_dir/bench_roofline_$name.json" && -f "$json_dir/bench_roofline_$name.md" ]] ||
      { echo "SKIP_BENCH=1: $json_dir/bench_roofline_$name.{json,md} missing" >&2; rc=1; }
    return
  fi
  "$build/bin/moe-tune" bench --roofline "$@" --json "$json_dir/bench_roofline_$name.json" \
    --markdown "$json_dir/bench_roofline_$name.md" || rc=1
}
bench backbone --shape 5120,640,384,6 --m 1 8 64 512 4096 --samples 7 --config default "$swapped8" "$fd16" "$fd32" "$wg8_s10" "$wg8_s14" "$wg16" "$wg64" "$mixed1_s15" "$wg8_s15" "$wg16_s15" "$wg64_s15" "$wg8_s18" "$wg8_s27" "$wg16_s27" "$wg64_s20"
bench backbone_16384 --shape 5120,640,384,6 --m 16384 --samples 3 --config default "$staged128" "$wg64_s15" "$wg64_s20"
bench draft --shape 5120,640,128,3 --m 1 8 64 512 4096 --samples 7 --config default "$swapped8" "$fd16" "$fd32" "$wg8_s10" "$wg8_s14" "$wg16" "$wg64" "$mixed1_s15" "$wg8_s15" "$wg16_s15" "$wg64_s15" "$wg8_s18" "$wg8_s27" "$wg16_s27" "$wg64_s20"
bench ep --shape 5120,2304,96,6 --m 1 8 64 512 4096 --samples 7 --config default "$swapped8" "$fd16" "$fd32" "$wg8_s10" "$wg8_s14" "$wg16" "$wg64" "$mixed1_s15" "$wg8_s15" "$wg16_s15" "$wg64_s15" "$wg8_s18" "$wg8_s27" "$wg16_s27" "$wg64_s20" "$wg64_s28"
bench backbone_a8w4 --shape 5120,640,384,6 --dtype a8w4 --m 1 8 64 512 4096 --samples 7 --config default "$a8_swapped8" "$a8_fd16" "$a8_fd32" "$a8_wg8_s11" "$a8_wg16" "$a8_wg64" "$a8_hb8" "$a8_hb16" "$a8_hb64" "$a8_xh1" "$a8_xh8" "$a8_xh8w" "$a8_xh16" "$a8_xh64"
bench backbone_serial --shape 5120,640,384,6 --m 1 8 64 512 4096 --samples 7 --config default --no-launch-overlap
{
  echo "### Summary: the best measured pair per point against the MXFP4 peer and the targets"
  echo
  echo "Peer: FACTS.md's triton_kernels (matmul_ogs) figures on the H200, A16W4 only (compared only"
  echo "where this run's card is an H200 too), or the peer timed on this run's card by"
  echo "test/peer_bench.py (PEER_CARD_CSV; marked \"same card\"); targets from issue #13. This run's card:"
  python3 -c 'import json, sys; b = json.load(open(sys.argv[1])); print(b["device"] + ", driver " + b["driver"] + ", " + b["compiler"] + ".")' \
    "$json_dir/bench_roofline_backbone.json" || rc=1
  echo
  peer_card=()
  [[ -n "${PEER_CARD_CSV:-}" && -s "${PEER_CARD_CSV:-}" ]] && peer_card=(--peer-card "$PEER_CARD_CSV")
  python3 test/performance_summary.py "${peer_card[@]}" test/peer_figures.csv \
    "$json_dir"/bench_roofline_{backbone,backbone_16384,draft,ep,backbone_a8w4}.json || rc=1
  echo
  for name in backbone backbone_16384 draft ep backbone_a8w4 backbone_serial; do
    echo "### $name"
    echo
    tail -n +3 "$json_dir/bench_roofline_$name.md"
    echo
  done
} >"$tmp/generated.md"
# Splice between the markers (a file without them gets the tables appended under them).
if ! grep -q '^<!-- generated:begin' "$out" 2>/dev/null; then
  printf '\n<!-- generated:begin (test/performance_table.sh; do not edit by hand) -->\n<!-- generated:end -->\n' >>"$out"
fi
awk -v gen="$tmp/generated.md" '
  /^<!-- generated:begin/ { print; while ((getline line < gen) > 0) print line; skip = 1; next }
  /^<!-- generated:end/ { skip = 0 }
  !skip { print }' "$out" >"$tmp/out.md"
cp "$tmp/out.md" "$out"
exit $rc

#!/usr/bin/env bash
# Session 37's second call (the first got an H100: call.sh, c1 in the README).
# On an H200: docs/performance.md's table first (~360 s), then the one-warpgroup 16-token stage
# one pairs (s1_wg1_pairs.txt), then Nsight Compute with the SASS page (part profsrc) on the
# default's stage kernels at backbone M = 512.
# On another card: the pairs, then part profsrc at draft M = 512 and backbone M = 512 (the
# 16-token loops' instruction mix and stalls per SASS line; session 32's page is the 8-token
# loop's at M = 8).
# Usage: call2.sh OUT [seconds]; carry as call.sh.
source results/sm_90/2026-12-07-s37/call_parts.sh "$@"
pairs=results/sm_90/2026-12-07-s37/s1_wg1_pairs.txt
case $card in
  *H200*)
    run_parts $(($(left) - 20)) t_table table
    mv "$out/t_table/performance.md" "$out/t_table/table_json.tgz" "$out/" 2>/dev/null
    PAIRS_FILE=$pairs run_parts $(($(left) - 20)) w_pairs pairs
    PROF_POINTS="5120,640,384,6:512" run_parts $(($(left) - 10)) p_src profsrc ;;
  *)
    PAIRS_FILE=$pairs run_parts $(($(left) - 20)) w_pairs pairs
    PROF_POINTS="5120,640,128,3:512 5120,640,384,6:512" run_parts $(($(left) - 10)) p_src profsrc ;;
esac
pack_parts

#!/usr/bin/env bash
# Session 37's call, for whichever card comes (session 36 asked seven times for an H200 and got
# an H100 four times).
# On an H200: session 36's call_h200.sh order, with the occupancy pairs moved up (they decide a
# kernel question; the H100 answers it too, below):
#   0. docs/performance.md's table regenerated (next_gpu.sh part table, ~360 s);
#   1. the 16-token stage one with 2-4 CTAs per SM at M = 512 (../2026-12-07-s36/s1_16tok_occupancy_pairs.txt);
#   2. Nsight Compute on the default's stage kernels at backbone M = 64 and 512;
#   3. session 35's `_hs` default pairs and session 33's H200-defaults pairs.
# On another card: 1 first (the 16-token stage one at M = 512 takes the same time on the H100 and
# the H200, session 36: it is held on the SM side, which both cards share, so a change to it
# shows on either; on the H100 the backbone's runs near that card's copy rate, the draft's does
# not), then the exec suite's [gpu] cases (next_gpu.sh part gpupart) for the rest.
# Usage: call.sh OUT [seconds]; carry build/cuda/bin/moe-tune, build/cuda/lib and .cache (a code
# cache holding the kernels these parts name: the device compiles the rest).
source results/sm_90/2026-12-07-s37/call_parts.sh "$@"
occ=results/sm_90/2026-12-07-s36/s1_16tok_occupancy_pairs.txt
case $card in
  *H200*)
    run_parts $(($(left) - 20)) t_table table
    mv "$out/t_table/performance.md" "$out/t_table/table_json.tgz" "$out/" 2>/dev/null
    PAIRS_FILE=$occ run_parts $(($(left) - 20)) e_occ pairs
    PROF_POINTS="5120,640,384,6:64 5120,640,384,6:512" run_parts $(($(left) - 20)) b_prof prof
    PAIRS_FILE=results/sm_90/2026-12-07-s35/halves_default_pairs.txt run_parts $(($(left) - 20)) a_default pairs
    PAIRS_FILE=results/sm_90/2026-12-06-s33/h200_defaults_pairs.txt run_parts $(($(left) - 10)) c_h200 pairs ;;
  *)
    PAIRS_FILE=$occ run_parts $(($(left) - 20)) e_occ pairs
    GPU_PART_LIMIT=$(($(left) - 40)) run_parts $(($(left) - 10)) g_exec gpupart ;;
esac
pack_parts

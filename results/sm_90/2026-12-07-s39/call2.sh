#!/usr/bin/env bash
# Session 39's second call: build/cuda/bin/moe-tune and moetune_test_exec built with the new
# default (autotune/search/default_config.cpp: the one-warpgroup 8-token stage one below 4
# tokens per expert instead of 0.15).
#   1. threshold_pairs.txt (part pairs): the new default against the stage one it replaces.
#   2. The exec suite's A16W4 backbone gates case (boundary M, routing modes, sentinels, graph
#      replay of the default pairs at the suite's M values) on the new default.
# Usage: call2.sh OUT [seconds]; carry build/cuda/bin/{moe-tune,moetune_test_exec} and build/cuda/lib.
source results/sm_90/2026-12-07-s37/call_parts.sh "$@"
PAIRS_FILE=results/sm_90/2026-12-07-s39/threshold_pairs.txt run_parts $(($(left) - 150)) a_threshold pairs
GPU_TESTS="gates: A16W4 on the DSv4.1-Flash backbone*" GPU_PART_LIMIT=$(($(left) - 25)) run_parts $(($(left) - 15)) b_gates gpupart
pack_parts

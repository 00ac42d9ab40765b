#!/usr/bin/env bash
# Session 40's call, for whichever card comes.
#   1. m1_stream_probe (this folder): the backbone M = 1 stages as plain streams of their
#      weights and the floor of a chain of launches, to decide on a token-major GEMV form.
#   2. moe-tune bench at backbone M = 1 and 2, default configuration: the stages it would replace.
#   3. Session 39's prepared second call: threshold_pairs.txt (the new 8-token stage one default
#      against the one it replaced, between session 39's points) and the exec suite's A16W4
#      backbone gates case on the new default.
# Usage: call.sh OUT [seconds]; carry build/probe, build/cuda/bin/{moe-tune,moetune_test_exec}
# and build/cuda/lib.
source results/sm_90/2026-12-07-s37/call_parts.sh "$@"
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
echo "== probe"
timeout 90 build/probe/m1_stream_probe 2>&1 | tee "$out/m1_stream_probe.txt"
echo "== bench M = 1, 2 ($(left) s left)"
timeout 90 $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 1 2 --config default \
  --cache-dir .cache/moe-tune --json "$out/bench_m1.json" > "$out/bench_m1.log" 2>&1
echo "bench exit $?"; grep -E "^ +[0-9]+ " "$out/bench_m1.log"
PAIRS_FILE=results/sm_90/2026-12-07-s39/threshold_pairs.txt run_parts $(($(left) - 150)) a_threshold pairs
GPU_TESTS="gates: A16W4 on the DSv4.1-Flash backbone*" GPU_PART_LIMIT=$(($(left) - 25)) run_parts $(($(left) - 15)) b_gates gpupart
pack_parts

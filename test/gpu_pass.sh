#!/usr/bin/env bash
# One whole GPU pass on a machine with an NVIDIA GPU, from a build folder made elsewhere:
# the [gpu] test suites, the compile benchmark (1 thread vs all cores, cold vs warm cache),
# `moe-tune verify` over a search space, and `moe-tune bench` of the default configuration.
# Usage: test/gpu_pass.sh BUILD_DIR OUT_DIR [STEPS] [DTYPES]  (STEPS: comma list of
#        tests,compile,verify,bench,calibrate,requalify; default the first four. DTYPES for
#        verify: default "a16w4 a8w4 bf16"). calibrate: CAL_TRIALS null trials (default 400)
#        and CAL_POWER_TRIALS per slowdown (default 100) at CAL_SLOWDOWNS (default 1,2,3) on
#        the backbone at M = 8. requalify: every row of REQUALIFY_TABLE (default the published
#        sm_90 table).
#        Logs and JSON land in OUT_DIR. STEP_LIMIT (seconds, default 900) bounds each command.
set -uo pipefail
build=${1:?build dir}
out=${2:?output dir}
steps=${3:-tests,compile,verify,bench}
cache=${CACHE_DIR:-/tmp/mt-cache-full}
dtypes=${4:-a16w4 a8w4 bf16}
bin=$build/bin
export LD_LIBRARY_PATH=$build/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
cd "$(dirname "$0")/.."
status=0
run() {  # run LOG CMD...: prints the command and its output, keeps the worst exit code
  local log=$1; shift
  echo "+ $*" | tee -a "$out/$log"
  local start=$SECONDS
  timeout "${STEP_LIMIT:-900}" "$@" 2>&1 | tee -a "$out/$log"
  local rc=${PIPESTATUS[0]}
  echo "(exit $rc, $((SECONDS - start)) s)" | tee -a "$out/$log"
  ((rc == 0)) || status=1
}
has() { [[ ",$steps," == *",$1,"* ]]; }

run device.log "$bin/moe-tune" device
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu --format=csv >>"$out/device.log" 2>&1

if has tests; then
  run tests.log "$bin/moetune_test_gpu"
  run tests.log "$bin/moetune_test_exec"
  # GpuSampler smoke test and its verify at the bucket's lowest and highest M.
  run tests.log "$bin/moetune_test_measure" "[gpu]"
  # The runtime (docs/runtime.md): C API on the GPU, its host cost, the Python package.
  run tests.log "$bin/moetune_test_runtime"
  run tests.log "$bin/moetune_test_runtime" "[.host_cost]"
  export MOETUNE_LIBRARY=$build/lib
  run tests.log python3 python/tests/test_fused_moe.py -v
  # The README's engine-style example on the published table (a non-zero exit fails the pass).
  PYTHONPATH=python run tests.log python3 examples/run_layer.py \
      --table results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --tokens 8 64 100
fi
if has calibrate; then
  run calibrate.log "$bin/moe-tune" calibrate --m 8 --trials "${CAL_TRIALS:-400}" \
      --power-trials "${CAL_POWER_TRIALS:-100}" --slowdowns "${CAL_SLOWDOWNS:-1,2,3}" \
      --cache-dir "$cache" --json "$out/calibrate_m8.json"
fi
if has requalify; then
  run requalify.log "$bin/moe-tune" requalify "${REQUALIFY_TABLE:-results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv}" \
      --cache-dir "$cache" --report "$out/requalify"
fi
if has compile; then
  cores=$(nproc)
  for jobs in 1 "$cores"; do
    rm -rf /tmp/mt-cache-$jobs
    run compile.log "$bin/moe-tune" compile --arch sm_90 --space search_spaces/ci.json \
        --cache-dir /tmp/mt-cache-$jobs --jobs "$jobs" --json "$out/compile_ci_j$jobs.json"
  done
  rm -rf /tmp/mt-cache-full
  run compile.log "$bin/moe-tune" compile --arch sm_90 --space search_spaces/sm_90.json \
      --cache-dir /tmp/mt-cache-full --jobs "$cores" --json "$out/compile_full_cold.json"
  run compile.log "$bin/moe-tune" compile --arch sm_90 --space search_spaces/sm_90.json \
      --cache-dir /tmp/mt-cache-full --jobs "$cores" --json "$out/compile_full_warm.json"
fi
if has verify; then
  for dtype in $dtypes; do
    run verify.log "$bin/moe-tune" verify --space search_spaces/sm_90.json --m 8 --dtype "$dtype" \
        --cache-dir /tmp/mt-cache-full --json "$out/verify_sm90_$dtype.json"
  done
fi
if has bench; then
  run bench.log "$bin/moe-tune" bench --m 1 8 64 512 4096 --cache-dir /tmp/mt-cache-full \
      --json "$out/bench_backbone.json"
  run bench.log "$bin/moe-tune" bench --shape 5120,640,128,3 --m 1 8 64 512 \
      --cache-dir /tmp/mt-cache-full --json "$out/bench_draft.json"
fi
exit $status

#!/usr/bin/env bash
# Session 20, final call A: this tree's GPU tests -- the whole [gpu] exec suite (every gate on
# every wgmma block size, both dtypes, on the ring whose token rows and weight parts are
# apart), the runtime suite (the library runs the new 64-token default at large M), the Python
# package's tests and the README's example.
# Lands in OUT as final_a.tgz. Usage: final_a.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $out/final_a
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/final_a/gpu.txt 2>&1
step() {  # name limit cmd...
  local n=$1 l=$2; shift 2; local s=$SECONDS
  timeout $l "$@" > $out/final_a/$n.log 2>&1
  echo "$n: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed|passed|Ran |^OK|Error" $out/final_a/$n.log | head -6
}
step exec_gpu 330 $b/bin/moetune_test_exec "[gpu]"
step runtime 100 $b/bin/moetune_test_runtime
MOETUNE_LIBRARY=$b/lib step python 90 python3 python/tests/test_fused_moe.py -v
MOETUNE_LIBRARY=$b/lib PYTHONPATH=python step example 40 python3 examples/run_layer.py \
  --table results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --tokens 1 8 64 2048 --max-tokens 2048
cd $out && tar czf final_a.tgz final_a && rm -rf final_a

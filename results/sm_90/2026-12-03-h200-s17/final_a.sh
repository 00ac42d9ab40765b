#!/usr/bin/env bash
# Session 17, final call A: this tree's GPU tests: the whole [gpu] exec suite (the vector
# epilogue of the atomic stage two under every gate), the runtime suite (the planned forward
# included), the host-cost benchmark, the Python package's tests and the README's example.
# Lands in OUT as final_a.tgz. Usage: final_a.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $out/final_a
step() {  # name limit cmd...
  local n=$1 l=$2; shift 2; local s=$SECONDS
  timeout $l "$@" > $out/final_a/$n.log 2>&1
  echo "$n: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed|passed|Ran |^OK|Error" $out/final_a/$n.log | head -6
}
step exec_gpu 240 $b/bin/moetune_test_exec "[gpu]"
step runtime 120 $b/bin/moetune_test_runtime
step host_cost 60 $b/bin/moetune_test_runtime "[.host_cost]"
grep -E "^M=" $out/final_a/host_cost.log
MOETUNE_LIBRARY=$b/lib step python 120 python3 python/tests/test_fused_moe.py -v
MOETUNE_LIBRARY=$b/lib PYTHONPATH=python step example 60 python3 examples/run_layer.py \
  --table results/sm_90/dsv41_flash_tp4_a16w4_tuned_fmoe.csv --tokens 8 64 100
cd $out && tar czf final_a.tgz final_a && rm -rf final_a

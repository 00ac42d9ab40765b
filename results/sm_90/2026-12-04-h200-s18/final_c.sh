#!/usr/bin/env bash
# Session 18, final call C: the [gpu] exec suite again after its variants learned to clear
# wgmma_k16 where they leave the wgmma main loop (final_a: the k16 defaults made those derived
# variants invalid, the rules refused them). Lands in OUT as final_c.tgz. Usage: final_c.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $out/final_c
s=$SECONDS
timeout 260 $b/bin/moetune_test_exec "[gpu]" > $out/final_c/exec_gpu.log 2>&1
echo "exec_gpu: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED" $out/final_c/exec_gpu.log | head -8
cd $out && tar czf final_c.tgz final_c && rm -rf final_c

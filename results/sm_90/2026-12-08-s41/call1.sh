#!/usr/bin/env bash
# Session 41, first call: the gemv main loop (kernels/moe_gemv_gemm.cuh) inside the sorted
# pipeline, against the default, at the decode sizes of issue #13's three shapes; every row is
# checked against the CPU reference by bench itself.
# First the exec suite's gemv gates case (partial k-tiles, idle warps, split K, the exact decode).
# Usage: call1.sh OUT [seconds]; carry build/cuda/bin/{moe-tune,moetune_test_exec} and build/cuda/lib.
set -uo pipefail
out=${1:?out}; budget=${2:-250}
start=$SECONDS
left() { echo $((budget - (SECONDS - start))); }
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$out/card.txt"
echo "== gates"
timeout 60 $b/bin/moetune_test_exec "gates: the gemv main loop*" 2>&1 | tail -25 | tee "$out/gates.txt"
timeout 40 $b/bin/moetune_test_exec "*the wgmma main loop" 2>&1 | tail -5 | tee -a "$out/gates.txt"
s1() { echo "moetune_s1_a16w4_bf16_t8x8x$1_w$2_kp1_nk16_wv$3_st1_wg_gv_gi_dw0"; }
s2() { echo "moetune_s2_a16w4_bf16_t8x16x$1_w$2_kp1_nk16_wv$3_st1_wg_gv_ks1_dw0_atomic"; }
bench() {  # label shape Ms configs...
  local label=$1 shape=$2 ms=$3; shift 3
  echo "== $label"
  local lim=$(($(left) - 5)); [ $lim -gt 90 ] && lim=90; [ $lim -le 10 ] && { echo "skipped: $(left) s left"; return; }
  # shellcheck disable=SC2086
  timeout $lim $b/bin/moe-tune bench --shape "$shape" --dtype a16w4 --m $ms --config "$@" \
    --cache-dir .cache/moe-tune --json "$out/$label.json" > "$out/$label.log" 2>&1
  echo "exit $?"; grep -vE "^\[|^$" "$out/$label.log" | tail -40
}
bench backbone 5120,640,384,6 "1 4 8" default "$(s1 640 8 0),$(s2 128 5 0)"
bench ep 5120,2304,96,6 "1 4" default "$(s1 640 8 0),$(s2 256 9 0)"
bench draft 5120,640,128,3 "1 8" default "$(s1 640 8 0),$(s2 128 5 0)"
echo "== done in $((SECONDS - start)) s"

#!/usr/bin/env bash
# Session 15, probe 3 (issue #13): the landed defaults (session 15's rings of 3 and stage-two
# waves 4 for A16W4's 8- and 16-token wgmma pairs) - the whole [gpu] exec suite and the
# runtime suite, then the new default against session 14's default pairs (OLD8: one-warpgroup
# 8-token stage one, rings of 4, unbounded stage two; OLD16: rings of 4) in one binary (the
# kernels are the same code; only the choice changed), two rounds in swapped order.
# Then the 64-token pair's occupancy at M = 4096 (compute-bound; we trail the peer there on the
# draft and EP): rings of 3, one-warpgroup 64-token kernels (120 registers, 128 threads), and
# 32-token blocks (less padding per expert). Logs into OUT (tarred). Usage: p3.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
s=$SECONDS
timeout 260 build/cuda/bin/moetune_test_exec "[gpu]" > $out/exec_gpu.log 2>&1
echo "exec [gpu]: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $out/exec_gpu.log | head
s=$SECONDS
timeout 60 build/cuda/bin/moetune_test_runtime > $out/runtime.log 2>&1
echo "runtime: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $out/runtime.log | head
s1=moetune_s1_a16w4_bf16_ s2=moetune_s2_a16w4_bf16_
old8=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
old16=${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 150 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-100
}
for round in 1 2; do
  if [[ $round == 1 ]]; then order=(default "$old8" "$old16"); else order=("$old16" "$old8" default); fi
  bench backbone_$round --shape 5120,640,384,6 --m 8 64 256 512 --config "${order[@]}"
  bench draft_$round --shape 5120,640,128,3 --m 8 64 256 512 --config "${order[@]}"
  bench ep_$round --shape 5120,2304,96,6 --m 8 64 512 --config "${order[@]}"
done
pair() { echo "${s1}$1_kp1_nk16_wv0_$2_wg_gi_dw0,${s2}$3_kp1_nk16_wv0_$4_wg_ks1_dw0_atomic"; }
big=(default "$(pair t64x64x128_w8 st3 t64x128x128_w8 st3)" "$(pair t64x32x128_w4 st3 t64x64x128_w4 st3)"
     "$(pair t64x32x128_w4 st4 t64x64x128_w4 st4)" "$(pair t32x64x128_w8 st3 t32x128x128_w8 st3)"
     "$(pair t32x64x256_w8 st3 t32x128x128_w8 st3)")
bench backbone_4096 --shape 5120,640,384,6 --m 4096 --config "${big[@]}"
bench draft_4096 --shape 5120,640,128,3 --m 4096 --config "${big[@]}"
bench ep_4096 --shape 5120,2304,96,6 --m 4096 --config "${big[@]}"
cd $out && tar czf logs.tgz *.log && rm *.log

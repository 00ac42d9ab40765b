#!/usr/bin/env bash
# Session 14, probe 1 (issue #13): which part of session 13's unlanded k loop breaks the
# 64-token 8-warp wgmma pair at small M. Four binaries: OLD (HEAD 465d522, the k loop as
# landed), NEW (session 13's patch), NOLB (the patch without its launch bound), NOROUND (the
# patch with the k loop not unrolled by the ring's length: every k-tile's stage from kt).
# Each runs the pair on the backbone (a16w4, M = 1 8 64 512) and a8w4 (M = 8 64); NEW also
# runs the [gpu] verifier's wgmma section (now with 64-token blocks) and compute-sanitizer.
# Logs straight into OUT. Usage: p1.sh OUT   (carry build/{old,cuda,v_nolb,v_noround}/{bin,lib})
set -uo pipefail
out=${1:?out}
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_; a1=moetune_s1_a8w4_fp8_; a2=moetune_s2_a8w4_fp8_
wg64=${s1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
a8_wg64=${a1}t64x64x128_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${a2}t64x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
bench() {  # variant name args...
  local d=build/$1 n=$1_$2; shift 2; local s=$SECONDS
  LD_LIBRARY_PATH=$d/lib:/usr/local/cuda/lib64 timeout 100 $d/bin/moe-tune bench --samples 3 --repeats 4 \
    --cache-dir /tmp/cache_${d//\//_} "$@" > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^ +[0-9]+ " $out/bench_$n.log | cut -c1-170
}
for v in old cuda v_nolb v_noround; do
  bench $v a16w4 --shape 5120,640,384,6 --dtype a16w4 --m 1 8 64 512 --config "$wg64"
  bench $v a8w4 --shape 5120,640,384,6 --dtype a8w4 --m 8 64 --config "$a8_wg64"
done
s=$SECONDS
LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64 timeout 150 build/cuda/bin/moetune_test_exec "[gpu]" \
  -c "the wgmma main loop on both stages, 8-, 32-, 64- and 128-token blocks" > $out/exec_wgmma.log 2>&1
echo "exec wgmma section: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed|with expansion" $out/exec_wgmma.log | head
CS=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null | head -1)
for tool in memcheck racecheck; do
  s=$SECONDS
  LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64 timeout 120 $CS --tool $tool --print-limit 20 \
    build/cuda/bin/moe-tune bench --samples 1 --repeats 1 --cache-dir /tmp/cache_build_cuda --shape 5120,640,384,6 \
    --dtype a16w4 --m 8 --config "$wg64" > $out/sanitizer_$tool.log 2>&1
  echo "sanitizer $tool: exit $?, $((SECONDS-s)) s"; grep -E "ERROR SUMMARY|Error|Race|hazard" $out/sanitizer_$tool.log | head -8
done

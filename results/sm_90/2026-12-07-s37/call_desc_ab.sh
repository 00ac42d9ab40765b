#!/usr/bin/env bash
# Session 37's prepared call (not run: no device time was left): unlanded_warp_uniform_desc.patch
# (the a16w4 64-K form's stage descriptor broadcast from lane 0, so ptxas keeps the per-wgmma
# descriptor sums in uniform registers) against the tree without it. Build both here first:
#   cmake --build build/cuda --target moe-tune && cp build/cuda/bin/moe-tune build/cuda/bin/moe-tune-main
#   git apply results/sm_90/2026-12-07-s37/unlanded_warp_uniform_desc.patch && cmake --build build/cuda --target moe-tune
# Backbone and draft defaults at M = 512 (the 16-token stage one: the changed loop) and at M = 64
# and 8 (unchanged loops: a control), one bench call per binary, in the order old, new, new, old
# (the two binaries' kernels differ in source, so the shared code cache keeps both); then the
# static SASS of the changed kernel from both (cuobjdump on the GPU machine), then `moe-tune
# verify` (every correctness gate) on the changed loop's kernel, its k16 twin and the other
# forms the patch recompiles.
# AB_M: the M values of both shapes instead (e.g. AB_M=512 for a short call).
# Usage: [AB_M=...] call_desc_ab.sh OUT [seconds]; carry .cache, build/cuda/bin/{moe-tune,moe-tune-main}, build/cuda/lib.
source results/sm_90/2026-12-07-s37/call_parts.sh "$@"  # out, left (its next_gpu.sh parts unused here)
b=build/cuda
export LD_LIBRARY_PATH=$b/lib:${LD_LIBRARY_PATH:-}
cache=.cache/moe-tune
nvidia-smi --query-gpu=name,clocks.sm,driver_version --format=csv,noheader | tee "$out/gpu.txt"
mkdir -p "$out/ab" "$out/sass"  # both packed at the end, even if empty
for pt in "5120,640,384,6 ${AB_M:-64 512}" "5120,640,128,3 ${AB_M:-8 512}"; do
  set -- $pt; sh=$1; shift
  for run in r1_old:moe-tune-main r1_new:moe-tune r2_new:moe-tune r2_old:moe-tune-main; do
    n=ab_${run%%:*}_${sh//,/_}
    timeout 120 $b/bin/${run#*:} bench --shape "$sh" --dtype a16w4 --m "$@" --config default --cache-dir "$cache" \
      --json "$out/ab/$n.json" > "$out/ab/$n.log" 2>&1
    echo "$n exit $?"; grep -E "^ +[0-9]+ " "$out/ab/$n.log"
  done
done
echo "== static SASS of the 16-token stage one, old and new (cuobjdump here)"
python3 results/sm_90/2026-12-07-s37/cache_sass.py "$cache" t16x64x256_w8_kp1_nk16_wv0_st4_wg_tm_gi "$out/sass"
python3 results/sm_90/2026-12-07-s37/cache_sass.py "$cache" t8x64x256_w8_kp1_nk16_wv0_st3_wg_k16_tm_gi
echo "== verify ($(left) s left)"
timeout $(($(left) - 10)) $b/bin/moe-tune verify --space results/sm_90/2026-12-07-s37/desc_verify_space.json --shape 5120,640,128,3 \
  --dtype a16w4 --m 512 --cache-dir "$cache" --json "$out/verify.json" > "$out/verify.log" 2>&1
echo "verify exit $?"; tail -5 "$out/verify.log"
tar czf "$out/call.tgz" --ignore-failed-read -C "$out" ab sass verify.log verify.json gpu.txt 2>/dev/null && rm -rf "$out/ab" "$out/sass"
echo "== done in $((SECONDS - start)) s"

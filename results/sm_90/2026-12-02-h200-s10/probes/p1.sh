#!/usr/bin/env bash
# Probe 1 (session 10): first run of the wgmma main loop on the H200. Verify every probe-space
# variant (A16W4 and A8W4, the backbone at M = 512 and a shape with a partial stage-two tile)
# and the [gpu] gate with scales outside the fast decode range (p2.sh benches them).
# Usage: p1.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
here=$(dirname "$0")
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=30 t $b/bin/moe-tune device
LIM=60 t $b/bin/moe-tune compile --arch sm_90 --space $here/p1_space.json --cache-dir $cache --no-spills > $out/compile.log 2>&1; tail -3 $out/compile.log
for d in a16w4 a8w4; do
  LIM=130 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 5120,640,384,6 --dtype $d --m 512 --cache-dir $cache \
    --json $out/verify_${d}_backbone.json > $out/verify_${d}_backbone.log 2>&1; tail -4 $out/verify_${d}_backbone.log
  LIM=70 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 2112,512,64,4 --dtype $d --m 96 --cache-dir $cache \
    > $out/verify_${d}_odd.log 2>&1; tail -4 $out/verify_${d}_odd.log
done
LIM=120 t $b/bin/moetune_test_exec "gates: MXFP4 scales outside the fast decode range, the wgmma main loop" > $out/gates_wgmma_scales.log 2>&1; tail -3 $out/gates_wgmma_scales.log

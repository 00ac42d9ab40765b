#!/usr/bin/env bash
# Probe 4 (session 10): the wgmma main loop with token chunks (MMAs skipped past a block's last
# token) and no zero-fill copies: verify, the gates with out-of-range scales, a sweep of tiles
# at backbone M = 64 / 512 / 4096, the SASS of two stage-one kernels and Nsight Compute's
# per-instruction counts for the 16-token stage one at M = 512.
# Usage: p4.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
here=$(dirname "$0")
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
CUOBJDUMP=$(command -v cuobjdump || ls /usr/local/cuda/bin/cuobjdump 2>/dev/null | head -1)
for f in $here/p4_s1_wg16.cubin $here/p4_s1_wg64.cubin; do $CUOBJDUMP -sass $f > $out/sass_$(basename $f .cubin).txt 2>&1; done
{
for d in a16w4 a8w4; do
  LIM=60 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 1024,512,32,4 --dtype $d --m 1024 --cache-dir $cache
done
LIM=60 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 2112,512,64,4 --dtype a16w4 --m 96 --cache-dir $cache
LIM=60 t $b/bin/moetune_test_exec "*the wgmma main loop"
} > $out/verify.log 2>&1; grep -E "^verify:|FAIL|test cases|assertions|^\(exit" $out/verify.log
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
pair() { echo "${s1}t$1_kp1_nk16_wv$4_st$3_wg_gi_dw0,${s2}t$2_kp1_nk16_wv$4_st$3_wg_ks1_dw0_atomic"; }
P="$(pair 16x32x256_w4 16x64x128_w4 4 0) $(pair 16x64x256_w8 16x128x128_w8 4 0) $(pair 8x64x256_w8 8x128x128_w8 4 0) $(pair 32x64x128_w8 32x128x128_w8 4 0) $(pair 64x64x128_w8 64x128x128_w8 4 0) $(pair 64x64x128_w8 64x128x128_w8 4 2) $(pair 128x64x128_w8 128x128x128_w8 3 0) $(pair 32x64x128_w8 32x128x128_w8 5 0)"
LIM=240 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 64 512 4096 --samples 5 --cache-dir $cache \
  --config $P > $out/bench.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " $out/bench.log
LIM=90 t $NCU --clock-control none -k regex:moe_stage1 -c 1 --section SourceCounters --section WarpStateStats --section InstructionStats -o $out/prof \
  $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 512 --samples 1 --repeats 1 --cache-dir $cache --config $(pair 16x64x256_w8 16x128x128_w8 4 0) > $out/ncu.log 2>&1
LIM=60 t $NCU --import $out/prof.ncu-rep --page source --csv --print-source sass > $out/source_sass.csv 2>> $out/ncu.log
LIM=60 t $NCU --import $out/prof.ncu-rep --page details >> $out/ncu.log 2>&1
rm -f $out/prof.ncu-rep
ls -la $out

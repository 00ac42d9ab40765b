#!/usr/bin/env bash
# Probe 5 (session 10): the wgmma main loop after the instruction diet (copies resolved once per
# CTA with no per-copy range test in whole k-tiles, the fast-decode range tested once per CTA,
# not per k-tile): verify, the scale gates, and benches of the backbone (A16W4 M = 64, 512,
# 4096; A8W4 M = 64, 512, 4096), the draft and the EP shapes against their defaults.
# Usage: p5.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
here=$(dirname "$0")
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
{
for d in a16w4 a8w4; do
  LIM=60 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 1024,512,32,4 --dtype $d --m 1024 --cache-dir $cache
done
LIM=60 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 5120,640,384,6 --dtype a16w4 --m 512 --cache-dir $cache
LIM=60 t $b/bin/moe-tune verify --space $here/p1_space.json --shape 2112,512,64,4 --dtype a16w4 --m 96 --cache-dir $cache
LIM=60 t $b/bin/moetune_test_exec "*the wgmma main loop"
} > $out/verify.log 2>&1; grep -E "^verify:|FAIL|test cases|assertions|^\(exit" $out/verify.log
pair() { echo "moetune_s1_$5_t$1_kp1_nk16_wv$4_st$3_wg_gi_dw0,moetune_s2_$5_t$2_kp1_nk16_wv$4_st$3_wg_ks1_dw0_atomic"; }
A=a16w4_bf16
P="$(pair 16x32x256_w4 16x64x128_w4 4 0 $A) $(pair 16x64x256_w8 16x128x128_w8 4 0 $A) $(pair 8x64x256_w8 8x128x128_w8 4 0 $A) $(pair 32x64x128_w8 32x128x128_w8 4 0 $A) $(pair 64x64x128_w8 64x128x128_w8 4 0 $A) $(pair 128x64x128_w8 128x128x128_w8 3 0 $A) $(pair 16x64x128_w8 16x128x128_w8 6 0 $A)"
LIM=200 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 64 512 4096 --samples 5 --cache-dir $cache --config $P > $out/bench_backbone.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " $out/bench_backbone.log
A=a8w4_fp8
P="default $(pair 16x64x256_w8 16x128x128_w8 4 0 $A) $(pair 8x64x256_w8 8x128x128_w8 4 0 $A) $(pair 64x64x128_w8 64x128x128_w8 4 0 $A)"
LIM=120 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a8w4 --m 64 512 4096 --samples 5 --cache-dir $cache --config $P > $out/bench_a8w4.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " $out/bench_a8w4.log
A=a16w4_bf16
P="default $(pair 8x64x256_w8 8x128x128_w8 4 0 $A) $(pair 16x64x256_w8 16x128x128_w8 4 0 $A) $(pair 32x64x128_w8 32x128x128_w8 4 0 $A) $(pair 64x64x128_w8 64x128x128_w8 4 0 $A)"
for spec in "draft 5120,640,128,3" "ep 5120,2304,96,6"; do set -- $spec
  LIM=100 t $b/bin/moe-tune bench --shape $2 --dtype a16w4 --m 8 64 512 4096 --samples 5 --cache-dir $cache --config $P > $out/bench_$1.log 2>&1
  grep -E "^ +[0-9]+ +[0-9.]+ " $out/bench_$1.log
done

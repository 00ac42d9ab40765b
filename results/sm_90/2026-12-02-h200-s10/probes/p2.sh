#!/usr/bin/env bash
# Probe 2 (session 10): the wgmma pairs against the default on the backbone (A16W4 M = 1 ... 4096,
# A8W4 M = 64, 512, 4096). Usage: p2.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
P=""
for bm in 8 16 32; do P="$P ${s1}t${bm}x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t${bm}x64x128_w4_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic"; done
for bm in 64 128; do P="$P ${s1}t${bm}x64x128_w8_kp1_nk16_wv0_st3_wg_gi_dw0,${s2}t${bm}x128x128_w8_kp1_nk16_wv0_st3_wg_ks1_dw0_atomic"; done
LIM=330 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m 1 8 64 512 4096 --samples 5 --cache-dir $cache \
  --config default $P --json $out/bench_a16w4.json > $out/bench_a16w4.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " -B1 $out/bench_a16w4.log | grep -v "^--" | sed 's/moetune_s[12]_a16w4_bf16_//g' | paste - - | awk '{print $1, $3, $4, $5, $8}'
s1=moetune_s1_a8w4_fp8_; s2=moetune_s2_a8w4_fp8_
P=""
for bm in 16 64; do P="$P ${s1}t${bm}x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t${bm}x64x128_w4_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic"; done
LIM=200 t $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a8w4 --m 64 512 4096 --samples 5 --cache-dir $cache \
  --config default $P --json $out/bench_a8w4.json > $out/bench_a8w4.log 2>&1
grep -E "^ +[0-9]+ +[0-9.]+ " -B1 $out/bench_a8w4.log | grep -v "^--" | sed 's/moetune_s[12]_a8w4_fp8_//g' | paste - - | awk '{print $1, $3, $4, $5, $8}'

#!/usr/bin/env bash
# Probe 1 (session 5): the staged main loop's correctness over a small space, and its speed at
# many tokens per expert against the default. Usage: p1.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s5/probes
mkdir -p "$out"
cache=/tmp/mt-cache
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
A=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
B=${s1}t128x64x64_w8_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t128x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
C=${s1}t64x64x64_w8_kp1_nk16_wv2_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv2_st3_stg_ks1_dw0_atomic
D=${s1}t128x32x64_w8_kp1_nk16_wv0_st4_stg_gi_dw0,${s2}t128x128x64_w8_kp1_nk16_wv0_st3_stg_ks2_dw0_atomic
E=${s1}t32x64x64_w8_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
F=${s1}t64x128x64_w8_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=200 t $b/bin/moe-tune verify --space $here/p1_staged_space.json --m 64 --dtype a16w4 --cache-dir $cache --json $out/verify_staged_a16w4.json > $out/verify_a16w4.log 2>&1
tail -5 $out/verify_a16w4.log
LIM=200 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 512 4096 --samples 5 --cache-dir $cache --config default "$A" "$B" "$C" "$D" "$E" "$F" --json $out/bench_backbone.json > $out/bench_backbone.log 2>&1
grep -E "^\|" $out/bench_backbone.log | cut -c1-400 | tail -20
LIM=120 t $b/bin/moe-tune bench --roofline --shape 5120,2304,96,6 --m 64 512 --samples 5 --cache-dir $cache --config default "$A" "$B" "$E" --json $out/bench_ep.json > $out/bench_ep.log 2>&1
grep -E "^\|" $out/bench_ep.log | tail -10
LIM=100 t $b/bin/moe-tune verify --space $here/p1_staged_space.json --m 64 --dtype a8w4 --cache-dir $cache --json $out/verify_staged_a8w4.json > $out/verify_a8w4.log 2>&1
tail -5 $out/verify_a8w4.log

#!/usr/bin/env bash
# Probe 4: 16-row fragments of padding skip their MMAs, so block_m 128 shares one decode among
# all of an expert's tokens. Verify + bench. Usage: p4.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
here=results/sm_90/2026-12-01-h200-s5/probes
mkdir -p "$out"; cache=/tmp/mt-cache
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
A=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
Q=${s1}t64x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t64x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_reduce
P=${s1}t128x64x64_w8_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t128x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
Pr=${s1}t128x64x64_w8_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t128x128x64_w8_kp1_nk16_wv0_st3_stg_ks1_dw0_reduce
Pw=${s1}t128x32x64_w8_kp1_nk16_wv2_st3_stg_gi_dw0,${s2}t128x64x64_w8_kp1_nk16_wv2_st3_stg_ks1_dw0_atomic
E=${s1}t32x64x64_w4_kp1_nk16_wv0_st3_stg_gi_dw0,${s2}t32x128x64_w4_kp1_nk16_wv0_st3_stg_ks1_dw0_atomic
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
LIM=100 t $b/bin/moe-tune verify --space $here/p4_staged_space.json --m 64 --dtype a16w4 --cache-dir $cache --json $out/verify_staged_a16w4.json > $out/verify_a16w4.log 2>&1
tail -2 $out/verify_a16w4.log
LIM=200 t $b/bin/moe-tune bench --roofline --shape 5120,640,384,6 --m 4096 16384 --samples 5 --cache-dir $cache --config "$A" "$Q" "$P" "$Pr" "$Pw" --json $out/bench_backbone.json > $out/bench_backbone.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1|error" $out/bench_backbone.log | cut -c1-150
LIM=100 t $b/bin/moe-tune bench --roofline --shape 5120,2304,96,6 --m 512 --samples 5 --cache-dir $cache --config "$E" "$A" "$P" "$Pr" --json $out/bench_ep.json > $out/bench_ep.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1|error" $out/bench_ep.log | cut -c1-150
LIM=60 t $b/bin/moe-tune bench --roofline --shape 5120,640,128,3 --m 512 --samples 5 --cache-dir $cache --config "$E" "$A" "$P" --json $out/bench_draft.json > $out/bench_draft.log 2>&1
grep -E "^ +[0-9]+ |moetune_s1|error" $out/bench_draft.log | cut -c1-150

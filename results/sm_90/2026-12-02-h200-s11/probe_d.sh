#!/usr/bin/env bash
# Session 11, call D (issue #13, the default heuristic): what the 16-bucket tune found
# (tune_a: the 8-token wgmma pair with a 32-wide, 4-warp stage one won from 0.12 to 3.75
# tokens per expert by 3-12 %; at 0.09 tokens per expert the swapped stage one with the
# wgmma stage two won by 7 %), benched beside the current default on the backbone, the draft
# and the EP shape from M = 1 to 512. Lands in OUT/probe_d.tgz.
# Usage: probe_d.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/probe_d; rm -rf $work; mkdir -p $work
s1=moetune_s1_a16w4_bf16_
s2=moetune_s2_a16w4_bf16_
wg8n32=${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
wg8=${s1}t8x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
mixed=${s1}t8x8x128_w4_kp1_nk16_wv4_st4_sab_rp_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
for shape in backbone:5120,640,384,6 draft:5120,640,128,3 ep:5120,2304,96,6; do
  name=${shape%%:*}
  s=$SECONDS
  timeout 150 "$b/bin/moe-tune" bench --shape ${shape#*:} --m 1 4 8 64 192 320 512 --samples 7 \
    --config default "$wg8n32" "$wg8" "$mixed" --json $work/bench_$name.json \
    --markdown $work/bench_$name.md --cache-dir /tmp/mt-cache-probe > $work/bench_$name.log 2>&1
  echo "$name: exit $?, $((SECONDS-s)) s"
done
tar czf "$out/probe_d.tgz" -C $work .
for f in $work/bench_*.md; do echo "== $f"; cut -d"|" -f4,9 "$f" | tr -s " " | paste -sd" " | fold -w 2000; done

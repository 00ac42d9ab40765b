#!/usr/bin/env bash
# Session 12, call A (issue #13, fewer launch gaps): every [gpu] suite with overlapped launches
# (programmatic dependent launch) and the rewritten sort, then `bench` of the default pair with
# overlapped and with serial launches (--no-launch-overlap) on the backbone, the draft, the EP
# shape and A8W4's backbone, and the A8W4 candidates below 0.1 tokens per expert.
# Lands in OUT/overlap_a.tgz.
# Usage: overlap_a.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/overlap_a; rm -rf $work; mkdir -p $work
cache=/tmp/mt-cache-a
s=$SECONDS
CACHE_DIR=$cache STEP_LIMIT=200 timeout 300 bash test/gpu_pass.sh "$b" "$work/gpu" tests > "$work/gpu_pass.log" 2>&1
echo "gpu_pass tests: exit $?, $((SECONDS-s)) s"
grep -E "^\+|^\(exit|test cases|passed|failed|FAILED" "$work"/gpu/tests.log | cut -c1-200 | tail -30
for shape in backbone:5120,640,384,6:a16w4 draft:5120,640,128,3:a16w4 ep:5120,2304,96,6:a16w4 a8w4:5120,640,384,6:a8w4; do
  IFS=: read name dims dtype <<< "$shape"
  for mode in overlap serial; do
    flag=; [[ $mode == serial ]] && flag=--no-launch-overlap
    s=$SECONDS
    timeout 150 "$b/bin/moe-tune" bench --shape $dims --dtype $dtype --m 1 4 8 64 512 --samples 9 $flag \
      --json $work/bench_${name}_$mode.json --markdown $work/bench_${name}_$mode.md --cache-dir $cache > $work/bench_${name}_$mode.log 2>&1
    echo "$name $mode: exit $?, $((SECONDS-s)) s"
  done
done
s1=moetune_s1_a8w4_fp8_
s2=moetune_s2_a8w4_fp8_
wg8=${s1}t8x64x128_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
wg8n32=${s1}t8x32x128_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t8x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
wg16=${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}t16x128x128_w8_kp1_nk16_wv0_st4_wg_ks1_dw0_atomic
for shape in backbone:5120,640,384,6 draft:5120,640,128,3 ep:5120,2304,96,6; do
  IFS=: read name dims <<< "$shape"
  s=$SECONDS
  timeout 150 "$b/bin/moe-tune" bench --shape $dims --dtype a8w4 --m 1 4 8 --samples 9 \
    --config default "$wg8" "$wg8n32" "$wg16" --json $work/a8w4_low_$name.json \
    --markdown $work/a8w4_low_$name.md --cache-dir $cache > $work/a8w4_low_$name.log 2>&1
  echo "a8w4 low $name: exit $?, $((SECONDS-s)) s"
done
tar czf "$out/overlap_a.tgz" -C $work .
for f in $work/bench_*.md $work/a8w4_low_*.md; do echo "== $(basename $f)"; grep "^| E" "$f" | cut -d"|" -f4,5,7,8,9,10,14 | tr -s " " | sed 's/moetune_//g'; done

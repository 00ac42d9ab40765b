#!/usr/bin/env bash
# Session 19, final call D: after p4 the A8W4 default splits its one-warpgroup stage one in 4
# where it has at most 132 CTAs (backbone M = 1), so docs/performance.md's A8W4 run is redone
# on this tree (ONLY=backbone_a8w4; the other runs are final_b's, copied in) and its A8W4
# gates (the wgmma section, split-K variants included) run again.
# Lands in OUT as final_d.tgz. Usage: final_d.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p $out/final_d
cp -r results/sm_90/2026-12-04-h200-s19/final_out/final_b/perf $out/final_d/perf
cp results/sm_90/2026-12-04-h200-s19/final_out/final_b/performance.md $out/final_d/performance.md
s=$SECONDS
ONLY=backbone_a8w4 timeout 120 bash test/performance_table.sh "$b" "$out/final_d/performance.md" "$out/final_d/perf" > "$out/final_d/perf.log" 2>&1
echo "performance_table (backbone_a8w4): exit $?, $((SECONDS-s)) s"
grep -c PASS $out/final_d/perf.log; grep FAIL $out/final_d/perf.log | cut -c1-150 | head
grep -E "^\| E" $out/final_d/perf/bench_roofline_backbone_a8w4.md | awk -F'|' '$4+0==1 {printf "M=%s %s | s1 %s s2 %s tot %s %s\n", $4, $5, $7, $8, $9, $14}' | sed 's/moetune_s[12]_a8w4_fp8_//g'
s=$SECONDS
timeout 120 $b/bin/moetune_test_exec "gates: A8W4 on the DSv4.1-Flash backbone" > $out/final_d/gates_a8w4.log 2>&1
echo "gates a8w4 (whole case): exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED" $out/final_d/gates_a8w4.log | head -4
cd $out && tar czf final_d.tgz final_d && rm -rf final_d

#!/usr/bin/env bash
# Session 16, probe 2 (issue #13): the producer warp after p1 (its token-row copies read their
# row slots in batches of 8 instead of one LDS latency per copy), with the launch bound of the
# non-producer twins (waves 3: ptxas otherwise took 70-80 registers, 2 CTAs per SM), and a
# probe form `_wpl` whose producer copies the weights by cp.async as well (no bulk copies):
# backbone M = 64 / 512 / 4096 against the default, then Nsight Compute (warp states,
# scheduler, occupancy, speed of light) of the 8-token stage one at M = 64. Logs into OUT.
# Usage: p2.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
s1=moetune_s1_a16w4_bf16_ s2=moetune_s2_a16w4_bf16_
pair() {  # BM ST1 ST2 TOKEN WAVES
  local k1=256; [[ $1 == 64 ]] && k1=128
  echo "${s1}t$1x64x${k1}_w8_kp1_nk16_wv$5_st$2_wg$4_gi_dw0,${s2}t$1x128x128_w8_kp1_nk16_wv$5_st$3_wg$4_ks1_dw0_atomic"
}
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 170 build/cuda/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s %s | s1 %s s2 %s tot %s %s\n", $2, $4, substr($5,1,140), $7, $8, $9, $14}'
}
bench backbone --shape 5120,640,384,6 --m 64 512 --config default "$(pair 8 3 3 _wp 0)" "$(pair 8 3 3 _wp 3)" \
  "$(pair 8 3 3 _wpl 3)" "$(pair 16 3 3 "" 0)" "$(pair 16 3 3 _wp 3)" "$(pair 16 3 3 _wpl 3)"
bench backbone_4096 --shape 5120,640,384,6 --m 4096 --config default "$(pair 64 3 3 _wp 0)" "$(pair 64 3 3 _wpl 0)"
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # name config M
  local s=$SECONDS
  timeout 120 $NCU --clock-control none -k regex:moe_stage1 -c 1 --section WarpStateStats --section SchedulerStats \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    build/cuda/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m $3 --samples 1 --repeats 1 \
    --cache-dir /tmp/cache --config "$2" > $out/ncu_$1.log 2>&1
  echo "ncu $1: exit $?, $((SECONDS-s)) s"
  grep -E "Duration|Registers Per|Achieved Occupancy|Theoretical Occupancy|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|DRAM Throughput|Memory Throughput|Stall|Warp Cycles Per Issued" $out/ncu_$1.log | head -30
}
prof wp8_m64 "$(pair 8 3 3 _wp 3)" 64
prof wpl8_m64 "$(pair 8 3 3 _wpl 3)" 64
prof def8_m64 "$(pair 8 3 3 "" 0)" 64
cd $out && tar czf logs.tgz *.log *.json *.md && rm -f *.log *.json *.md

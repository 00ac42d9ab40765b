#!/usr/bin/env bash
# Session 17, probe 1: (#13) the atomic stage two's epilogue as one 16-byte vector reduction
# (red.global.add.v4.f32) per four columns instead of two scalar atomics per two, against the
# tree before it (build/cuda/bin/moe-tune-base, built from 6362f73), the default pair at
# M = 64, 512, 4096 on the backbone, the draft and EP, two rounds in swapped order, and Nsight
# Compute of stage two at backbone M = 512 (both); (#16) the host cost of forward beside one
# graph launch of a captured forward and the bare launches without overlap; (#17) calibrate
# and requalify with --devices all on this one-GPU machine and (now isolated by default)
# without. Logs into OUT (tarred). Usage: p1.sh OUT   (carry build/cuda/{bin,lib})
set -uo pipefail
out=${1:?out}
mkdir -p $out
export LD_LIBRARY_PATH=build/cuda/lib:/usr/local/cuda/lib64
nvidia-smi --query-gpu=name,pci.bus_id,clocks.sm,clocks.mem,driver_version --format=csv > $out/gpu.txt 2>&1
bench() {  # binary name args...
  local bin=$1 n=$2; shift 2; local s=$SECONDS
  timeout 150 build/cuda/bin/$bin bench --roofline --samples 7 --cache-dir /tmp/cache_$bin "$@" \
    --json $out/bench_$n.json --markdown $out/bench_$n.md > $out/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"
  grep -E "^\| E" $out/bench_$n.md | awk -F'|' '{printf "%s M=%s | s1 %s s2 %s tot %s %s\n", $2, $4, $7, $8, $9, $14}'
}
for round in 1 2; do
  if [[ $round == 1 ]]; then order=(moe-tune-base moe-tune); else order=(moe-tune moe-tune-base); fi
  for bin in "${order[@]}"; do
    bench $bin backbone_${bin}_$round --shape 5120,640,384,6 --m 64 512 4096 --config default
    bench $bin draft_${bin}_$round --shape 5120,640,128,3 --m 64 512 4096 --config default
    bench $bin ep_${bin}_$round --shape 5120,2304,96,6 --m 64 512 4096 --config default
  done
done
s=$SECONDS
timeout 120 build/cuda/bin/moetune_test_runtime "[.host_cost]" > $out/host_cost.log 2>&1
echo "host_cost: exit $?, $((SECONDS-s)) s"; grep -E "^M=" $out/host_cost.log
two_rows=$out/two_rows.csv
head -3 results/sm_90/2026-12-02-h200-s9/published_dsv41_flash_tp4_a16w4_tuned_fmoe.csv > $two_rows
for spec in "--devices all" ""; do
  tag=$([[ -n $spec ]] && echo devices || echo single); s=$SECONDS
  # shellcheck disable=SC2086
  timeout 150 build/cuda/bin/moe-tune calibrate --trials 3 --power-trials 1 --slowdowns 2 $spec \
    --cache-dir /tmp/cache_moe-tune --json $out/cal_$tag.json > $out/cal_$tag.log 2>&1
  echo "calibrate $spec: exit $?, $((SECONDS-s)) s"; grep -E "^devices|^calibrate|^trial|^verdict" $out/cal_$tag.log | tail -4
  s=$SECONDS
  # shellcheck disable=SC2086
  timeout 200 build/cuda/bin/moe-tune requalify $two_rows $spec --report $out/rq_$tag \
    --cache-dir /tmp/cache_moe-tune > $out/rq_$tag.log 2>&1
  echo "requalify $spec: exit $?, $((SECONDS-s)) s"; grep -E "^devices|^requalify|line [0-9]+: [a-z_]+:" $out/rq_$tag.log | head -6
done
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for bin in moe-tune moe-tune-base; do
  s=$SECONDS
  timeout 100 $NCU --clock-control none -k regex:moe_stage2 -c 1 --section WarpStateStats --section SchedulerStats \
    --section SpeedOfLight --section Occupancy --section LaunchStats --section MemoryWorkloadAnalysis \
    build/cuda/bin/$bin bench --shape 5120,640,384,6 --dtype a16w4 --m 512 --samples 1 --repeats 1 \
    --cache-dir /tmp/cache_$bin --config default > $out/ncu_s2_$bin.log 2>&1
  echo "ncu $bin: exit $?, $((SECONDS-s)) s"
  grep -E "Duration|Registers Per|Achieved Occupancy|No Eligible|DRAM Throughput|L2 Cache Throughput|Memory Throughput|Warp Cycles Per Issued" $out/ncu_s2_$bin.log | head -12
done
cd $out && tar czf logs.tgz *.log *.json *.md *.txt rq_* 2>/dev/null; rm -rf *.log *.json *.md rq_*

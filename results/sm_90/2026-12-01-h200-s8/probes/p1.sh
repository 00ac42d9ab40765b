#!/usr/bin/env bash
# Probe 1 (session 8): the [gpu] suites never run on a GPU after session 7 (whole exec suite,
# the runtime's C API, its host cost, the Python package), then Nsight Compute on the A16W4
# fragment-decode default (backbone M = 512, after the branch fix) and on the A8W4 default at
# M = 512 (the staged LDS-tile kernel that an fp8-MMA fragment decode would replace).
# Usage: p1.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
mkdir -p "$out"; cache=/tmp/mt-cache
STEP_LIMIT=240 test/gpu_pass.sh "$b" "$out/gpu" tests > "$out/gpu_pass.log" 2>&1
grep -E "^\+|^\(exit|test cases|assertions" "$out/gpu_pass.log" | cut -c1-200
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
t() { echo "+ $*"; local s=$SECONDS; timeout "$LIM" "$@"; echo "(exit $?, $((SECONDS-s)) s)"; }
for dt in a16w4 a8w4; do
  LIM=120 t $NCU -k regex:moe_stage -c 2 --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section Occupancy --section LaunchStats --section InstructionStats --section MemoryWorkloadAnalysis \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype $dt --m 512 --samples 1 --repeats 1 --cache-dir $cache --config default > $out/ncu_512_$dt.txt 2>&1
done
grep -E "moe_stage|DRAM Throughput|Achieved Occupancy|Registers Per|Issued Ipc|No Eligible|Duration|Warp Cycles Per Issued|Theoretical Occ|Block Limit|L1/TEX Hit|Mem Pipes|Executed Ipc" $out/ncu_512_*.txt | cut -c1-180

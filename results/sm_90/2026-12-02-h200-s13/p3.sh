#!/usr/bin/env bash
# Session 13, probe 3 (issue #13): probe 2's k loop plus the wgmma word layout (9 instructions
# per decoded word instead of 11). The [gpu] exec and runtime suites (correctness), the
# backbone's default at M = 1...4096 and EP at 64 / 512, stage-two alternatives at backbone
# M = 64 / 512, and Nsight Compute's per-instruction counts of the default stage kernels at
# M = 512 (probe 1 has the same for the code before this session).
# Lands in OUT/p3.tgz. Usage: p3.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/p3; rm -rf $work; mkdir -p $work; cache=/tmp/mt-cache-p3
here=$(dirname "$0")
s=$SECONDS
timeout 240 $b/bin/moetune_test_exec "[gpu]" > $work/exec_gpu.log 2>&1
echo "exec [gpu]: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $work/exec_gpu.log | head
s=$SECONDS
timeout 120 $b/bin/moetune_test_runtime > $work/runtime.log 2>&1
echo "runtime: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $work/runtime.log | head
bench() {  # name args...
  local n=$1; shift; local s=$SECONDS
  timeout 150 $b/bin/moe-tune bench --roofline --samples 7 --cache-dir $cache --markdown $work/bench_$n.md "$@" > $work/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $work/bench_$n.log
}
bench backbone --shape 5120,640,384,6 --m 1 8 64 512 4096
bench ep --shape 5120,2304,96,6 --m 64 512
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
P512=""; for v in t16x128x128_w8_kp1_nk16_wv0_st3 t16x128x256_w8_kp1_nk16_wv0_st3 t16x128x256_w8_kp1_nk16_wv0_st4 t16x64x128_w4_kp1_nk16_wv0_st4 t16x64x256_w4_kp1_nk16_wv0_st4; do
  P512="$P512 ${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}${v}_wg_ks1_dw0_atomic"; done
P64=""; for v in t8x128x128_w8_kp1_nk16_wv0_st3 t8x128x256_w8_kp1_nk16_wv0_st4 t8x64x128_w4_kp1_nk16_wv0_st4 t8x64x256_w4_kp1_nk16_wv0_st4; do
  P64="$P64 ${s1}t8x32x256_w4_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}${v}_wg_ks1_dw0_atomic"; done
bench s2alt512 --shape 5120,640,384,6 --m 512 --config default $P512
bench s2alt64 --shape 5120,640,384,6 --m 64 --config default $P64
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # name kernel-regex M
  local s=$SECONDS
  timeout 150 $NCU --clock-control none -k regex:$2 -c 1 --section SourceCounters --section WarpStateStats \
    --section InstructionStats --section SpeedOfLight --section Occupancy -o $work/$1 \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m $3 --samples 1 --repeats 1 --cache-dir $cache > $work/$1.log 2>&1
  echo "$1: exit $?, $((SECONDS-s)) s"
  $NCU --import $work/$1.ncu-rep --page source --csv --print-source sass > $work/$1_sass.csv 2>> $work/$1.log
  $NCU --import $work/$1.ncu-rep --page details >> $work/$1.log 2>&1
  rm -f $work/$1.ncu-rep
  python3 - $work/$1_sass.csv > $work/$1_ops.txt <<'PY'
import csv, sys, collections, re
rows = list(csv.reader(open(sys.argv[1])))
h = next(i for i, r in enumerate(rows) if r and r[0] == "Address")
hdr = rows[h]; ix = hdr.index("Instructions Executed"); src = hdr.index("Source")
cols = [i for i, c in enumerate(hdr) if c.startswith("stall_") and "Not Issued" not in c]
ops = collections.Counter(); stalls = collections.Counter(); total = 0
for r in rows[h + 1:]:
    if len(r) <= ix or not r[ix].isdigit(): continue
    n = int(r[ix]); total += n
    m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_.]+)", r[src]); op = m.group(2).split(".")[0] if m else "?"
    ops[op] += n
    for i in cols:
        if i < len(r) and r[i].isdigit(): stalls[hdr[i][6:]] += int(r[i])
hg = ops["HGMMA"]
print("total warp-instructions executed", total, "HGMMA", hg, "per HGMMA", round(total / max(hg, 1), 1))
ss = sum(stalls.values()) or 1
print("stalls:", ", ".join(f"{k} {100*v/ss:.0f}%" for k, v in stalls.most_common(8)))
for op, n in ops.most_common(30): print(f"{op:14s} {n:12d} {100*n/total:6.2f}%  per HGMMA {n/max(hg,1):.2f}")
PY
  head -8 $work/$1_ops.txt
  grep -E "Duration|DRAM Throughput|Registers Per|Theoretical Occ|Warp Cycles Per Issued" $work/$1.log | sed 's/  */ /g'
}
prof s1_m512 moe_stage1 512
prof s2_m512 moe_stage2 512
xz -9 $work/*_sass.csv
tar czf "$out/p3.tgz" -C $work .

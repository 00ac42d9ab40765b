#!/usr/bin/env bash
# Session 13, probe 4 (issue #13): the k loop unrolled by the ring's length (every k-tile's
# stage, addresses and descriptors constants), the launch bound from the LDS occupancy, the
# wgmma word layout. A/B in one run: OLD = the binary of the session's start (bdf24ad), NEW =
# this tree. The [gpu] exec suite on NEW, then the backbone (M = 1...4096) and EP (M = 64,
# 512) defaults alternating OLD / NEW twice, stage-two alternatives at backbone M = 512, and
# Nsight Compute's per-instruction counts of NEW's default stage kernels at M = 512.
# Lands in OUT/p4.tgz. Usage: p4.sh NEW_BUILD OLD_BUILD OUT
set -uo pipefail
b=${1:?new build}; old=${2:?old build}; out=${3:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/p4; rm -rf $work; mkdir -p $work
s=$SECONDS
timeout 240 $b/bin/moetune_test_exec "[gpu]" > $work/exec_gpu.log 2>&1
echo "exec [gpu]: exit $?, $((SECONDS-s)) s"; grep -E "test cases|FAILED|failed" $work/exec_gpu.log | head
bench() {  # old|new name args...
  local d=$b; [ "$1" = old ] && d=$old
  local tag=$1 n=$1_$2; shift 2; local s=$SECONDS
  LD_LIBRARY_PATH=$d/lib:/usr/local/cuda/lib64 timeout 150 $d/bin/moe-tune bench --roofline --samples 7 --cache-dir /tmp/cache_$tag \
    --markdown $work/bench_$n.md "$@" > $work/bench_$n.log 2>&1
  echo "bench $n: exit $?, $((SECONDS-s)) s"; grep -E "^ +[0-9]+ " $work/bench_$n.log
}
for round in 1 2; do
  bench old backbone_$round --shape 5120,640,384,6 --m 1 8 64 512 4096
  bench new backbone_$round --shape 5120,640,384,6 --m 1 8 64 512 4096
done
bench old ep --shape 5120,2304,96,6 --m 64 512
bench new ep --shape 5120,2304,96,6 --m 64 512
s1=moetune_s1_a16w4_bf16_; s2=moetune_s2_a16w4_bf16_
P512=""; for v in t16x128x128_w8_kp1_nk16_wv0_st3 t16x128x256_w8_kp1_nk16_wv0_st4 t16x64x128_w4_kp1_nk16_wv0_st4 t8x128x128_w8_kp1_nk16_wv0_st4; do
  P512="$P512 ${s1}t16x64x256_w8_kp1_nk16_wv0_st4_wg_gi_dw0,${s2}${v}_wg_ks1_dw0_atomic"; done
bench new s2alt512 --shape 5120,640,384,6 --m 512 --config default $P512
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
prof() {  # name kernel-regex M
  local s=$SECONDS
  timeout 150 $NCU --clock-control none -k regex:$2 -c 1 --section SourceCounters --section WarpStateStats \
    --section InstructionStats --section SpeedOfLight --section Occupancy --section LaunchStats -o $work/$1 \
    $b/bin/moe-tune bench --shape 5120,640,384,6 --dtype a16w4 --m $3 --samples 1 --repeats 1 --cache-dir /tmp/cache_prof > $work/$1.log 2>&1
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
  head -9 $work/$1_ops.txt
  grep -E "Duration|DRAM Throughput|Registers Per|Block Limit Reg|Block Limit Shared|Theoretical Occ|Warp Cycles Per Issued" $work/$1.log | sed 's/  */ /g'
}
prof s1_m512 moe_stage1 512
prof s2_m512 moe_stage2 512
xz -9 $work/*_sass.csv
tar czf "$out/p4.tgz" -C $work .

#!/usr/bin/env bash
# Session 18, probe 2 (#13): where the wgmma main loop's instructions go after session 14-17 (as session 13's p1). Nsight
# Compute's per-SASS-instruction counts (SourceCounters) and warp states for the default stage
# one and stage two at backbone M = 512 (16-token blocks) and stage one at M = 64 (8-token
# blocks, one warpgroup), then a histogram of executed warp-instructions by opcode.
# Lands in OUT/p2.tgz. Usage: p2.sh BUILD OUT
set -uo pipefail
b=${1:?build}; out=${2:?out}
export LD_LIBRARY_PATH=$b/lib:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
work=/tmp/p2; rm -rf $work; mkdir -p $work
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
cache=/tmp/mt-cache
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
ops = collections.Counter(); total = 0; lines = []
for r in rows[h + 1:]:
    if len(r) <= ix or not r[ix].isdigit(): continue
    n = int(r[ix]); total += n
    m = re.match(r"\s*(@!?U?P\w+\s+)?([A-Z0-9_.]+)", r[src]); op = m.group(2).split(".")[0] if m else "?"
    ops[op] += n; lines.append((n, r[src].strip()))
print("total warp-instructions executed", total)
for op, n in ops.most_common(): print(f"{op:14s} {n:12d} {100*n/total:6.2f}%")
print("\nhottest 120 SASS lines (count, source):")
for n, s in sorted(lines, reverse=True)[:120]: print(n, s)
PY
  head -30 $work/$1_ops.txt
}
prof s1_m512 moe_stage1 512
prof s2_m512 moe_stage2 512
prof s1_m64 moe_stage1 64
xz -9 $work/*_sass.csv
tar czf "$out/p2.tgz" -C $work .

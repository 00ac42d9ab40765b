#!/usr/bin/env python3
# Session 32: warp-stall samples of an Nsight Compute SASS page (ncu -i REP --page source --csv
# --print-source sass), by reason, by opcode and per instruction (the top N).
# Usage: sass_stalls.py FILE.csv [N]   (gzip -dc the stored .csv.gz first)
import csv, sys, collections, re
f = sys.argv[1]
rows = list(csv.reader(open(f)))
hdr = rows[1]; data = rows[2:]
ix = {h: i for i, h in enumerate(hdr)}
stall_cols = [h for h in hdr if h.startswith('stall_') and '(Not Issued)' not in h]
def num(x):
    try: return float(x)
    except: return 0.0
tot = collections.Counter(); total = 0
for r in data:
    total += num(r[ix['Warp Stall Sampling (All Samples)']])
    for c in stall_cols: tot[c] += num(r[ix[c]])
print(f"{f}: {len(data)} instructions, {total:.0f} samples")
print("  by reason:", ", ".join(f"{k[6:]} {v/total*100:.1f}%" for k, v in tot.most_common(8)))
ops = collections.Counter(); opsn = collections.Counter()
for r in data:
    op = r[ix['Source']].strip().split()
    op = op[1] if op and op[0].startswith('@') else (op[0] if op else '?')
    ops[op.split('.')[0]] += num(r[ix['Warp Stall Sampling (All Samples)']]); opsn[op.split('.')[0]] += num(r[ix['Instructions Executed']])
print("  samples by opcode:", ", ".join(f"{k} {v/total*100:.1f}%" for k, v in ops.most_common(12)))
print("  executed by opcode:", ", ".join(f"{k} {v:.0f}" for k, v in opsn.most_common(12)))
top = sorted(data, key=lambda r: -num(r[ix['Warp Stall Sampling (All Samples)']]))[:int(sys.argv[2]) if len(sys.argv) > 2 else 25]
for r in top:
    s = num(r[ix['Warp Stall Sampling (All Samples)']])
    reasons = sorted(((num(r[ix[c]]), c[6:]) for c in stall_cols), reverse=True)[:3]
    print(f"  {r[ix['Address']][-5:]} {s/total*100:5.1f}% {r[ix['Source']].strip()[:70]:70s} " + " ".join(f"{n}:{v:.0f}" for v, n in reasons if v))

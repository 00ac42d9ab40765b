#!/usr/bin/env python3
# Session 37: a Nsight Compute SASS page (ncu -i REP --page source --csv --print-source sass)
# as executed warp-instructions per HGMMA, by what they do: the MXFP4 decode, the token rows'
# descriptor arithmetic, the wgmma's own issue, shared loads, copies, the rest. In the a16w4
# wgmma loops one HGMMA is one decoded word of 8 weights per lane (the 64-K form: four words, four
# HGMMAs per 64-K step and token chunk), so these are instructions per word where a block has one
# token chunk.
# Usage: sass_per_wgmma.py FILE.csv[.gz] ...
import collections, sys

from static_sass import mnemonic, read_page

GROUPS = {
    'decode': ['LOP3.LUT', 'HMUL2.BF16_V2', 'IMAD.SHL.U32', 'SHF.R.U32.HI', 'PRMT', 'SHF.L.W.U32.HI'],
    'descriptor': ['R2UR', 'IMAD.MOV.U32', 'IADD3', 'IMAD.X', 'UIADD3.64'],
    'wgmma issue': ['WARPGROUP.ARRIVE', 'WARPGROUP.DEPBAR.LE'],  # and the HGMMA itself
    'shared loads': ['LDS', 'LDS.128'],
    'copies': ['LDGSTS.E.BYPASS.128', 'LDGSTS.E.128', 'LDGDEPBAR', 'DEPBAR.LE'],
}
for path in sys.argv[1:]:
    hdr, data = read_page(path)
    ie, src = hdr.index('Instructions Executed'), hdr.index('Source')
    ops = collections.Counter()
    for r in data:
        ops[mnemonic(r[src])] += int(r[ie] or 0)
    total = sum(ops.values())
    hgmma = sum(v for k, v in ops.items() if k.startswith('HGMMA'))
    print(f"{path}: {total} warp-instructions, {hgmma} HGMMA, {total / hgmma:.1f} per HGMMA")
    grouped = {op for g in GROUPS.values() for op in g}
    for name, members in GROUPS.items():
        extra = hgmma if name == 'wgmma issue' else 0
        print(f"  {name:13s} {(sum(ops[o] for o in members) + extra) / hgmma:5.2f}  "
              + ", ".join(f"{o} {ops[o] / hgmma:.2f}" for o in members if ops[o]))
    rest = sum(v for k, v in ops.items() if k not in grouped and not k.startswith('HGMMA'))
    print(f"  {'the rest':13s} {rest / hgmma:5.2f}  "
          + ", ".join(f"{k} {v / hgmma:.2f}" for k, v in ops.most_common() if k not in grouped and not k.startswith('HGMMA'))[:160])

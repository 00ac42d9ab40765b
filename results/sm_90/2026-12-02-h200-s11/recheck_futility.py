#!/usr/bin/env python3
# Session 11, after call C: usage: recheck_futility.py calibrate_c/calibrate_m8.json.xz
# Re-derives the futility stop and its control verdict from every trial's recorded rounds,
# replicating autotune/stats (gate, futility, judge_control) in Python.
import json, lzma, math, statistics, sys
from math import comb
def upper_tail(n,k): return sum(comb(n,i) for i in range(k,n+1))/2**n
def min_wins(n, level):
    for k in range(n+1):
        if upper_tail(n,k) <= level: return k
    return n+1
LEVEL=upper_tail(31,25)
THR=0.01; SHARE=0.5; CF=0.5
def req(n): return min_wins(n, LEVEL)
def med(v): return statistics.median(v)
def summarize(pairs):  # pairs: list of (block, base, cand)
    red=[(b-c)/b for _,b,c in pairs]
    wins=sum(1 for _,b,c in pairs if c<b); losses=sum(1 for _,b,c in pairs if c>b)
    blocks={}
    for (blk,b,c) in pairs: blocks.setdefault(blk,[]).append((b-c)/b)
    return dict(n=len(pairs),wins=wins,losses=losses,median=med(red),blocks=[med(blocks[k]) for k in sorted(blocks)],red=red)
def cannot_pass(pairs,total):
    s=summarize(pairs); rem=total-s['n']
    if s['wins']+rem < req(total): return 'wins'
    if med(s['red']+[1.0]*rem) < THR: return 'median'
    for m in s['blocks']:
        if not (m>=SHARE*THR and m>0): return 'block'
    return None
def control_ok(pairs):
    s=summarize(pairs); need=req(s['n'])
    up = s['median']>=THR and s['wins']>=need
    down = -s['median']>=THR and s['losses']>=need
    return not up and not down and abs(s['median'])<CF*THR
j=json.load(lzma.open(sys.argv[1]))
for c in j['cases']:
    stops=0; failed_partial=0; mismatch=0
    for t in c['trial_results']:
        if t['attempts']!=1: print('multi-attempt trial', c['name'], t['index'])
        rounds=t['rounds']; total=len(rounds)
        blocks=sorted(set(r[0] for r in rounds))
        stop=None
        for bi,b in enumerate(blocks[:-1]):
            prefix=[r for r in rounds if r[0] in blocks[:bi+1]]
            vb=[(r[0],r[2],r[3]) for r in prefix]; vc=[(r[0],r[4],r[3]) for r in prefix]
            if cannot_pass(vb,total) or cannot_pass(vc,total):
                stop=(bi+1,prefix); break
        if stop:
            stops+=1
            if stop[0]!=t['futility_stop_after_blocks']: mismatch+=1
            ctl=[(r[0],r[2],r[4]) for r in stop[1]]
            if not control_ok(ctl): failed_partial+=1
        elif t['futility_stop_attempt'] is not None: mismatch+=1
    print(c['name'], 'stopped', stops, 'partial control failed at the stop', failed_partial, 'mismatches with the C++ derivation', mismatch)

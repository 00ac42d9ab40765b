#!/usr/bin/env python3
# Session 37: is there a wgmma word layout (autotune/moe/mxfp4_repack.hpp) whose decode costs
# fewer instructions, or fewer on the ALU pipe, than today's 9 (7 of them LOP3 / SHF on the ALU
# pipe, 2 IMAD.SHL on the FMA pipe)? Each pair's bf16 pattern needs its 8 bits (sign 15/31,
# magnitude 8..6 / 24..22) from one operation on the word and a mask (the word itself: 1
# instruction; a left shift, IMAD.SHL on the FMA pipe; a right shift or rotation, ALU: 2), or
# from two such and a merge (+2). Searched: every choice of three one-operation pairs that
# leave the fourth pair's bits to one two-operation pair; printed best first as (instructions,
# ALU instructions, the five operations). Result: 9 and 7 at best, today's layout among them.
import itertools
M = [6,7,8,15,22,23,24,31]
def ops():
    yield ('id',0,0)     # name, r, alu cost of the shift (0 none)
    for r in range(1,32):
        yield ('shl',r,0)  # IMAD.SHL: FMA pipe
        yield ('shr',r,1)
        yield ('rot',r,1)
def pre(op, m):
    n,r,_=op
    if n=='id': return m
    if n=='shl': b=m-r; return b if b>=0 else None
    if n=='shr': b=m+r; return b if b<32 else None
    if n=='rot': return (m-r)%32
OPS=list(ops())
single={}
for op in OPS:
    p=[pre(op,m) for m in M]
    if None in p: continue
    single.setdefault(frozenset(p),op)
res=[]
S=list(single.items())
for (a,oa),(b,ob),(c,oc) in itertools.combinations(S,3):
    if a&b or a&c or b&c: continue
    rest=frozenset(range(32))-a-b-c
    # two-source pair: each m in M from op x or op y
    for ox,oy in itertools.combinations(OPS,2):
        ok=True; used=set()
        for m in M:
            px,py=pre(ox,m),pre(oy,m)
            cand=[p for p in (px,py) if p is not None and p in rest and p not in used]
            if not cand: ok=False;break
            used.add(cand[0])
        if ok and used==set(rest):
            tot=sum(1 if o[0]=='id' else 2 for o in (oa,ob,oc)) + (0 if ox[0]=='id' else 1)+(0 if oy[0]=='id' else 1)+2
            alu=sum(o[2] for o in (oa,ob,oc,ox,oy)) + 5 # 5 LOP3 (one per single pair... )
            res.append((tot,alu,oa,ob,oc,ox,oy))
res=sorted(set(res))
print(len(res))
for r in res[:15]: print(r)

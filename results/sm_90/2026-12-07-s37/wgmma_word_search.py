#!/usr/bin/env python3
# Session 37: is there a wgmma word layout (autotune/moe/mxfp4_repack.hpp) whose decode costs
# fewer instructions, or fewer on the ALU pipe, than today's 9 (7 of them LOP3 / SHF on the ALU
# pipe, 2 IMAD.SHL on the FMA pipe)? Each pair's bf16 pattern needs its 8 bits (sign 15/31,
# magnitude 8..6 / 24..22) from one operation on the word and a mask (the word itself: 1
# instruction; a left shift, IMAD.SHL on the FMA pipe; a right shift or rotation, ALU: 2), or
# from two such and a merge (the two operations, an AND and a LOP3 merge). Searched: every
# choice of three one-operation pairs that leave the fourth pair's bits to one two-operation
# pair; printed best first as (instructions, ALU instructions, the five operations). The masks
# and merges are LOP3s, 5 of them in every layout. Result: 9 and 7 at best, today's layout
# among them (pair 1 a rotation by 10, pair 2 w << 4, pair 3 w << 6 and w >> 2 = a rotation by 30).
import itertools

PATTERN_BITS = [6, 7, 8, 15, 22, 23, 24, 31]  # where a pair's bits must land (bf16x2)


def operations():
    """(kind, amount, ALU instructions of the operation itself)."""
    yield ('id', 0, 0)
    for r in range(1, 32):
        yield ('shl', r, 0)  # IMAD.SHL: the FMA pipe
        yield ('shr', r, 1)
        yield ('rot', r, 1)


def source_bit(op, bit):
    """The word's bit that `op` moves to `bit`, or None (shifted in as zero)."""
    kind, r, _ = op
    if kind == 'id':
        return bit
    if kind == 'shl':
        return bit - r if bit >= r else None
    if kind == 'shr':
        return bit + r if bit + r < 32 else None
    return (bit - r) % 32


def cost(op):
    return 0 if op[0] == 'id' else 1


OPS = list(operations())
one_op = {}  # source-bit set -> the cheapest operation giving a whole pair from it
for op in OPS:
    bits = [source_bit(op, b) for b in PATTERN_BITS]
    if None not in bits:
        one_op.setdefault(frozenset(bits), op)


def two_op_covers(x, y, rest):
    """Can the 8 pattern bits come from ops x and y (each bit from one of them) using exactly
    the word bits in `rest`? Every split of the 8 bits is tried."""
    for choice in itertools.product((x, y), repeat=len(PATTERN_BITS)):
        src = [source_bit(op, b) for op, b in zip(choice, PATTERN_BITS)]
        if None not in src and set(src) == rest and len(set(src)) == len(src):
            return True
    return False


results = set()
for (a, oa), (b, ob), (c, oc) in itertools.combinations(one_op.items(), 3):
    if a & b or a & c or b & c:
        continue
    rest = set(range(32)) - a - b - c
    for ox, oy in itertools.combinations(OPS, 2):
        if two_op_covers(ox, oy, rest):
            total = sum(1 + cost(o) for o in (oa, ob, oc)) + cost(ox) + cost(oy) + 2
            alu = sum(o[2] for o in (oa, ob, oc, ox, oy)) + 5
            results.add((total, alu, oa, ob, oc, ox, oy))
results = sorted(results)
print(len(results))
for r in results[:15]:
    print(r)

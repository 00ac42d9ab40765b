#!/usr/bin/env python3
# Session 37: read a code-cache entry's SASS without a disassembler (this machine has none).
# sm_90 encodes an instruction's opcode in the low 12 bits of its 128-bit word, so one kernel
# that Nsight Compute has listed (its SASS page: ncu -i REP --page source --csv --print-source
# sass, one row per instruction in address order) teaches which bits mean which mnemonic, and
# with that table any other kernel compiled here can be read as a mnemonic sequence: counts per
# mnemonic, and the instructions between HGMMAs of a k loop.
#   static_sass.py table PAGE.csv[.gz] ENTRY OUT.json        learn the table from a listed kernel
#   static_sass.py count TABLE.json ENTRY [ENTRY...]          mnemonic counts per entry
#   static_sass.py span TABLE.json ORDINAL ENTRY [ENTRY...]   the 16 HGMMAs from the ORDINAL-th on
# ENTRY: a code-cache file (`moe-tune compile --cache-dir`): a text header, then the cubin.
# Opcode fields shared by several mnemonics (IMAD.MOV and IMAD.X, the ISETP forms) read as their
# first word (IMAD, ISETP); unknown fields as '?xyz'. The page and cache-entry readers here
# serve this folder's other SASS scripts too.
import collections, csv, gzip, json, re, struct, sys


def read_page(path):
    """A SASS page's header row and instruction rows (the CSV, gzipped or not)."""
    rows = list(csv.reader(gzip.open(path, 'rt') if path.endswith('.gz') else open(path)))
    return rows[1], rows[2:]


def mnemonic(source):
    """The mnemonic of one SASS line, its predicate dropped ('@!P0 LOP3.LUT R1, ...' -> 'LOP3.LUT')."""
    words = re.sub(r'^@!?U?P\w+\s+', '', source.strip()).split()
    return words[0] if words else '?'


def entry_name(blob):
    """The kernel name in a code-cache entry's text header (its fourth line: 'LENGTH NAME')."""
    lines = blob[:600].split(b'\n')
    return lines[3].split()[1].decode() if len(lines) > 3 and len(lines[3].split()) > 1 else ''


def entry_elf(blob):
    """The cubin of a code-cache entry (after its text header)."""
    return blob[blob.find(b'\x7fELF'):]


def stage_kernel_text(path):
    """The .text section of the entry's stage kernel (moe_stage1 / moe_stage2), as bytes."""
    elf = entry_elf(open(path, 'rb').read())
    shoff = struct.unpack_from('<Q', elf, 0x28)[0]
    shentsize, shnum, shstrndx = struct.unpack_from('<HHH', elf, 0x3a)
    sections = [struct.unpack_from('<IIQQQQIIQQ', elf, shoff + i * shentsize) for i in range(shnum)]
    names_at = sections[shstrndx][4]
    for name_off, _, _, _, off, size, *_ in sections:
        name = elf[names_at + name_off:elf.index(b'\0', names_at + name_off)].decode()
        if name.startswith('.text.') and 'moe_stage' in name:
            return elf[off:off + size]
    sys.exit(f"static_sass.py: no moe_stage kernel in {path}")


def opcode(text, i):
    return int.from_bytes(text[16 * i:16 * i + 2], 'little') & 0xfff


def mnemonics(table, path):
    text = stage_kernel_text(path)
    return [table.get(str(opcode(text, i)), f'?{opcode(text, i):03x}') for i in range(len(text) // 16)]


def learn(page, entry, out):
    hdr, rows = read_page(page)
    src = hdr.index('Source')
    text = stage_kernel_text(entry)
    if len(text) // 16 != len(rows):
        sys.exit(f"static_sass.py: {page} lists {len(rows)} instructions, {entry} has {len(text) // 16}")
    seen = collections.defaultdict(collections.Counter)
    for i, row in enumerate(rows):
        seen[opcode(text, i)][mnemonic(row[src])] += 1
    table = {}
    for field, names in seen.items():
        words = {n.split('.')[0] for n in names}
        table[str(field)] = names.most_common(1)[0][0] if len(names) == 1 else sorted(words)[0]
    json.dump(table, open(out, 'w'), indent=0, sort_keys=True)
    print(f"{len(table)} opcode fields from {len(rows)} instructions")


def main():
    mode = sys.argv[1]
    if mode == 'table':
        learn(*sys.argv[2:5])
        return
    table = json.load(open(sys.argv[2]))
    if mode == 'count':
        for path in sys.argv[3:]:
            seq = mnemonics(table, path)
            print(f"{path}: {len(seq)} instructions;",
                  ", ".join(f"{k} {v}" for k, v in collections.Counter(m.split('.')[0] for m in seq).most_common(16)))
    elif mode == 'span':
        ordinal = int(sys.argv[3])
        for path in sys.argv[4:]:
            seq = mnemonics(table, path)
            hgmma = [i for i, m in enumerate(seq) if m.startswith('HGMMA')]
            a, b = hgmma[ordinal], hgmma[ordinal + 15]
            body = collections.Counter(m.split('.')[0] for m in seq[a:b + 1])
            print(f"{path}: HGMMA {ordinal}..{ordinal + 15} span {b - a + 1} instructions;",
                  ", ".join(f"{k} {v}" for k, v in body.most_common(12)))


if __name__ == '__main__':
    main()

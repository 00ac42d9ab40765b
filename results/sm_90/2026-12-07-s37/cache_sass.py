#!/usr/bin/env python3
# Session 37: the static SASS of code-cache entries by kernel name (this machine has no
# disassembler; the GPU machine's CUDA has cuobjdump): per entry its instruction count and the
# opcodes that carry the wgmma descriptor (R2UR, IMAD.X, IMAD.MOV, IADD3, UIADD3*) and the HGMMAs.
# Usage: cache_sass.py CACHE_DIR NAME_SUBSTRING [OUT_DIR]  (OUT_DIR: the full listings too)
import collections, glob, os, re, subprocess, sys, tempfile

from static_sass import entry_elf, entry_name

cache, want = sys.argv[1], sys.argv[2]
out_dir = sys.argv[3] if len(sys.argv) > 3 else None
cuobjdump = '/usr/local/cuda/bin/cuobjdump' if os.path.exists('/usr/local/cuda/bin/cuobjdump') else 'cuobjdump'
for path in sorted(glob.glob(os.path.join(cache, '**', '*'), recursive=True)):
    if not os.path.isfile(path):
        continue
    blob = open(path, 'rb').read()
    name = entry_name(blob)
    if want not in name:
        continue
    elf = entry_elf(blob)
    with tempfile.NamedTemporaryFile(suffix='.cubin') as f:
        f.write(elf); f.flush()
        try:
            sass = subprocess.run([cuobjdump, '-sass', f.name], capture_output=True, text=True).stdout
        except FileNotFoundError:
            sys.exit(f"cache_sass.py: no {cuobjdump} on this machine")
    ops = collections.Counter()
    for line in sass.splitlines():
        m = re.match(r'\s*/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)', line)
        if m:
            ops[m.group(1)] += 1
    key = blob.split(b'\n')[1].decode()[:16]  # the entry's key, second header line
    keep = ['HGMMA', 'R2UR', 'IMAD.X', 'IMAD.MOV.U32', 'IADD3', 'UIADD3', 'UIADD3.64', 'UMOV']
    print(f"{name} key {key}: {sum(ops.values())} instructions; " + ", ".join(
        f"{k} {sum(v for o, v in ops.items() if o == k or (k == 'HGMMA' and o.startswith('HGMMA')))}" for k in keep))
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
        open(os.path.join(out_dir, f"{name}_{key}.sass"), 'w').write(sass)

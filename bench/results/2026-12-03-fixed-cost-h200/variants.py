#!/usr/bin/env python3
"""Timing-only variants of the tensor-core backward (shaders/flash_bwd_sgmm.wgsl), wrong results by design:
what a dkdv or dq workgroup costs before and after its tile loop (issue 37, the short calls' fixed cost F).
  zero       no tiles: the prologue (resident rows, the first tile's fetch), the epilogue (dK/dV or dQ written)
  zero-noep  no tiles and no global writes in the epilogue (its shared-memory stores and barriers kept)
  one        one tile
The forward (shaders/flash_fwd_sgmm.wgsl, FWD) gets the same three: no K/V tiles, no global writes of
O and LSE (its epilogue kept), one tile.
Usage: variants.py SRC FWD OUTDIR  (writes OUTDIR/<variant>.wgsl and OUTDIR/<variant>-fwd.wgsl)"""
import re, sys
src, fwd_src, out = sys.argv[1], sys.argv[2], sys.argv[3]
s = open(src).read()
def sub(text, old, new, count=1):
    assert text.count(old) == count, f'{old!r} found {text.count(old)} times, expected {count}'
    return text.replace(old, new)
LOOP_DQ = 'for (var j0 = j_start; j0 < n_end; j0 += BC) {'
zero = sub(s, 'let total = G * nt;', 'let total = 0u * G * nt;')
zero = sub(zero, LOOP_DQ, 'for (var j0 = j_start; j0 < j_start; j0 += BC) {')
one = sub(s, 'let total = G * nt;', 'let total = min(G * nt, 1u);')
one = sub(one, LOOP_DQ, 'for (var j0 = j_start; j0 < min(n_end, j_start + BC); j0 += BC) {')
noep = re.sub(r'^(\s*)(write_block\(GRAD_\w+,.*\);)$', r'\1if (P.Nq == 4294967295u) { \2 }', zero, flags=re.M)
assert noep.count('if (P.Nq == 4294967295u)') == 3, noep.count('if (P.Nq == 4294967295u)')
for name, text in [('zero', zero), ('zero-noep', noep), ('one', one)]:
    open(f'{out}/{name}.wgsl', 'w').write(text)

f = open(fwd_src).read()
LOOP_F = 'for (var j0 = j_start; j0 < n_end; j0 += BC) {'
fzero = sub(f, LOOP_F, 'for (var j0 = j_start; j0 < j_start; j0 += BC) {')
fone = sub(f, LOOP_F, 'for (var j0 = j_start; j0 < min(n_end, j_start + BC); j0 += BC) {')
for name, text in [('zero', fzero), ('zero-noep', fzero), ('one', fone)]:
    open(f'{out}/{name}-fwd.wgsl', 'w').write(text)

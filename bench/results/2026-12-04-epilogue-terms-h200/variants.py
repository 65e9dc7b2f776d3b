#!/usr/bin/env python3
"""Timing-only variants of the tensor-core backward (shaders/flash_bwd_sgmm.wgsl), wrong results by design:
what the 53 us a D = 128 dkdv workgroup pays besides its rows is made of (issue 37, the short calls).
  noglob   the epilogue without its global traffic: no old values read, no dK/dV/dQ written (its spills to
           workgroup memory and its barriers kept: write_block runs only under a condition never true)
  direct   the epilogue replaced by subgroupMatrixStore of each accumulator straight to the gradient
           buffer (no spills, no barriers, no old values, no scale): the lever's floor
  noprol   no resident rows loaded (the prologue's staging rounds and barriers gone; products on zeros)
Usage: variants.py SRC OUTDIR  (writes OUTDIR/<variant>.wgsl)"""
import re, sys
src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
def sub(text, old, new, count=1):
    assert text.count(old) == count, f'{old!r} found {text.count(old)} times, expected {count}'
    return text.replace(old, new)
noglob = sub(s, 'if (load && P.accumulate != 0u) {', 'if (load && P.accumulate == 4294967295u) {')
noglob = re.sub(r'^(\s*)(write_block\(GRAD_\w+,.*\);)$', r'\1if (P.Nq == 4294967295u) { \2 }', noglob, flags=re.M)
assert noglob.count('if (P.Nq == 4294967295u)') == 3
# dkdv's epilogue: from its first old_block to the end of its unrolled loop; dq's likewise.
kv = re.compile(r'  var ok = old_block\(GRAD_DK.*?\{\{/for\}\}\n\}', re.S)
q = re.compile(r'  var oq = old_block\(GRAD_DQ.*?\{\{/for\}\}\n\}', re.S)
assert len(kv.findall(s)) == 1 and len(q.findall(s)) == 1
direct = kv.sub(lambda m: '  {{#for db < D/16}}subgroupMatrixStore<row_major>(&dk, (kv_row0 + jr) * D + {{db}}u * 16u, dk{{db}}, D);\n'
                '  subgroupMatrixStore<row_major>(&dv, (kv_row0 + jr) * D + {{db}}u * 16u, dv{{db}}, D);\n  {{/for}}\n}', s)
direct = q.sub(lambda m: '  {{#for db < D/16}}subgroupMatrixStore<row_major>(&dq, (row0 + ir) * D + {{db}}u * 16u, dq{{db}}, D);\n  {{/for}}\n}', direct)
noprol = sub(s, 'resident_rows(true, kv_row0 + j0, P.Nk - j0, tid, &a_reg, &b_reg);', '// no prologue')
noprol = sub(noprol, 'resident_rows(false, row0 + i0, P.Nq - i0, tid, &a_reg, &b_reg);', '// no prologue')
for name, text in [('noglob', noglob), ('direct', direct), ('noprol', noprol)]:
    open(f'{out}/{name}.wgsl', 'w').write(text)

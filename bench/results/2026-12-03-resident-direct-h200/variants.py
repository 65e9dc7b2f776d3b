#!/usr/bin/env python3
"""Timing-only variants of the tensor-core backward (shaders/flash_bwd_sgmm.wgsl), wrong results by design:
how much of a short call's fixed cost the prologue is (issue 37).
  nopro       the resident rows (dkdv: K, V; dq: Q, dO) are not loaded: the prologue's global loads, staging,
              barriers and matrix loads skipped, the tile loop and epilogue as shipped (S = 0, so P = e^-LSE: finite,
              the same control flow)
  nopro-zero  nopro with no tiles either (variants of bench/results/2026-12-03-fixed-cost-h200's `zero`)
Usage: variants.py SRC OUTDIR  (writes OUTDIR/<variant>.wgsl)"""
import sys
src, out = sys.argv[1], sys.argv[2]
s = open(src).read()
def sub(text, old, new):
    assert text.count(old) == 1, f'{old!r} found {text.count(old)} times, expected 1'
    return text.replace(old, new)
nopro = sub(s, 'resident_rows(true, kv_row0 + j0, P.Nk - j0, tid, &a_reg, &b_reg);', '')
nopro = sub(nopro, 'resident_rows(false, row0 + i0, P.Nq - i0, tid, &a_reg, &b_reg);', '')
zero = sub(nopro, 'let total = G * nt;', 'let total = 0u * G * nt;')
zero = sub(zero, 'for (var j0 = j_start; j0 < n_end; j0 += BC) {', 'for (var j0 = j_start; j0 < j_start; j0 += BC) {')
for name, text in [('nopro', nopro), ('nopro-zero', zero)]:
    open(f'{out}/{name}.wgsl', 'w').write(text)

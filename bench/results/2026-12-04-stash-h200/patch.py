"""The backward's staging split up, and a fix (a record): patch.py VARIANT ROOT rewrites ROOT/shaders (a copy of the tree).
Profile variants (results wrong, only times count), in shaders/flash_bwd_sgmm.wgsl:
  nofetch  the tiles' global loads replaced by finite values made of the address (LSE and Δ: small constants)
  nostore  no workgroup stores of the staged words (the non-finite vote keeps the loads alive)
  novote   no non-finite vote while staging
  nostats  no LSE and Δ staged in dkdv's loop
The fix (exact):
  rot      each lane stores its word's 8 halves in a rotated order (by s = (row + 3·(chunk / 8)) % 4 words), so
           that the 32 lanes of a 16-bit store hit 32 banks at D = 64 (at most 2 a bank at the other head dims) where
           they hit 8 (4-5 lanes a bank); in both tensor-core kernels' put8 (forward and backward)"""
import re, sys
v, root = sys.argv[1], sys.argv[2]
def edit(rel, pairs):
    p = f'{root}/{rel}'
    s = open(p).read()
    for old, new in pairs:
        n = s.count(old)
        assert n == 1, (v, rel, old, n)
        s = s.replace(old, new)
    open(p, 'w').write(s)
B = 'shaders/flash_bwd_sgmm.wgsl'
if v == 'nofetch':
    edit(B, [('if (kv) { x = k[at]; y = v[at]; } else { x = q[at]; y = dout[at]; }', 'x = vec4<u32>(at & 0x3bff3bffu); y = vec4<u32>((at + 1u) & 0x3bff3bffu);'),
             ('let x = lse[row0 + i0 + tid];', 'let x = f32(i0 + tid) * 1e-6;'),
             ('dr = delta[row0 + i0 + tid];', 'dr = 1e-3;')])
elif v == 'nostore':
    edit(B, [('      put8(false, e, ar[t]);\n      put8(true, e, br[t]);\n', '')])
elif v == 'novote':
    edit(B, [('      if (tc_nonfinite8(ar[t]) || tc_nonfinite8(br[t])) { atomicOr(&nf[0], 1u); }\n', '')])
elif v == 'nostats':
    edit(B, [('      stash_rows(tid, true);\n', '      stash_rows(tid, false);\n'), ('        fetch_stats(row1, i1, tid);\n', '')])
elif v == 'rot':
    edit('shaders/sgmm_common.wgsl', [('fn halves8(', '''// w's words rotated by s (w.yzwx at s = 1): halves8 of it is w's halves from 2·s on, cyclically.
fn rot_words(w: vec4<u32>, s: u32) -> vec4<u32> {
  return select(select(select(w, w.yzwx, s == 1u), w.zwxy, s == 2u), w.wxyz, s == 3u);
}

fn halves8(''')])
    edit(B, [('''  let h = halves8(w);
  let row = e / D8;
  let at = (row % 16u) * DP + (e % D8) * 8u;
  {{#for x < 8}}if (into_do) { dOs[row / 16u][at + {{x}}u] = h[{{x}}]; } else { Qs[row / 16u][at + {{x}}u] = h[{{x}}]; }
  {{/for}}''', '''  let row = e / D8;
  let s = (row + 3u * ((e % D8) / 8u)) % 4u;
  let h = halves8(rot_words(w, s));
  let at = (row % 16u) * DP + (e % D8) * 8u;
  {{#for x < 8}}{
    let j = at + ({{x}}u + 2u * s) % 8u;
    if (into_do) { dOs[row / 16u][j] = h[{{x}}]; } else { Qs[row / 16u][j] = h[{{x}}]; }
  }
  {{/for}}''')])
    edit('shaders/flash_fwd_sgmm.wgsl', [('''  let h = halves8(w);
  let row = e / D8;
  let at = (row % 16u) * DP + (e % D8) * 8u;
  {{#for x < 8}}if (into_v) { Vs[row / 16u][at + {{x}}u] = h[{{x}}]; } else { Ks[row / 16u][at + {{x}}u] = h[{{x}}]; }
  {{/for}}''', '''  let row = e / D8;
  let s = (row + 3u * ((e % D8) / 8u)) % 4u;
  let h = halves8(rot_words(w, s));
  let at = (row % 16u) * DP + (e % D8) * 8u;
  {{#for x < 8}}{
    let j = at + ({{x}}u + 2u * s) % 8u;
    if (into_v) { Vs[row / 16u][j] = h[{{x}}]; } else { Ks[row / 16u][j] = h[{{x}}]; }
  }
  {{/for}}''')])
else:
    sys.exit(f'unknown variant {v}')

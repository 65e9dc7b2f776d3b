"""A profile of the tensor-core backward by subtraction (a record; results are wrong, only times count):
patch.py VARIANT FILE rewrites shaders/flash_bwd_sgmm.wgsl in a copy of the tree with one phase of the
tile loops removed from both kernels (dkdv and dq_main):
  noexp   P and dS without exp2, LSE or Δ (P = S, dS = dP; dq: dS = dP − S); the reads and writes stay
  nopv    no second products (dV += Pᵀ dO, dK += dSᵀ Q; dQ += dS K) and their matrix loads
  nos     no first products (Sᵀ = K Qᵀ, dPᵀ = V dOᵀ; S, dP): zero blocks stored
  nostash no staging in the loop (the tiles' global fetch, its workgroup stores and the vote die with it)
  nobar   no workgroup barrier inside the tile loops (rare_tile's first one included)"""
import re, sys
v, path = sys.argv[1], sys.argv[2]
s = open(path).read()
def sub(old, new, count=1):
    global s
    n = s.count(old)
    assert n == count, (v, old, n)
    s = s.replace(old, new)
if v == 'noexp':
    sub('let x = p_and_ds(Sa[sg][at + col], dPa[sg][at + col], lse2_s[qc], delta_s[qc]);', 'let x = vec2<f32>(Sa[sg][at + col], dPa[sg][at + col]);')
    sub('ds = p_and_ds(Sa[sg][at + col], dPa[sg][at + col], l2, dl).y;', 'ds = dPa[sg][at + col] - Sa[sg][at + col];')
elif v == 'nopv':
    for pat in [r'dv\{\{db\}\} = subgroupMatrixMultiplyAccumulate\(pt,[^;]*;', r'dk\{\{db\}\} = subgroupMatrixMultiplyAccumulate\(dst,[^;]*;', r'dq\{\{db\}\} = subgroupMatrixMultiplyAccumulate\(dsm,[^;]*;']:
        s, n = re.subn(pat, '', s); assert n == 1, (v, pat, n)
elif v == 'nos':
    for pat in [r's_acc = subgroupMatrixMultiplyAccumulate\([^;]*;', r'p_acc = subgroupMatrixMultiplyAccumulate\([^;]*;']:
        s, n = re.subn(pat, '', s); assert n == 1, (v, pat, n)
elif v == 'nostash':
    sub('      stash_rows(tid, true);\n', '\n')
    sub('    stash_rows(tid, false);           // K into Qs, V into dOs\n', '\n')
elif v == 'nobar':
    for start, end in [('for (var t = 0u; t < total; t++) {', '// dK·scale and dV'), ('for (var j0 = j_start; j0 < n_end; j0 += BC) {', '// dQ·scale')]:
        a = s.index(start); b = s.index(end, a)
        body = s[a:b]; assert body.count('workgroupBarrier();') >= 3, (v, start)
        s = s[:a] + body.replace('workgroupBarrier();', '') + s[b:]
    sub('  workgroupBarrier();\n  if (full) { return false; }', '  if (full) { return false; }')
else:
    sys.exit(f'unknown variant {v}')
open(path, 'w').write(s)

"""The forward's vote only where read, without a live workgroup key range (a record): patch.py VARIANT ROOT.
  va  the tile's "every row sees every key" test recomputed per tile (shared_keys(i0, i0 + BR)) instead of
      wg_keys held across the tile loop (2 registers more a lane: the D split at 512 invocations is tight)
  vb  va, and the D split (DS = 2) votes on every tile again (as before 7c26263, after which its forward lost 4–9% at D = 128)"""
import sys
v, root = sys.argv[1], sys.argv[2]
p = f'{root}/shaders/flash_fwd_sgmm.wgsl'
s = open(p).read()
def sub(old, new, n=1):
    global s
    assert s.count(old) == n, (old, s.count(old))
    s = s.replace(old, new)
sub("  let wg_keys = shared_keys(i0, i0 + BR);            // and of the workgroup (uniform: the V vote's tiles)\n", "")
part = "!all_see(shared_keys(i0, i0 + BR), j0, j0 + BC)"
if v == 'vb':
    sub("stash_kv(tid, 0u, !all_see(wg_keys, j0, j0 + BC))", f"stash_kv(tid, 0u, DS > 1u || {part})")
    sub("stash_v(tid, par, !all_see(wg_keys, j0, j0 + BC))", f"stash_v(tid, par, DS > 1u || {part})")
s = s.replace("!all_see(wg_keys, j0, j0 + BC)", part)
assert 'wg_keys' not in s
open(p, 'w').write(s)

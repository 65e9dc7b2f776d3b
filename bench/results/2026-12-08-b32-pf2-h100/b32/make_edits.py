"""Writes edits.json (bench/apply-edits.py) for the next device call: the portable backward (flash_bwd_tiles.wgsl's
chunk_word) reading f16 storage's Q, K, V and dO words as u32 pairs, bitcast as read, as the forward does since
3d7cf67 (+3.2-6.7% there on an H100: ../2026-12-07-u32-h100). f16 storage only (the edited shader reads each word as
two u32): the same bits, so bitwise the same gradients.
- b32: IW vec2<u32> and h4 in flash_bwd_tiles.wgsl, each of chunk_word's four loads through h4.
Usage: python3 bench/results/wip-bwd32/make_edits.py (from the project root, against the shaders of 177329e)."""
import json, pathlib

F = 'shaders/flash_bwd_tiles.wgsl'
b32 = [
  ('alias IW = vec4<ST>;\n', 'alias IW = vec2<u32>;   // variant b32: f16 storage read as u32 pairs\n'
   'fn h4(x: IW) -> vec4<ST> { return bitcast<vec4<ST>>(x); }\n'),
  ('if (second) { a = dout[g]; } else { a = q[g]; }', 'if (second) { a = h4(dout[g]); } else { a = h4(q[g]); }'),
  ('if (second) { a = v[g]; } else { a = k[g]; }', 'if (second) { a = h4(v[g]); } else { a = h4(k[g]); }'),
]
text = pathlib.Path(F).read_text(encoding='utf-8')
for old, _ in b32:
    assert text.count(old) == 1, old
out = {'b32': [{'file': F, 'old': o, 'new': n} for o, n in b32]}
pathlib.Path('bench/results/wip-bwd32/edits.json').write_text(json.dumps(out, indent=1) + '\n', encoding='utf-8')
print('wrote', ', '.join(out))

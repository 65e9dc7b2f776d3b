"""Writes edits.json (bench/apply-edits.py) for a device call: f16 storage's portable forward, where its words are
widened to f32 as staged (WT = f32: D = 128, the default there since ce1b81e), widening them with unpack2x16float
straight from the u32 pairs it reads since 3d7cf67, instead of bitcasting to vec4<f16> and converting:
- unp: q_word / kv_word return the raw IW words (vec2<u32>), the prefetch registers pq / pk hold them raw (as
  ../2026-12-07-u32-h100's u32p did), and w4 = vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y)) widens each word
  as it is staged. No f16 value is left in the f32-products module (the SPIR-V loses its Float16 capability).
  The same values (unpack2x16float is exact), so bitwise the same O and LSE.
f16 storage only (w4 reads IW as u32 pairs); meant for D = 128 (at D = 64, WT = f16, w4 would widen and narrow again).
Usage: python3 bench/results/wip-unp/make_edits.py (from the project root, against the shaders of 20ac8dc)."""
import json, pathlib

F = 'shaders/flash_fwd.wgsl'
unp = [
  ('fn h4(x: IW) -> vec4<ST> { return bitcast<vec4<ST>>(x); }\n',
   'fn h4(x: IW) -> vec4<ST> { return bitcast<vec4<ST>>(x); }\n'
   '// variant unp: a raw word widened by unpacking its halves (f16 storage only)\n'
   'fn w4(x: IW) -> vec4<WT> { return vec4<WT>(vec4<f32>(unpack2x16float(x.x), unpack2x16float(x.y))); }\n'),
  ('fn q_word(q_row0: u32, i0: u32, ch: u32, e: u32) -> vec4<ST> {\n  var t = vec4<ST>();\n'
   '  if (i0 + e / DC < P.Nq) { t = h4(q[(q_row0 + i0 + e / DC) * D4 + ch * DC + e % DC]); }',
   'fn q_word(q_row0: u32, i0: u32, ch: u32, e: u32) -> IW {\n  var t = IW();\n'
   '  if (i0 + e / DC < P.Nq) { t = q[(q_row0 + i0 + e / DC) * D4 + ch * DC + e % DC]; }'),
  ('fn kv_word(kv_row0: u32, j0: u32, ch: u32, e: u32, use_v: bool) -> vec4<ST> {\n  var t = vec4<ST>();',
   'fn kv_word(kv_row0: u32, j0: u32, ch: u32, e: u32, use_v: bool) -> IW {\n  var t = IW();'),
  ('if (use_v) { t = h4(v[g]); } else { t = h4(k[g]); }', 'if (use_v) { t = v[g]; } else { t = k[g]; }'),
  ('Qs[e / DC][e % DC] = vec4<WT>(q_word(q_row0, i0, ch, e));', 'Qs[e / DC][e % DC] = w4(q_word(q_row0, i0, ch, e));'),
  ('KVs[e / DC][e % DC] = vec4<WT>(kv_word(kv_row0, j0, ch, e, use_v));', 'KVs[e / DC][e % DC] = w4(kv_word(kv_row0, j0, ch, e, use_v));'),
  ('var<private> pq: array<vec4<ST>, LQ>;\nvar<private> pk: array<vec4<ST>, LK>;',
   'var<private> pq: array<IW, LQ>;\nvar<private> pk: array<IW, LK>;'),
  ('Qs[e / DC][e % DC] = vec4<WT>(pq[{{x}}u]);', 'Qs[e / DC][e % DC] = w4(pq[{{x}}u]);'),
  ('KVs[e / DC][e % DC] = vec4<WT>(pk[{{x}}u]);', 'KVs[e / DC][e % DC] = w4(pk[{{x}}u]);'),
  ('word_bits(pk[{{x}}u])', 'word_bits(h4(pk[{{x}}u]))'),
]
text = pathlib.Path(F).read_text(encoding='utf-8')
for old, _ in unp:
    assert text.count(old) == 1, old
out = {'unp': [{'file': F, 'old': o, 'new': n} for o, n in unp]}
pathlib.Path('bench/results/wip-unp/edits.json').write_text(json.dumps(out, indent=1) + '\n', encoding='utf-8')
print('wrote', ', '.join(out))

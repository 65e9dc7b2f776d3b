"""Writes edits.json (bench/apply-edits.py) for the 2026-12-07 (21:00 UTC) device calls: f16 storage's words read
from storage as u32 pairs instead of 16-bit words (the f16 forward's gap to f32 storage at the same plan). For f16
storage only (the edited shader reads every Q, K and V word as two u32; f32 storage would need four): the same bits,
so bitwise the same O and LSE.
- u32w: q_word and kv_word load vec2<u32> and bitcast it to vec4<f16> at once (the prefetch registers hold f16).
- u32p: as u32w, but the prefetch registers (pq, pk) hold the raw u32 pairs, bitcast where they are staged.
Usage: python3 bench/results/2026-12-07-u32-h100/make_edits.py (from the project root)."""
import json, pathlib

F = 'shaders/flash_fwd.wgsl'
ALIAS = ('alias IW = vec4<ST>;\n',
         'alias IW = vec2<u32>;   // variant: f16 storage read as u32 pairs\n'
         'fn h4(x: vec2<u32>) -> vec4<ST> { return vec4<ST>(bitcast<vec2<ST>>(x.x), bitcast<vec2<ST>>(x.y)); }\n')
QW = ('if (i0 + e / DC < P.Nq) { t = q[(q_row0 + i0 + e / DC) * D4 + ch * DC + e % DC]; }',
      'if (i0 + e / DC < P.Nq) { t = h4(q[(q_row0 + i0 + e / DC) * D4 + ch * DC + e % DC]); }')
KW = ('if (use_v) { t = v[g]; } else { t = k[g]; }', 'if (use_v) { t = h4(v[g]); } else { t = h4(k[g]); }')
QR = ('word_bits(q[(q_row0 + i) * D4 + c * DC + d])', 'word_bits(h4(q[(q_row0 + i) * D4 + c * DC + d]))')   # f16 products' Q range
u32w = [ALIAS, QW, KW, QR]

# u32p: q_word / kv_word give the raw pair (zeros past the rows: 0 bits, +0.0 halves, as vec4<f16>() is).
u32p = [ALIAS, QR,
  ('staged_max = max(staged_max, word_bits(pk[{{x}}u]));', 'staged_max = max(staged_max, word_bits(h4(pk[{{x}}u])));'),
  ('fn q_word(q_row0: u32, i0: u32, ch: u32, e: u32) -> vec4<ST> {\n  var t = vec4<ST>();', 'fn q_word(q_row0: u32, i0: u32, ch: u32, e: u32) -> IW {\n  var t = IW();'),
  ('fn kv_word(kv_row0: u32, j0: u32, ch: u32, e: u32, use_v: bool) -> vec4<ST> {\n  var t = vec4<ST>();', 'fn kv_word(kv_row0: u32, j0: u32, ch: u32, e: u32, use_v: bool) -> IW {\n  var t = IW();'),
  ('Qs[e / DC][e % DC] = vec4<WT>(q_word(q_row0, i0, ch, e));', 'Qs[e / DC][e % DC] = vec4<WT>(h4(q_word(q_row0, i0, ch, e)));'),
  ('KVs[e / DC][e % DC] = vec4<WT>(kv_word(kv_row0, j0, ch, e, use_v));', 'KVs[e / DC][e % DC] = vec4<WT>(h4(kv_word(kv_row0, j0, ch, e, use_v)));'),
  ('var<private> pq: array<vec4<ST>, LQ>;\nvar<private> pk: array<vec4<ST>, LK>;', 'var<private> pq: array<IW, LQ>;\nvar<private> pk: array<IW, LK>;'),
  ('Qs[e / DC][e % DC] = vec4<WT>(pq[{{x}}u]);', 'Qs[e / DC][e % DC] = vec4<WT>(h4(pq[{{x}}u]));'),
  ('KVs[e / DC][e % DC] = vec4<WT>(pk[{{x}}u]);', 'KVs[e / DC][e % DC] = vec4<WT>(h4(pk[{{x}}u]));'),
]
text = pathlib.Path(F).read_text(encoding='utf-8')
out = {}
for name, edits in (('u32w', u32w), ('u32p', u32p)):
    for old, _ in edits:
        assert text.count(old) == 1, (name, old)
    out[name] = [{'file': F, 'old': o, 'new': n} for o, n in edits]
pathlib.Path('bench/results/2026-12-07-u32-h100/edits.json').write_text(json.dumps(out, indent=1) + '\n', encoding='utf-8')
print('wrote', ', '.join(out))

"""Writes edits.json (text replacements in shaders/flash_fwd.wgsl; bench/apply-edits.py applies one) for the call's
variant, bitwise the same O and LSE as the tree:
  ranges  the rows' visible key ranges (klo, khi: 8 registers held through every tile) taken only where a tile is masked
          and at the end (row_ranges); full tiles skip the score mask (every key visible to every row below Nq)."""
import json, pathlib
here = pathlib.Path(__file__).parent
F = 'shaders/flash_fwd.wgsl'
E = []
def edit(old, new): E.append({'file': F, 'old': old, 'new': new})
edit("""  // Keys visible to row ty + TY·rr: klo[rr] <= j < khi[rr] (klo = khi: a masked row).
  var klo = array<u32, RR>();
  var khi = array<u32, RR>();
  {{#loop rr < RR}}{ let kr = key_range(rb.i0 + ty + {{rr}}u * TY);
    klo[{{rr}}u] = kr.x;
    khi[{{rr}}u] = kr.y; }
  {{/loop}}
""", "")
edit("""@compute @workgroup_size(WG)
fn main(""", """// Keys visible to the invocation's rows ty + TY·rr: [kr[rr].x, kr[rr].y) (x = y: a masked row), taken where a tile is
// masked and at the end, so that no register holds them through the full tiles.
fn row_ranges(i0: u32, ty: u32) -> array<vec2<u32>, RR> {
  var kr = array<vec2<u32>, RR>();
  {{#loop rr < RR}}kr[{{rr}}u] = key_range(i0 + ty + {{rr}}u * TY);
  {{/loop}}return kr;
}

@compute @workgroup_size(WG)
fn main(""")
edit("""    {{#loop rr < RR}}{ let x = select(ninf, s[{{rr}}u] * P.scale, (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u])));
      s[{{rr}}u] = x;""", """    var kr = array<vec2<u32>, RR>();
    if (cls == TILE_FULL) { {{#loop rr < RR}}kr[{{rr}}u] = vec2<u32>(0u, 4294967295u); {{/loop}}} else { kr = row_ranges(rb.i0, ty); }
    {{#loop rr < RR}}{ let x = select(ninf, s[{{rr}}u] * P.scale, (keys >= vec4<u32>(kr[{{rr}}u].x)) & (keys < vec4<u32>(kr[{{rr}}u].y)));
      s[{{rr}}u] = x;""")
edit("""fn pv_masked(acc: ptr<function, Acc>, tx_: u32, ty_: u32, j0: u32, klo: array<u32, RR>, khi: array<u32, RR>) {""",
     """fn pv_masked(acc: ptr<function, Acc>, tx_: u32, ty_: u32, j0: u32, kr: array<vec2<u32>, RR>) {""")
edit("""    w[{{rr}}u] = (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u]));""",
     """    w[{{rr}}u] = (keys >= vec4<u32>(kr[{{rr}}u].x)) & (keys < vec4<u32>(kr[{{rr}}u].y));""")
edit("""      {{#for _ < NPK}}if (cls == TILE_FULL) { pv_full(&acc[{{c}}u], tx, ty); } else { pv_masked(&acc[{{c}}u], tx, ty, j0, klo, khi); } }{{/for}}{{#for _ < PK}}""",
     """      {{#for _ < NPK}}if (cls == TILE_FULL) { pv_full(&acc[{{c}}u], tx, ty); } else { pv_masked(&acc[{{c}}u], tx, ty, j0, row_ranges(rb.i0, ty)); } }{{/for}}{{#for _ < PK}}""")
edit("""      else if (cls == TILE_FULL) { pv_full(&acc[{{c}}u], tx, ty); } else { pv_masked(&acc[{{c}}u], tx, ty, j0, klo, khi); } }{{/for}}""",
     """      else if (cls == TILE_FULL) { pv_full(&acc[{{c}}u], tx, ty); } else { pv_masked(&acc[{{c}}u], tx, ty, j0, row_ranges(rb.i0, ty)); } }{{/for}}""")
edit("""  var w = array<vec3<f32>, RR>();
  {{#loop rr < RR}}{""", """  var w = array<vec3<f32>, RR>();
  let kr = row_ranges(rb.i0, ty);
  {{#loop rr < RR}}{""")
edit("""    if (khi[{{rr}}u] > klo[{{rr}}u]) {""", """    if (kr[{{rr}}u].y > kr[{{rr}}u].x) {""")
edit("""      let seen = khi[{{rr}}u] > klo[{{rr}}u];""", """      let seen = kr[{{rr}}u].y > kr[{{rr}}u].x;""")
(here / 'edits.json').write_text(json.dumps({'ranges': E}, indent=1), encoding='utf-8')

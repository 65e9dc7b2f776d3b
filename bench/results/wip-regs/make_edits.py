"""Writes edits.json (text replacements in shaders/flash_fwd.wgsl; bench/apply-edits.py applies one) for the call's
variants:
  ranges  the rows' visible key ranges (klo, khi: 8 registers held through every tile) taken only where a tile is masked
          and at the end (row_ranges); full tiles skip the score mask (every key visible to every row below Nq).
          Bitwise the same O and LSE as the tree.
  lanes   S in four lanes, forward (scores) and backward (blocks: S or Sᵀ; dP keeps its dot): a vec4 fma a word into
          sl[rr·4 + cc] (lane e the chain of the words' components e, in word order whatever the chunk), the lanes summed
          (l.x + l.y) + (l.z + l.w) once a tile, so that the backward's S is bitwise the forward's. 4 fma a word and
          score where dot() and an add took 5 issue slots; 48 more registers for the lanes. From lanes.patch (git diff
          -U4 of the tree at 3f7baf3 with it). Not bitwise the tree: on lavapipe, test/backward.test.ts's inputs ×30
          kernel / plain-f32 error 0.65–0.77 (worst 9.5e-1) against the tree's 0.75–0.79 (worst 1.02e+1); forward,
          backward, mask, NaN, extremes, f16 and f16-products tests pass (122 of 122 run).
  lanes2  as lanes with two lanes of vec2 fma (xy, then zw, a word; summed l.x + l.y), forward and backward: the same
          4 operations a word and score for 16 more registers instead of 48 (lanes, measured on an H100: the forward
          +8% at D = 64, flat at D = 128, the backward 3–5% slower with 255 registers and a spill at D = 128). From
          lanes2.patch. On lavapipe the inputs ×30 ratio 0.83 (tree 0.75–0.79); forward, backward, extremes, mask,
          NaN, f16, f16-products, robust-spirv and shaders tests pass (130 of 130 run).
Two ablations, for timing only (their O and LSE are wrong: the bench's checkErr says so, and their copy of
src/bench/run.ts times them anyway): what the forward's
latency between barriers costs at D = 128, where fewer registers and fewer operations did not help (lanes-h100):
  nobar   the forward's tile loop without its workgroup barriers (two a staging point, one before P~ where it shares
          Q's array): every invocation runs on without waiting for the others;
  noq     Q's chunks never staged in the tile loop where they are staged per tile with prefetch 2 (S reads whatever
          Q's array holds): the cost of loading Q's chunks again every tile."""
import json, pathlib, re, subprocess
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
ranges = E


def from_patch(patch):
    """Edits from a unified diff against HEAD's files: each hunk's old text (context and removed lines) and new text."""
    out = []
    for part in re.split(r'^diff --git ', patch, flags=re.M)[1:]:
        name = re.search(r'^\+\+\+ b/(.*)$', part, re.M).group(1)
        for hunk in re.split(r'^@@.*@@.*\n', part, flags=re.M)[1:]:
            old, new = [], []
            for line in hunk.splitlines(keepends=True):
                if line.startswith('\\'): continue
                if line[0] in ' -': old.append(line[1:])
                if line[0] in ' +': new.append(line[1:])
            out.append({'file': name, 'old': ''.join(old), 'new': ''.join(new)})
    return out


E = []
edit("""    workgroupBarrier();   // the previous chunk's (or tile's) readers of Qs, KVs and P~ are done
    stage_s(q_row0, i0, kv_row0, j0, c, tid);
    workgroupBarrier();
""", """    stage_s(q_row0, i0, kv_row0, j0, c, tid);
""")
edit("""    {{#for _ < QP}}workgroupBarrier();   // P~ shares Qs (QP): every invocation's last reads of Q's chunk are done
    {{/for}}""", """    """)
edit("""      workgroupBarrier();   // every S is computed (KVs free) and P~ is written; chunk c-1's readers are done
      if (PF == 0u) { stage_kv(rb.kv_row0, j0, {{c}}u, tid, true); } else { stash_kv(tid); }""",
     """      if (PF == 0u) { stage_kv(rb.kv_row0, j0, {{c}}u, tid, true); } else { stash_kv(tid); }""")
edit("""      if ({{c}}u == 0u) { clear_ranges(&kmax, tid); }{{/for}}
      workgroupBarrier();
""", """      if ({{c}}u == 0u) { clear_ranges(&kmax, tid); }{{/for}}
""")
nobar = E
E = []
edit("""    if (NCH > 1u) { if (PF == 2u) { stage_q(q_row0, i0, c, tid); } else { stash_q(tid); } }""",
     """    if (NCH > 1u) { if (PF == 2u) { } else { stash_q(tid); } }""")
noq = E
# The bench times no configuration whose float64 spot check fails; the ablations' copies time theirs anyway.
timed_anyway = {'file': 'src/bench/run.ts',
                'old': """    if (!r.ok) state.failures.push(`D=${D} ${p} causal=${c}: error ${r.err.toExponential(2)} over tolerance — no speed reported`);
    else checks.set(`${D}:${p}:${c}`, r.err);""",
                'new': """    if (!r.ok) state.failures.push(`D=${D} ${p} causal=${c}: error ${r.err.toExponential(2)} over tolerance (an ablation: timed anyway)`);
    checks.set(`${D}:${p}:${c}`, r.err);"""}
variants = {'ranges': ranges, 'nobar': nobar + [timed_anyway], 'noq': noq + [timed_anyway]}
for name in ('lanes', 'lanes2'):
    variants[name] = from_patch((here / f'{name}.patch').read_text(encoding='utf-8'))
(here / 'edits.json').write_text(json.dumps(variants, indent=1), encoding='utf-8')

"""Writes edits.json (text replacements in shaders/flash_fwd.wgsl) for the call's variants:
  norescale  acc *= alpha only where some row of the invocation moved its max (alpha = 1 elsewhere: the same bits)
  kvonly     the prefetch loads K and V ahead, Q's chunks between their barriers (pq's 4·LQ registers freed)
  both       the two."""
import json, pathlib
here = pathlib.Path(__file__).parent
F = 'shaders/flash_fwd.wgsl'
resc_old = """      {{PV}}[ty + {{rr}}u * TY][tx] = {{#for _ < NPK}}p{{/for}}{{#for _ < PK}}p_f16(p){{/for}};
      let a = alpha[{{rr}}u / 4u][{{rr}}u % 4u];
      {{#loop c < NCH}}{{#loop u < DU}}acc[{{c}}u][{{rr}}u * DU + {{u}}u] *= a;
      {{/loop}}{{/loop}}
    }
    {{/loop}}
"""
resc_new = """      {{PV}}[ty + {{rr}}u * TY][tx] = {{#for _ < NPK}}p{{/for}}{{#for _ < PK}}p_f16(p){{/for}};
    }
    {{/loop}}
    var grew = false;
    {{#for g < RR/4}}grew = grew || any(alpha[{{g}}u] != vec4<f32>(1.0));
    {{/for}}if (grew) {
      {{#loop rr < RR}}{ let a = alpha[{{rr}}u / 4u][{{rr}}u % 4u];
        {{#loop c < NCH}}{{#loop u < DU}}acc[{{c}}u][{{rr}}u * DU + {{u}}u] *= a;
        {{/loop}}{{/loop}} }
      {{/loop}}
    }
"""
kv1_old = """    if (NCH > 1u) { stash_q(tid); }
    stash_kv(tid);"""
kv1_new = """    if (NCH > 1u) { stage_q(q_row0, i0, c, tid); }
    stash_kv(tid);"""
kv2_old = """fn fetch_s(q_row0: u32, i0: u32, kv_row0: u32, j0: u32, c: u32, tid: u32) {
  if (NCH > 1u) { fetch_q(q_row0, i0, c, tid); }
"""
kv2_new = """fn fetch_s(q_row0: u32, i0: u32, kv_row0: u32, j0: u32, c: u32, tid: u32) {
"""
resc = [{'file': F, 'old': resc_old, 'new': resc_new}]
kv = [{'file': F, 'old': kv1_old, 'new': kv1_new}, {'file': F, 'old': kv2_old, 'new': kv2_new}]
(here / 'edits.json').write_text(json.dumps({'norescale': resc, 'kvonly': kv, 'both': resc + kv}, indent=1), encoding='utf-8')

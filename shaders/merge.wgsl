// Two entry points over `rows` rows of D f32 values:
//   add       the sums of partial dK/dV (all_gather's reduce-scatter adds the pieces of its shard; p2p's ring
//             adds onto its running sums in the backward kernel itself): o_acc += o_new, NaN kept wherever
//             either side holds it (as PyTorch);
//   finalize  a ring's forward results made final after its last step: a row still without mass
//             (LSE = +inf: its visible keys' scores were all −inf in every step, common.wgsl
//             no_mass_lse) becomes what the untiled softmax gives, 0/0: O = NaN and LSE = NaN. Other
//             rows are left as they are.
// (The forward's merge of partial (O, LSE) results runs in the forward's epilogue: common.wgsl
// lse_merge.)
//
// Work split: one invocation per 4 values of a row (vec4, D % 8 == 0), a workgroup of RPW whole
// rows (WG = RPW · D/4), so neighbouring invocations touch neighbouring 16 bytes (coalesced).
// 2-D dispatch for many rows: workgroup (x, y) holds rows (y·nwg.x + x)·RPW….
//
// Bounds (the module runs without Dawn's robustness clamps, src/gpu/node.ts): the host binds
// rows·D values of each and dispatches ≥ ceil(rows / RPW) workgroups; a row ≥ M.rows does
// nothing; c < D4.
const D4: u32 = {{D}}u / 4u;
const RPW: u32 = {{RPW}}u;
const WG: u32 = RPW * D4;

// struct MergeParams (rows): generated from src/kernels/merge.ts MERGE_PARAMS.
{{MERGE_PARAMS}}

// The bindings: MERGE_ADD_BINDINGS or MERGE_FINALIZE_BINDINGS (src/kernels/merge.ts), one module each.
{{BINDINGS}}

// is_nan() and nan_f32(): nonfinite.wgsl, appended by src/kernels/shaders.ts.
fn is_nan4(x: vec4<f32>) -> vec4<bool> {
  return vec4<bool>(is_nan(x.x), is_nan(x.y), is_nan(x.z), is_nan(x.w));
}

{{#for _ < ADD}}
@compute @workgroup_size(WG)
fn add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) tid: u32) {
  let row = (wg.y * nwg.x + wg.x) * RPW + tid / D4;
  if (row >= M.rows) { return; }
  let at = row * D4 + tid % D4;
  let xa = o_acc[at];
  let xb = o_new[at];
  let n = nan_f32();
  o_acc[at] = select(xa + xb, vec4<f32>(n, n, n, n), is_nan4(xa) | is_nan4(xb));
}
{{/for}}
{{#for _ < FINALIZE}}
// Every invocation of a row reads its LSE before the barrier; the row's first writes it after (a
// storage barrier: workgroupBarrier orders only workgroup memory).
@compute @workgroup_size(WG)
fn finalize(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) tid: u32) {
  let row = (wg.y * nwg.x + wg.x) * RPW + tid / D4;
  let live = row < M.rows;
  var none = false;
  if (live) { none = bitcast<u32>(lse[row]) == 0x7f800000u; }   // +inf: no mass in any step
  storageBarrier();
  if (none) {
    let n = nan_f32();
    o[row * D4 + tid % D4] = vec4<f32>(n, n, n, n);
    if (tid % D4 == 0u) { lse[row] = n; }
  }
}
{{/for}}

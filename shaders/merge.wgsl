// Exact merge of two partial attention results over disjoint key sets (the ring's
// update_out_and_lse), in f32:
//   LSE = log(exp(LSE_a) + exp(LSE_b)) = max + log(1 + exp(min − max))
//   O   = σ(LSE_a − LSE_b)·O_a + σ(LSE_b − LSE_a)·O_b
// written so that no exp overflows; a side with LSE = −inf (no visible key) contributes nothing.
// o_acc/lse_acc are updated in place. One invocation per row; 2-D dispatch for many rows.
const D: u32 = {{D}}u;
const WG: u32 = {{WG}}u;
const NEG_HALF: f32 = -5.0e29;

struct MergeParams {
  rows: u32,
  _pad0: u32,
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<uniform> M: MergeParams;
@group(0) @binding(1) var<storage, read_write> o_acc: array<f32>;
@group(0) @binding(2) var<storage, read_write> lse_acc: array<f32>;
@group(0) @binding(3) var<storage, read> o_new: array<f32>;
@group(0) @binding(4) var<storage, read> lse_new: array<f32>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let row = (wg.y * nwg.x + wg.x) * WG + tid;
  if (row >= M.rows) { return; }
  let b = lse_new[row];
  if (!(b > NEG_HALF)) { return; }          // nothing new for this row
  let a = lse_acc[row];
  if (!(a > NEG_HALF)) {                     // nothing accumulated yet: take the new part
    for (var d = 0u; d < D; d++) { o_acc[row * D + d] = o_new[row * D + d]; }
    lse_acc[row] = b;
    return;
  }
  let hi = max(a, b);
  let e = exp(min(a, b) - hi);               // in (0, 1]
  let w_hi = 1.0 / (1.0 + e);                // σ(hi − lo)
  let w_lo = e * w_hi;                       // σ(lo − hi)
  var wa = w_lo;
  var wb = w_hi;
  if (a >= b) { wa = w_hi; wb = w_lo; }
  for (var d = 0u; d < D; d++) {
    o_acc[row * D + d] = wa * o_acc[row * D + d] + wb * o_new[row * D + d];
  }
  lse_acc[row] = hi + log(1.0 + e);
}

// Partial dK/dV sums of the ring backward: o_acc += o_new over `rows` rows of D values (f32).
// (Each step computes its partial into scratch while the running sum travels, then adds.)
@compute @workgroup_size(WG)
fn add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
       @builtin(local_invocation_index) tid: u32) {
  let row = (wg.y * nwg.x + wg.x) * WG + tid;
  if (row >= M.rows) { return; }
  for (var d = 0u; d < D; d++) { o_acc[row * D + d] += o_new[row * D + d]; }
}

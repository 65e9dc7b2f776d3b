// Exact merge of two partial attention results over disjoint key sets (the ring's
// update_out_and_lse), in f32:
//   LSE = log(exp(LSE_a) + exp(LSE_b)) = max + log(1 + exp(min − max))
//   O   = σ(LSE_a − LSE_b)·O_a + σ(LSE_b − LSE_a)·O_b
// written so that no exp overflows. Non-finite values follow the reference (IEEE arithmetic of
// the untiled softmax, src/reference/attention.ts):
//   - a side with LSE = −inf (no visible key, O = 0) contributes nothing; two such stay masked;
//   - a NaN LSE on either side (a NaN or +inf score in that key set) makes the row's O and LSE NaN;
//   - a NaN element of O on either side makes that element NaN (a NaN in V), whatever its weight.
// NaN is tested by bits, never by comparisons, which compilers may fold.
// o_acc/lse_acc are updated in place.
//
// Work split: one invocation per 4 values of a row (vec4, D % 8 == 0), a workgroup of RPW whole
// rows (WG = RPW · D/4), so neighbouring invocations touch neighbouring 16 bytes (coalesced).
// Every invocation of a row reads the row's two LSEs; the row's first invocation writes the new
// LSE after a workgroup barrier (all reads of lse_acc done: a row never straddles workgroups).
// 2-D dispatch for many rows: workgroup (x, y) holds items (y·nwg.x + x)·RPW…; item k is row
// (k / span)·n + r0 + k % span: rows r0 … r0 + span − 1 of each run of n rows (a head's; the ring
// merges only the rows its forward reached), every row when span = n and r0 = 0.
//
// Bounds (the module runs without Dawn's robustness clamps, src/gpu/node.ts): the host binds
// (rows / span)·n·D values of O and (rows / span)·n of LSE (rows a multiple of span, 1 ≤ span,
// r0 + span ≤ n) and dispatches ≥ ceil(rows / RPW) workgroups; an item k ≥ M.rows does nothing
// after the barrier, so k / span < rows / span and row < (rows / span)·n; c < D4.
const D4: u32 = {{D}}u / 4u;
const RPW: u32 = {{RPW}}u;
const WG: u32 = RPW * D4;
const NEG_HALF: f32 = -5.0e29;

// struct MergeParams (rows: items (merge) or rows (add); n: rows per run; r0: the first row
// merged of each run; span: rows merged per run): generated from src/kernels/merge.ts MERGE_PARAMS.
{{MERGE_PARAMS}}

// The bindings: MERGE_BINDINGS (src/kernels/merge.ts).
{{BINDINGS}}

fn is_nan(x: f32) -> bool {
  let b = bitcast<u32>(x);
  return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u;
}

fn is_nan4(x: vec4<f32>) -> vec4<bool> {
  return vec4<bool>(is_nan(x.x), is_nan(x.y), is_nan(x.z), is_nan(x.w));
}

fn nan_f32() -> f32 {
  var bits = 0x7fc00000u; // a runtime value: NaN is not a valid WGSL constant
  return bitcast<f32>(bits);
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let item = (wg.y * nwg.x + wg.x) * RPW + tid / D4;
  let row = (item / M.span) * M.n + M.r0 + item % M.span;
  let c = tid % D4;
  let live = item < M.rows;
  var a = 0.0;
  var b = 0.0;
  if (live) {
    a = lse_acc[row];
    b = lse_new[row];
  }
  workgroupBarrier();                        // the row's reads of lse_acc come before its write
  if (!live) { return; }
  let at = row * D4 + c;
  if (is_nan(a) || is_nan(b)) {              // a NaN score on either side: the whole row is NaN
    let n = nan_f32();
    o_acc[at] = vec4<f32>(n, n, n, n);
    if (c == 0u) { lse_acc[row] = n; }
    return;
  }
  if (!(b > NEG_HALF)) { return; }          // nothing new for this row
  if (!(a > NEG_HALF)) {                     // nothing accumulated yet: take the new part
    o_acc[at] = o_new[at];
    if (c == 0u) { lse_acc[row] = b; }
    return;
  }
  let hi = max(a, b);
  let e = exp(min(a, b) - hi);               // in (0, 1]
  let w_hi = 1.0 / (1.0 + e);                // σ(hi − lo)
  let w_lo = e * w_hi;                       // σ(lo − hi)
  var wa = w_lo;
  var wb = w_hi;
  if (a >= b) { wa = w_hi; wb = w_lo; }
  let xa = o_acc[at];
  let xb = o_new[at];
  let n = nan_f32();
  // A NaN element is kept even where its weight is 0.
  o_acc[at] = select(wa * xa + wb * xb, vec4<f32>(n, n, n, n), is_nan4(xa) | is_nan4(xb));
  if (c == 0u) { lse_acc[row] = hi + log(1.0 + e); }
}

// Partial dK/dV sums of the ring backward: o_acc += o_new over `rows` rows of D values (f32).
// (Each step computes its partial into scratch while the running sum travels, then adds.)
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

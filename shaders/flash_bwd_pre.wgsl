// Backward preprocess, for the portable and the tensor-core backward alike:
//   Δ_i = Σ_d dO_id · O_id                                 dispatch (ceil(Nq / WG), Hq, B)
// One invocation per query row, 16-byte loads. Bounds: rows i < Nq only, so
// row·D/4 + d4 < B·Hq·Nq·D/4. Non-finite values: the reference's Δ is Σ_j P_ij dP_ij; where dO_i
// holds an Inf or NaN, every visible dP_ij − Δ_i of it is NaN (Inf − Inf, or NaN), which
// dO_i · O_i alone would not give (one Inf times a finite O is Inf): so Δ_i = NaN then. An
// Inf or NaN in O (from V, Q or K) reaches Δ through the product as it reaches the reference's.

// Storage words (the bindings: PREPROCESS_BINDINGS, src/kernels/flashBackward.ts): O and dO in
// vec4s of their element types.
alias OW = vec4<OT>;
alias IW = vec4<ST>;

@compute @workgroup_size(WG)
fn preprocess(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let i = wg.x * WG + tid;
  if (i >= P.Nq) { return; }
  let row = (wg.z * P.Hq + wg.y) * P.Nq + i;
  var acc = 0.0;
  var bad = false;
  for (var d4 = 0u; d4 < rt(D / 4u); d4++) {
    let g = vec4<f32>(dout[row * (D / 4u) + d4]);
    bad = bad || any((bitcast<vec4<u32>>(g) & vec4<u32>(0x7f800000u)) == vec4<u32>(0x7f800000u));
    acc += dot(g, vec4<f32>(o[row * (D / 4u) + d4]));
  }
  if (bad) { acc = nan_f32(); }
  delta[row] = acc;
}

// Row reductions of the portable forward through workgroup memory (adapters without the
// `subgroups` feature, or with subgroups smaller than a row block). The TX invocations that
// share a row block are tid = ty·TX + tx; each writes its 4 row values, all read the block's.
// Called by every invocation of the workgroup (uniform control flow: it holds barriers).
// Bounds: tid < WG = TX·TY, and base + t < ty·TX + TX ≤ WG.

var<workgroup> red: array<vec4<f32>, WG>;

fn row_max4(x: vec4<f32>, tid: u32) -> vec4<f32> {
  red[tid] = x;
  workgroupBarrier();
  let base = (tid / TX) * TX;
  var r = red[base];
  for (var t = 1u; t < rt(TX); t++) { r = max(r, red[base + t]); }
  workgroupBarrier();
  return r;
}

fn row_sum4(x: vec4<f32>, tid: u32) -> vec4<f32> {
  red[tid] = x;
  workgroupBarrier();
  let base = (tid / TX) * TX;
  var r = red[base];
  for (var t = 1u; t < rt(TX); t++) { r += red[base + t]; }
  workgroupBarrier();
  return r;
}

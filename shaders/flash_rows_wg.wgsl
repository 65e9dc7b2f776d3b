// Row reductions of the portable forward through workgroup memory (adapters without the
// `subgroups` feature, or with subgroups smaller than a row block). The TX invocations that
// share a row block are tid = ty·TX + tx; each writes its rows' values (NG vec4 groups of 4
// rows, Rows in flash_fwd.wgsl; group g at g·WG + tid), all read the block's, in the same order.
// Called by every invocation of the workgroup (uniform control flow: it holds barriers). NG·WG
// vec4 words: 16·NG·WG = 16·(RR/4)·(Br/RR)·(Bc/4) = Br·Bc bytes.
// Bounds: tid < WG = TX·TY, g < NG, and base + t < ty·TX + TX ≤ WG, so g·WG + base + t < NG·WG.

var<workgroup> red: array<vec4<f32>, NG * WG>;

// Stores the invocation's rows in `red` and, after the barrier, returns the values of its row
// block's first invocation (tx = 0), where both reductions start.
fn rows_staged(x: Rows, tid: u32) -> Rows {
  {{#for g < RR/4}}red[{{g}}u * WG + tid] = x[{{g}}u];
  {{/for}}
  workgroupBarrier();
  let base = (tid / TX) * TX;
  var r = Rows();
  {{#for g < RR/4}}r[{{g}}u] = red[{{g}}u * WG + base];
  {{/for}}
  return r;
}

fn row_max(x: Rows, tid: u32) -> Rows {
  var r = rows_staged(x, tid);
  let base = (tid / TX) * TX;
  for (var t = 1u; t < rt(TX); t++) {
    {{#for g < RR/4}}r[{{g}}u] = max(r[{{g}}u], red[{{g}}u * WG + base + t]);
    {{/for}}
  }
  workgroupBarrier();
  return r;
}

fn row_sum(x: Rows, tid: u32) -> Rows {
  var r = rows_staged(x, tid);
  let base = (tid / TX) * TX;
  for (var t = 1u; t < rt(TX); t++) {
    {{#for g < RR/4}}r[{{g}}u] += red[{{g}}u * WG + base + t];
    {{/for}}
  }
  workgroupBarrier();
  return r;
}

{{#for _ < PK}}
// f16 products (flash_fwd.wgsl PK): without subgroups every invocation takes its own word to the
// workgroup's atomic.
const RANGE_LEAD: u32 = 1u;
const RANGE_STRIDE: u32 = 1u;   // q_range: each invocation reads every word of its rows
fn range_max(x: u32) -> u32 { return x; }
{{/for}}

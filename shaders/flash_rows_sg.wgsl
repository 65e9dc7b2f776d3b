// Row reductions of the portable forward through subgroup shuffles (the `subgroups` feature).
// The TX invocations that share a row block are tid = ty·TX + tx, consecutive local indices;
// the host takes this file only when the adapter's smallest subgroup holds at least TX
// invocations, so they sit in one subgroup, at lanes that differ only in their low log2(TX)
// bits (subgroups of a 1-D workgroup are consecutive local indices on every driver we run on;
// the forward tests check the result on lavapipe and the H200). XOR of those bits stays
// inside the row block. Components are rows: NG vec4 groups of 4 (Rows, flash_fwd.wgsl), each
// reduced on its own.

// Max over the row block; a NaN operand may be dropped (WGSL max), but the NaN score still
// reaches P~ = exp(NaN − m) and so ℓ, O and LSE.
fn row_max(x: Rows, tid: u32) -> Rows {
  var r = x;
  {{#for g < RR/4}}{{#for b < LOG2TX}}r[{{g}}u] = max(r[{{g}}u], subgroupShuffleXor(r[{{g}}u], 1u << {{b}}u));
  {{/for}}{{/for}}
  return r;
}

fn row_sum(x: Rows, tid: u32) -> Rows {
  var r = x;
  {{#for g < RR/4}}{{#for b < LOG2TX}}r[{{g}}u] += subgroupShuffleXor(r[{{g}}u], 1u << {{b}}u);
  {{/for}}{{/for}}
  return r;
}

{{#for _ < PK}}
// f16 products (flash_fwd.wgsl PK): the largest of the row block's invocations' u32 words; one
// invocation a row block (tx = 0) then takes it to the workgroup's atomic.
const RANGE_LEAD: u32 = TX;
const RANGE_STRIDE: u32 = TX;   // q_range: each of a row block's invocations reads every TX-th word
fn range_max(x: u32) -> u32 {
  var r = x;
  {{#for b < LOG2TX}}r = max(r, subgroupShuffleXor(r, 1u << {{b}}u));
  {{/for}}
  return r;
}
{{/for}}

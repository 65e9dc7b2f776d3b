// Shared header of the attention kernels; the specializer (src/kernels/specialize.ts)
// prepends it to each kernel file and fills in the {{...}} values.
//
// Layout [B, H, N, D] row-major. Query head hq reads K/V head hq / (Hq / Hkv) (grouped query).
// Positions: query i sits at q_off + i·q_stride, key j at k_off + j·k_stride; under causal
// masking key j is visible to query i iff pos_k(j) <= pos_q(i).
{{ENABLES}}
alias ST = {{ST}};          // Q, K, V, dO storage and tile element type (f32, or f16 with shader-f16)
alias OT = {{OT}};          // O element type (f32 for the ring's partial results)
alias GT = {{GT}};          // dQ, dK, dV element type (f32 for the ring's travelling accumulators)
const D: u32 = {{D}}u;      // head dim
const BR: u32 = {{BR}}u;    // Br: query rows per tile
const BC: u32 = {{BC}}u;    // Bc: key rows per tile
const WG: u32 = {{WG}}u;    // invocations per workgroup
// Loop bounds go through rt(): on GPUs it is the identity on a constant, so loops unroll; on
// CPU Vulkan drivers (lavapipe, SwiftShader) it adds the uniform P.zero, which the compiler
// cannot see through, so loops stay loops: unrolled, one forward pipeline at D = 64 takes
// ~16 s to compile on lavapipe, not unrolled ~1 s.
fn rt(x: u32) -> u32 { return x{{RT}}; }
const LOG2E: f32 = 1.4426950408889634;
const LN2: f32 = 0.6931471805599453;
// Masked scores hold NEG_BIG rather than -inf, so that no shader ever computes inf - inf.
const NEG_BIG: f32 = -1.0e30;
const NEG_HALF: f32 = -5.0e29;

struct Params {
  B: u32,
  Hq: u32,
  Hkv: u32,
  Nq: u32,
  Nk: u32,
  causal: u32,
  q_off: i32,
  q_stride: i32,
  k_off: i32,
  k_stride: i32,
  scale: f32,        // softmax scale (1/sqrt(D) by default)
  scale_log2: f32,   // scale · log2(e): scores live in the exp2 domain
  accumulate: u32,   // backward: 1 adds dQ/dK/dV to what the output buffers hold (ring steps)
  zero: u32,         // always 0 (see rt())
  _pad1: u32,
  _pad2: u32,
}

@group(0) @binding(0) var<uniform> P: Params;

fn pos_q(i: u32) -> i32 { return P.q_off + i32(i) * P.q_stride; }
fn pos_k(j: u32) -> i32 { return P.k_off + i32(j) * P.k_stride; }

// Key j is visible to query i (both in range).
fn visible(i: u32, j: u32) -> bool {
  return i < P.Nq && j < P.Nk && (P.causal == 0u || pos_k(j) <= pos_q(i));
}

// One past the last key any of queries [0, i_last] can see (keys are in increasing position).
fn key_end(i_last: u32) -> u32 {
  if (P.causal == 0u) { return P.Nk; }
  let lim = pos_q(i_last) - P.k_off;
  if (lim < 0) { return 0u; }
  return min(P.Nk, u32(lim / P.k_stride) + 1u);
}

// First query that can see key j (queries are in increasing position).
fn query_start(j: u32) -> u32 {
  if (P.causal == 0u) { return 0u; }
  let need = pos_k(j) - P.q_off;
  if (need <= 0) { return 0u; }
  return min(P.Nq, u32((need + P.q_stride - 1) / P.q_stride));
}

fn neg_inf() -> f32 {
  var bits = 0xff800000u; // a runtime value: -inf is not a valid WGSL constant
  return bitcast<f32>(bits);
}

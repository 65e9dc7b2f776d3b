// Ceiling probe (bench only; the attention kernels do not use it): a register-blocked GEMM on
// subgroup matrices, C = A·B with f16 A [M, K] and B [K, N] (row-major) and f32 C [M, N].
// `node bench/ceiling/run.mjs` times it to measure what the tensor-core path through WebGPU
// reaches on a device at all: the attention kernels, which add softmax and its round trip
// through workgroup memory to the same products, cannot go faster (docs/performance.md).
//
// A workgroup of SGM×SGN subgroups computes a BM×BN tile of C, BM = 16·TM·SGM, BN = 16·TN·SGN;
// subgroup (sm, sn) keeps its TM×TN result blocks in registers (c<i>_<j>, unrolled by the
// specializer). K advances BK = 32 at a time: the A (BM×BK) and B (BK×BN) tiles are fetched with
// 16-byte loads into registers one step ahead and stored to workgroup memory; each A block
// loaded from there feeds TN products and each B block TM. M, N, K must be multiples of BM, BN,
// BK (the host checks).
// The host puts enable f16, the subgroup-matrix enables, the uniformity diagnostic and
// shaders/sgmm_common.wgsl in front of it (bench/ceiling/gemm.ts).

struct Dims { M: u32, N: u32, K: u32, pad: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;   // f16, 8 per element
@group(0) @binding(2) var<storage, read> b: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

const SGM: u32 = {{SGM}}u;
const SGN: u32 = {{SGN}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const WG: u32 = 32u * SGM * SGN;
const BM: u32 = 16u * TM * SGM;
const BN: u32 = 16u * TN * SGN;
const BK: u32 = 32u;
const A8: u32 = BM * BK / 8u;           // 16-byte words of an A tile
const B8: u32 = BK * BN / 8u;           // and of a B tile
const LA: u32 = (A8 + WG - 1u) / WG;    // of them per invocation
const LB: u32 = (B8 + WG - 1u) / WG;

// Both are multiples of 16 bytes (the NVIDIA driver's matrix loads need 16-byte alignment).
var<workgroup> As: array<f16, BM * BK>;
var<workgroup> Bs: array<f16, BK * BN>;
var<private> ar: array<vec4<u32>, LA>;
var<private> br: array<vec4<u32>, LB>;

fn fetch(m0: u32, n0: u32, k0: u32, tid: u32) {
  for (var t = 0u; t < LA; t++) {
    let e = tid + t * WG;
    if (e < A8) { ar[t] = a[((m0 + e / (BK / 8u)) * dims.K + k0) / 8u + e % (BK / 8u)]; }
  }
  for (var t = 0u; t < LB; t++) {
    let e = tid + t * WG;
    if (e < B8) { br[t] = b[((k0 + e / (BN / 8u)) * dims.N + n0) / 8u + e % (BN / 8u)]; }
  }
}

// Stores 16-byte word e (8 halves) into Bs or As.
fn put8(into_b: bool, e: u32, w: vec4<u32>) {
  let h = halves8(w);
  {{#for x < 8}}if (into_b) { Bs[e * 8u + {{x}}u] = h[{{x}}]; } else { As[e * 8u + {{x}}u] = h[{{x}}]; }
  {{/for}}
}

fn stash(tid: u32) {
  for (var t = 0u; t < LA; t++) {
    let e = tid + t * WG;
    if (e < A8) { put8(false, e, ar[t]); }
  }
  for (var t = 0u; t < LB; t++) {
    let e = tid + t * WG;
    if (e < B8) { put8(true, e, br[t]); }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let m0 = wg.y * BM;
  let n0 = wg.x * BN;
  let sg = tid / 32u;
  let am = (sg / SGN) * 16u * TM;       // the subgroup's first row in the tile
  let bn = (sg % SGN) * 16u * TN;       // and first column
  {{#for i < TM}}{{#for j < TN}}var c{{i}}_{{j}} = AM();
  {{/for}}let ao{{i}} = (am + {{i}}u * 16u) * BK;
  {{/for}}
  fetch(m0, n0, 0u, tid);
  for (var k0 = 0u; k0 < dims.K; k0 += BK) {
    workgroupBarrier();
    stash(tid);
    workgroupBarrier();
    if (k0 + BK < dims.K) { fetch(m0, n0, k0 + BK, tid); }
    for (var kk = 0u; kk < BK; kk += 16u) {
      {{#for i < TM}}let a{{i}} = subgroupMatrixLoad<LM, row_major>(&As, ao{{i}} + kk, BK);
      {{/for}}
      {{#for j < TN}}let b{{j}} = subgroupMatrixLoad<RM, row_major>(&Bs, kk * BN + bn + {{j}}u * 16u, BN);
      {{/for}}
      {{#for i < TM}}{{#for j < TN}}c{{i}}_{{j}} = subgroupMatrixMultiplyAccumulate(a{{i}}, b{{j}}, c{{i}}_{{j}});
      {{/for}}{{/for}}
    }
  }
  {{#for i < TM}}let co{{i}} = (m0 + am + {{i}}u * 16u) * dims.N + n0 + bn;
  {{#for j < TN}}subgroupMatrixStore<row_major>(&c, co{{i}} + {{j}}u * 16u, c{{i}}_{{j}}, dims.N);
  {{/for}}{{/for}}
}

// Ceiling probe, variant "padded" (bench only): C = A·B, f16 A [M, K] and B [K, N] row-major,
// f32 C [M, N], on subgroup matrices fed from workgroup memory. Against gemm_sgmm.wgsl:
//  - padded rows: the A slice (BM×BK) is stored with row stride SA = BK + 8 halves and the B
//    slice (BK×BN) with SB = BN + 8, so the rows of a 16×16 matrix load start 16 bytes apart
//    modulo 128 and fall in different banks (unpadded, BK = 32 halves = 64 bytes puts every
//    other row in the same banks). Strides and offsets stay multiples of 8 halves = 16 bytes,
//    which the NVIDIA driver's matrix loads need.
//  - double buffering: two copies of each slice; step t computes on copy t % 2 while the next
//    slice, fetched into registers before the products, is stored into the other copy after
//    them: one barrier per step. (The other copy was last read in step t − 1, before its
//    closing barrier; the barrier closing step t orders these stores before step t + 1 reads.)
//  - BK = 16·KS, KS sub-steps unrolled with constant offsets.
//  - gemm_tile() orders the tiles for L2.
// The workgroup arrays As, Bs, their element unit EU (halves per element) and the stores
// put_a / put_b come from a staging snippet the host appends: gemm_stage_f16.wgsl (arrays of
// f16: 8 scalar stores per 16-byte word) or gemm_stage_vec.wgsl (arrays of vec4<u32>: one store).
// A workgroup of SGM×SGN subgroups computes a BM×BN tile, BM = 16·TM·SGM, BN = 16·TN·SGN;
// subgroup (sm, sn) keeps its TM×TN result blocks in registers (c<i>_<j>).
// Bounds: the host requires M % BM = N % BN = K % BK = 0. Global: word e < AW of an A slice is
// A[m0 + e / (BK/8), k0 + 8·(e % (BK/8)) .. +7] with m0 + BM ≤ M, k0 + BK ≤ K; word e < BW of a
// B slice is B[k0 + e / (BN/8), n0 + 8·(e % (BN/8)) .. +7] with n0 + BN ≤ N. Workgroup: copy
// u < 2 of A holds halves u·A_TILE + r·SA + x, r < BM, x < BK + 8, all < 2·A_TILE; likewise B.
// Matrix-builtin arguments hold no parentheses or commas (legacySgmmSpelling rewrites them by
// pattern). The host puts the enables, the uniformity diagnostic, sgmm_common.wgsl and
// gemm_tile.wgsl in front of it (bench/ceiling/gemm.ts).

struct Dims { M: u32, N: u32, K: u32, pad: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<vec4<u32>>;   // f16, 8 per element
@group(0) @binding(2) var<storage, read> b: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

const SGM: u32 = {{SGM}}u;
const SGN: u32 = {{SGN}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const KS: u32 = {{KS}}u;                // 16-deep sub-steps per slice
const WG: u32 = 32u * SGM * SGN;
const BM: u32 = 16u * TM * SGM;
const BN: u32 = 16u * TN * SGN;
const BK: u32 = 16u * KS;
const SA: u32 = BK + 8u;                // row strides in workgroup memory, in halves
const SB: u32 = BN + 8u;
const A_TILE: u32 = BM * SA;            // halves of one copy of the A slice
const B_TILE: u32 = BK * SB;            // and of the B slice
const AW: u32 = BM * BK / 8u;           // 16-byte words of an A slice
const BW: u32 = BK * BN / 8u;           // and of a B slice
const LA: u32 = (AW + WG - 1u) / WG;    // of them per invocation
const LB: u32 = (BW + WG - 1u) / WG;

var<private> ar: array<vec4<u32>, LA>;
var<private> br: array<vec4<u32>, LB>;

// Global → registers: the A and B slices at k0, 16-byte words, consecutive invocations on
// consecutive words of a row.
fn fetch(m0: u32, n0: u32, k0: u32, tid: u32) {
  for (var t = 0u; t < LA; t++) {
    let e = tid + t * WG;
    if (e < AW) { ar[t] = a[((m0 + e / (BK / 8u)) * dims.K + k0) / 8u + e % (BK / 8u)]; }
  }
  for (var t = 0u; t < LB; t++) {
    let e = tid + t * WG;
    if (e < BW) { br[t] = b[((k0 + e / (BN / 8u)) * dims.N + n0) / 8u + e % (BN / 8u)]; }
  }
}

// Registers → copy u (0 or 1) of the workgroup slices, rows padded.
fn stash(u: u32, tid: u32) {
  for (var t = 0u; t < LA; t++) {
    let e = tid + t * WG;
    if (e < AW) { put_a(u * A_TILE + (e / (BK / 8u)) * SA + (e % (BK / 8u)) * 8u, ar[t]); }
  }
  for (var t = 0u; t < LB; t++) {
    let e = tid + t * WG;
    if (e < BW) { put_b(u * B_TILE + (e / (BN / 8u)) * SB + (e % (BN / 8u)) * 8u, br[t]); }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tilesN = dims.N / BN;
  let tile = gemm_tile(wg.y * tilesN + wg.x, dims.M / BM, tilesN);
  let m0 = tile.x * BM;
  let n0 = tile.y * BN;
  let sg = tid / 32u;
  let am = (sg / SGN) * 16u * TM;       // the subgroup's first row in the tile
  let bn = (sg % SGN) * 16u * TN;       // and first column
  let SAE = SA / EU;                    // the strides in elements of As, Bs
  let SBE = SB / EU;
  {{#for i < TM}}{{#for j < TN}}var c{{i}}_{{j}} = AM();
  {{/for}}{{/for}}
  fetch(m0, n0, 0u, tid);
  stash(0u, tid);
  workgroupBarrier();
  let steps = dims.K / BK;
  for (var t = 0u; t < steps; t++) {
    let cur = t % 2u;                   // the copy this step reads
    let more = t + 1u < steps;
    if (more) { fetch(m0, n0, (t + 1u) * BK, tid); }
    let ab = cur * A_TILE + am * SA;    // the subgroup's first A row in this copy, in halves
    let bb = cur * B_TILE + bn;         // its first B column, row 0
    {{#for s < KS}}{{#for i < TM}}let ao{{s}}_{{i}} = ab + {{i}}u * 16u * SA + {{s}}u * 16u;
    let a{{s}}_{{i}} = subgroupMatrixLoad<LM, row_major>(&As, ao{{s}}_{{i}} / EU, SAE);
    {{/for}}{{#for j < TN}}let bo{{s}}_{{j}} = bb + {{s}}u * 16u * SB + {{j}}u * 16u;
    let b{{s}}_{{j}} = subgroupMatrixLoad<RM, row_major>(&Bs, bo{{s}}_{{j}} / EU, SBE);
    {{/for}}{{#for i < TM}}{{#for j < TN}}c{{i}}_{{j}} = subgroupMatrixMultiplyAccumulate(a{{s}}_{{i}}, b{{s}}_{{j}}, c{{i}}_{{j}});
    {{/for}}{{/for}}{{/for}}
    if (more) { stash(1u - cur, tid); }
    workgroupBarrier();
  }
  {{#for i < TM}}let co{{i}} = (m0 + am + {{i}}u * 16u) * dims.N + n0 + bn;
  {{#for j < TN}}subgroupMatrixStore<row_major>(&c, co{{i}} + {{j}}u * 16u, c{{i}}_{{j}}, dims.N);
  {{/for}}{{/for}}
}

// Ceiling probe, variant "padded3" (bench only): C = A·B, f16 A [M, K] and B [K, N] row-major,
// f32 C [M, N], on subgroup matrices fed from workgroup memory. The same padded slices, tile
// order, fetch and layout as gemm_sgmm_padded.wgsl (read that file first), but a three-stage
// pipeline: three copies of each K-slice, slice s in copy s % 3, so that the barrier of a step
// no longer waits for the global loads.
//
// Step t, in program order (every invocation):
//   fetch(t + 2) → registers;  products of slice t (reads copy t % 3);  BARRIER(t);
//   stash the registers → copy (t + 2) % 3.
// The double-buffered kernel must stash slice t + 1 before its barrier (step t + 1 reads it
// right after), so that barrier waits on the slowest invocation's global loads. Here the
// barrier comes first: it waits only for every subgroup's products of slice t, and each
// invocation then stashes (waiting on its own loads) and goes on to slice t + 1, which is
// already in place. The loads issued before the products of slice t have those products and
// the barrier wait to land.
//
// Race freedom with one barrier per step. Between BARRIER(t − 1) and BARRIER(t) (or the
// prologue's barrier, for t = 0) an invocation does only: stash slice t + 1 into copy
// (t + 1) % 3 (the tail of step t − 1), fetch(t + 2) (global memory only) and the products of
// slice t from copy t % 3. So in that interval the workgroup writes one copy and reads
// another, never the same one, whichever subgroups run ahead:
//  - read after write: slice t + 1 is stashed in this interval and read after BARRIER(t);
//    slice t was stashed before BARRIER(t − 1).
//  - write after read: copy (t + 1) % 3 = (t − 2) % 3 was last read by the products of slice
//    t − 2, before BARRIER(t − 2), two barriers back.
//  - the third copy, (t + 2) % 3 = (t − 1) % 3, is untouched (read before BARRIER(t − 1),
//    written after BARRIER(t)).
// With two copies, the stash after BARRIER(t) would have to hold slice t + 1, read by the
// products that follow it with no barrier between them: the third copy is what lets the
// barrier precede the stash.
// The last two steps fetch and stash nothing; the prologue stashes slices 0 and 1 and
// closes with a barrier.
//
// The workgroup arrays As, Bs are declared here (three copies; the staging snippets of the
// padded kernel declare two), as f16 with the 8-scalar-store put_a / put_b of
// gemm_stage_f16.wgsl (why f16: see there). Bounds as in gemm_sgmm_padded.wgsl: the host
// requires M % BM = N % BN = K % BK = 0; copy u < 3 of A holds halves u·A_TILE + r·SA + x,
// r < BM, x < BK + 8, all < 3·A_TILE; likewise B. Matrix-builtin arguments hold no
// parentheses or commas (legacySgmmSpelling rewrites them by pattern). The host puts the
// enables, the uniformity diagnostic, sgmm_common.wgsl and gemm_tile.wgsl in front of it
// (bench/ceiling/gemm.ts); the 3 copies are counted by gemmWorkgroupBytes.

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
const EU: u32 = 1u;                     // halves per element of As, Bs

// Three copies of each slice; A_TILE and B_TILE are multiples of 8 halves, so every copy and
// every row starts on 16 bytes.
var<workgroup> As: array<f16, 3u * A_TILE>;
var<workgroup> Bs: array<f16, 3u * B_TILE>;

var<private> ar: array<vec4<u32>, LA>;
var<private> br: array<vec4<u32>, LB>;

fn put_a(o: u32, w: vec4<u32>) {
  let h = halves8(w);
  {{#for x < 8}}As[o + {{x}}u] = h[{{x}}];
  {{/for}}
}

fn put_b(o: u32, w: vec4<u32>) {
  let h = halves8(w);
  {{#for x < 8}}Bs[o + {{x}}u] = h[{{x}}];
  {{/for}}
}

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

// Registers → copy u (0, 1 or 2) of the workgroup slices, rows padded.
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
  let steps = dims.K / BK;
  // Prologue: slices 0 and 1 into copies 0 and 1, visible to all after the barrier.
  fetch(m0, n0, 0u, tid);
  stash(0u, tid);
  if (steps > 1u) {
    fetch(m0, n0, BK, tid);
    stash(1u, tid);
  }
  workgroupBarrier();
  for (var t = 0u; t < steps; t++) {
    let cur = t % 3u;                   // the copy this step reads
    let more = t + 2u < steps;
    if (more) { fetch(m0, n0, (t + 2u) * BK, tid); }
    let ab = cur * A_TILE + am * SA;    // the subgroup's first A row in this copy, in halves
    let bb = cur * B_TILE + bn;         // its first B column, row 0
    {{#for s < KS}}{{#for i < TM}}let ao{{s}}_{{i}} = ab + {{i}}u * 16u * SA + {{s}}u * 16u;
    let a{{s}}_{{i}} = subgroupMatrixLoad<LM, row_major>(&As, ao{{s}}_{{i}} / EU, SAE);
    {{/for}}{{#for j < TN}}let bo{{s}}_{{j}} = bb + {{s}}u * 16u * SB + {{j}}u * 16u;
    let b{{s}}_{{j}} = subgroupMatrixLoad<RM, row_major>(&Bs, bo{{s}}_{{j}} / EU, SBE);
    {{/for}}{{#for i < TM}}{{#for j < TN}}c{{i}}_{{j}} = subgroupMatrixMultiplyAccumulate(a{{s}}_{{i}}, b{{s}}_{{j}}, c{{i}}_{{j}});
    {{/for}}{{/for}}{{/for}}
    // BARRIER(t): orders the stash of slice t + 1 (before it, tail of step t − 1) before the
    // products of slice t + 1 (after it), and the products of slice t before the stash into
    // copy t % 3 (tail of step t + 1). It waits for no global load.
    workgroupBarrier();
    // Slice t + 2 into copy (t + 2) % 3 = (t − 1) % 3, last read before BARRIER(t − 1); step
    // t + 1 reads copy (t + 1) % 3 meanwhile; BARRIER(t + 1) orders these stores before the
    // products of slice t + 2.
    if (more) { stash((t + 2u) % 3u, tid); }
  }
  {{#for i < TM}}let co{{i}} = (m0 + am + {{i}}u * 16u) * dims.N + n0 + bn;
  {{#for j < TN}}subgroupMatrixStore<row_major>(&c, co{{i}} + {{j}}u * 16u, c{{i}}_{{j}}, dims.N);
  {{/for}}{{/for}}
}

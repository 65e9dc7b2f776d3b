// Ceiling probe, variant "direct" (bench only): C = A·B, f16 A [M, K] and B [K, N] row-major,
// f32 C [M, N], on subgroup matrices loaded straight from the storage buffers: no workgroup
// memory, no barriers. The reuse that workgroup tiles give elsewhere comes from L1/L2 here:
// the SGM×SGN subgroups of a workgroup cover one BM×BN tile of C (BM = 16·TM·SGM,
// BN = 16·TN·SGN), so the SGN subgroups of a row read the same A rows and the SGM of a column
// the same B columns at about the same time; gemm_tile() orders the tiles for L2.
// Each subgroup keeps TM×TN result blocks in registers (c<i>_<j>) and walks K in steps of
// BK = 16·KS: per step it loads TM A blocks and TN B blocks for each of the KS sub-steps, then
// issues the TM·TN·KS products (the loads of a step are all in flight before its first product).
// Bounds: the host requires M % BM = N % BN = K % BK = 0, so every index is in range by
// construction: an A block (row0 + 16i .. +15, k0 + 16s .. +15) has row0 + 16·TM ≤ M and
// k0 + BK ≤ K; a B block (k0 + 16s .. +15, col0 + 16j .. +15) has col0 + 16·TN ≤ N.
// Alignment: the NVIDIA driver's matrix loads need 16-byte-aligned offsets and strides: every
// offset is a row index times K (or N) plus a multiple of 16 halves, and K, N are multiples of 16.
// Matrix-builtin arguments hold no parentheses or commas (legacySgmmSpelling rewrites them by
// pattern). The host puts the enables, the uniformity diagnostic, sgmm_common.wgsl and
// gemm_tile.wgsl in front of it (bench/ceiling/gemm.ts).

struct Dims { M: u32, N: u32, K: u32, pad: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<f16>;
@group(0) @binding(2) var<storage, read> b: array<f16>;
@group(0) @binding(3) var<storage, read_write> c: array<f32>;

const SGM: u32 = {{SGM}}u;
const SGN: u32 = {{SGN}}u;
const TM: u32 = {{TM}}u;
const TN: u32 = {{TN}}u;
const KS: u32 = {{KS}}u;                // 16-deep sub-steps per step of K
const WG: u32 = 32u * SGM * SGN;
const BM: u32 = 16u * TM * SGM;
const BN: u32 = 16u * TN * SGN;
const BK: u32 = 16u * KS;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tilesN = dims.N / BN;
  let tile = gemm_tile(wg.y * tilesN + wg.x, dims.M / BM, tilesN);
  let sg = tid / 32u;
  let row0 = tile.x * BM + (sg / SGN) * 16u * TM;   // the subgroup's first row of C
  let col0 = tile.y * BN + (sg % SGN) * 16u * TN;   // and first column
  let K = dims.K;
  let N = dims.N;
  let K16 = 16u * K;                    // 16 rows of A
  let N16 = 16u * N;                    // 16 rows of B
  {{#for i < TM}}{{#for j < TN}}var c{{i}}_{{j}} = AM();
  {{/for}}{{/for}}
  var ao = row0 * K;                    // A[row0, k0]
  var bo = col0;                        // B[k0, col0]
  for (var k0 = 0u; k0 < K; k0 += BK) {
    {{#for s < KS}}{{#for i < TM}}let a{{s}}_{{i}} = subgroupMatrixLoad<LM, row_major>(&a, ao + {{i}}u * K16 + {{s}}u * 16u, K);
    {{/for}}{{#for j < TN}}let b{{s}}_{{j}} = subgroupMatrixLoad<RM, row_major>(&b, bo + {{s}}u * N16 + {{j}}u * 16u, N);
    {{/for}}{{/for}}
    {{#for s < KS}}{{#for i < TM}}{{#for j < TN}}c{{i}}_{{j}} = subgroupMatrixMultiplyAccumulate(a{{s}}_{{i}}, b{{s}}_{{j}}, c{{i}}_{{j}});
    {{/for}}{{/for}}{{/for}}
    ao += BK;
    bo += BK * N;
  }
  {{#for i < TM}}let co{{i}} = (row0 + {{i}}u * 16u) * N + col0;
  {{#for j < TN}}subgroupMatrixStore<row_major>(&c, co{{i}} + {{j}}u * 16u, c{{i}}_{{j}}, N);
  {{/for}}{{/for}}
}

// The portable ceiling probe: C = A·B in f32 (A [M, K], B [K, N], C [M, N] row-major), plain
// WGSL, register-tiled. Not an attention kernel: `node bench/ceiling/run.mjs` times it to show
// what a plain-WGSL f32 matrix product reaches on a device, the yardstick of the portable
// attention kernels (which run the same kind of inner loop).
// A workgroup of 16×16 invocations owns a BM×BN block of C (BM = 64·TMV, BN = 64·TNV) and
// walks K in steps of BK, staging Aᵀ and B in workgroup memory with 16-byte loads.
// Invocation (ty, tx) owns rows 4·(ty + 16·i) + r and vec4 columns tx + 16·j of C
// (i < TMV, r < 4, j < TNV) in registers indexed by constants; each step of k is an outer
// product of TMV vec4 of Aᵀ with TNV vec4 of B.
// The host requires M % BM = N % BN = K % BK = 0, so every index below is in range by
// construction: workgroup indices kk·(BM/4) + m4 < BK·BM/4 and kk·(BN/4) + n4 < BK·BN/4;
// global reads (m0 + m)·K/4 + k4 < M·K/4 and (k0 + kk)·N/4 + n4 < K·N/4; writes < M·N/4.
// Dispatch: (N / BN, M / BM).

struct Dims { M: u32, N: u32, K: u32, _pad: u32 }
@group(0) @binding(0) var<uniform> dims: Dims;
@group(0) @binding(1) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> c: array<vec4<f32>>;

const TMV: u32 = {{TMV}}u;
const TNV: u32 = {{TNV}}u;
const BK: u32 = {{BK}}u;
const BM4: u32 = 16u * TMV;   // vec4 words of a column of Aᵀ (BM / 4)
const BN4: u32 = 16u * TNV;   // vec4 words of a row of B (BN / 4)
const LA: u32 = BM4 * BK / 256u;   // vec4 loads per invocation (A tile: 4·BM4 rows × BK/4 words)
const LB: u32 = BK * BN4 / 256u;

var<workgroup> At: array<vec4<f32>, BK * BM4>;   // Aᵀ: At[kk·BM4 + m4] = A[4·m4 .. 4·m4 + 3][kk]
var<workgroup> Bt: array<vec4<f32>, BK * BN4>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tx = tid % 16u;
  let ty = tid / 16u;
  let m0 = wg.y * 64u * TMV;
  let n0 = wg.x * 64u * TNV;
  let K4 = dims.K / 4u;
  let N4 = dims.N / 4u;
  var acc = array<vec4<f32>, 4 * TMV * TNV>();
  for (var k0 = 0u; k0 < dims.K; k0 += BK) {
    workgroupBarrier();
    for (var x = 0u; x < LA; x++) {
      let e = tid + x * 256u;
      let m = e / (BK / 4u);
      let k4 = e % (BK / 4u);
      let w = a[(m0 + m) * K4 + k0 / 4u + k4];
      {{#for z < 4}}At[(4u * k4 + {{z}}u) * BM4 + m / 4u][m % 4u] = w[{{z}}];
      {{/for}}
    }
    for (var x = 0u; x < LB; x++) {
      let e = tid + x * 256u;
      let kk = e / BN4;
      let n4 = e % BN4;
      Bt[kk * BN4 + n4] = b[(k0 + kk) * N4 + n0 / 4u + n4];
    }
    workgroupBarrier();
    for (var kk = 0u; kk < BK; kk++) {
      {{#for j < TNV}}let b{{j}} = Bt[kk * BN4 + tx + {{j}}u * 16u];
      {{/for}}
      {{#for i < TMV}}{ let w = At[kk * BM4 + ty + {{i}}u * 16u];
        {{#for j < TNV}}acc[(4u * {{i}}u + 0u) * TNV + {{j}}u] += w.x * b{{j}};
        acc[(4u * {{i}}u + 1u) * TNV + {{j}}u] += w.y * b{{j}};
        acc[(4u * {{i}}u + 2u) * TNV + {{j}}u] += w.z * b{{j}};
        acc[(4u * {{i}}u + 3u) * TNV + {{j}}u] += w.w * b{{j}};
        {{/for}} }
      {{/for}}
    }
  }
  {{#for i < TMV}}{{#for j < TNV}}{{#for r < 4}}c[(m0 + 4u * (ty + {{i}}u * 16u) + {{r}}u) * N4 + n0 / 4u + tx + {{j}}u * 16u] = acc[(4u * {{i}}u + {{r}}u) * TNV + {{j}}u];
  {{/for}}{{/for}}{{/for}}
}

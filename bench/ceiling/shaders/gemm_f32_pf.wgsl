// The portable ceiling probe, prefetched: gemm_f32.wgsl's product (the same blocks, invocation
// layout and register tile; read that file first) with two changes that fast CUDA SGEMMs make:
//   - the next K step's global words are loaded into registers (pa, pb: LA and LB vec4 words,
//     indexed by constants) before the current step's products, and stored to workgroup memory
//     after them, so their latency hides behind the products;
//   - with HALVES = 2, workgroup memory holds two K steps (double-buffered): step s reads half
//     s % 2 while the stores fill the other half, so one barrier a step instead of two. The
//     barrier at the end of step s orders step s's reads of half s % 2 before step s + 1's stores
//     into it, and step s's stores into the other half before step s + 1's reads of it. With
//     HALVES = 1 (the prefetch alone, to tell the two apart) a second barrier before the stores
//     keeps them behind every invocation's reads of the one buffer.
// Bounds as in gemm_f32.wgsl (the host requires M % BM = N % BN = K % BK = 0); the halves add
// h·BK·BM4 < HALVES·BK·BM4 and h·BK·BN4 < HALVES·BK·BN4 with h < HALVES. Dispatch: (N / BN, M / BM).

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
const LA: u32 = {{LA}}u;      // vec4 loads per invocation and step: BM4·BK / 256
const LB: u32 = {{LB}}u;      // BK·BN4 / 256
const HALVES: u32 = {{HALVES}}u;   // K steps workgroup memory holds (2: double-buffered)

var<workgroup> At: array<vec4<f32>, HALVES * BK * BM4>;   // HALVES halves; Aᵀ: At[h·BK·BM4 + kk·BM4 + m4] = A[4·m4 .. 4·m4 + 3][kk]
var<workgroup> Bt: array<vec4<f32>, HALVES * BK * BN4>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tx = tid % 16u;
  let ty = tid / 16u;
  let m0 = wg.y * 64u * TMV;
  let n0 = wg.x * 64u * TNV;
  let K4 = dims.K / 4u;
  let N4 = dims.N / 4u;
  let steps = dims.K / BK;
  var acc = array<vec4<f32>, 4 * TMV * TNV>();
  var pa: array<vec4<f32>, LA>;
  var pb: array<vec4<f32>, LB>;
  // Step 0's words, fetched and stored into half 0.
  {{#for x < LA}}pa[{{x}}] = a[(m0 + (tid + {{x}}u * 256u) / (BK / 4u)) * K4 + (tid + {{x}}u * 256u) % (BK / 4u)];
  {{/for}}{{#for x < LB}}pb[{{x}}] = b[((tid + {{x}}u * 256u) / BN4) * N4 + n0 / 4u + (tid + {{x}}u * 256u) % BN4];
  {{/for}}{{#for x < LA}}{ let e = tid + {{x}}u * 256u; let m = e / (BK / 4u); let k4 = e % (BK / 4u);
    {{#for z < 4}}At[(4u * k4 + {{z}}u) * BM4 + m / 4u][m % 4u] = pa[{{x}}][{{z}}];
    {{/for}} }
  {{/for}}{{#for x < LB}}Bt[tid + {{x}}u * 256u] = pb[{{x}}];
  {{/for}}workgroupBarrier();
  for (var s = 0u; s < steps; s++) {
    let h = s % HALVES;
    let more = s + 1u < steps;
    if (more) {
      let k0 = (s + 1u) * BK;
      {{#for x < LA}}pa[{{x}}] = a[(m0 + (tid + {{x}}u * 256u) / (BK / 4u)) * K4 + k0 / 4u + (tid + {{x}}u * 256u) % (BK / 4u)];
      {{/for}}{{#for x < LB}}pb[{{x}}] = b[(k0 + (tid + {{x}}u * 256u) / BN4) * N4 + n0 / 4u + (tid + {{x}}u * 256u) % BN4];
      {{/for}}
    }
    let ha = h * BK * BM4;
    let hb = h * BK * BN4;
    for (var kk = 0u; kk < BK; kk++) {
      {{#for j < TNV}}let b{{j}} = Bt[hb + kk * BN4 + tx + {{j}}u * 16u];
      {{/for}}
      {{#for i < TMV}}{ let w = At[ha + kk * BM4 + ty + {{i}}u * 16u];
        {{#for j < TNV}}acc[(4u * {{i}}u + 0u) * TNV + {{j}}u] += w.x * b{{j}};
        acc[(4u * {{i}}u + 1u) * TNV + {{j}}u] += w.y * b{{j}};
        acc[(4u * {{i}}u + 2u) * TNV + {{j}}u] += w.z * b{{j}};
        acc[(4u * {{i}}u + 3u) * TNV + {{j}}u] += w.w * b{{j}};
        {{/for}} }
      {{/for}}
    }
    if (HALVES == 1u) { workgroupBarrier(); }
    if (more) {
      let na = ((h + 1u) % HALVES) * BK * BM4;
      let nb = ((h + 1u) % HALVES) * BK * BN4;
      {{#for x < LA}}{ let e = tid + {{x}}u * 256u; let m = e / (BK / 4u); let k4 = e % (BK / 4u);
        {{#for z < 4}}At[na + (4u * k4 + {{z}}u) * BM4 + m / 4u][m % 4u] = pa[{{x}}][{{z}}];
        {{/for}} }
      {{/for}}{{#for x < LB}}Bt[nb + tid + {{x}}u * 256u] = pb[{{x}}];
      {{/for}}
    }
    workgroupBarrier();
  }
  {{#for i < TMV}}{{#for j < TNV}}{{#for r < 4}}c[(m0 + 4u * (ty + {{i}}u * 16u) + {{r}}u) * N4 + n0 / 4u + tx + {{j}}u * 16u] = acc[(4u * {{i}}u + {{r}}u) * TNV + {{j}}u];
  {{/for}}{{/for}}{{/for}}
}

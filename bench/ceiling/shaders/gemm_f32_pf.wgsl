// The portable ceiling probe, prefetched (after gemm_f32_common.wgsl; gemm_f32.wgsl is the plain
// one): the same blocks, invocation layout and register tile, with two changes that fast CUDA
// SGEMMs make:
//   - the next K step's global words are loaded into registers (pa, pb: LA and LB vec4 words,
//     indexed by constants) before the current step's products, and stored to workgroup memory
//     after them, so their latency hides behind the products;
//   - with HALVES = 2, workgroup memory holds two K steps (double-buffered): step s reads half
//     s % 2 while the stores fill the other half, so one barrier a step instead of two. The
//     barrier at the end of step s orders step s's reads of half s % 2 before step s + 1's stores
//     into it, and step s's stores into the other half before step s + 1's reads of it. With
//     HALVES = 1 (the prefetch alone, to tell the two apart) a second barrier before the stores
//     keeps them behind every invocation's reads of the one buffer.
// The halves add h·BK·BM4 < HALVES·BK·BM4 and h·BK·BN4 < HALVES·BK·BN4 with h < HALVES.

const LA: u32 = {{LA}}u;      // vec4 loads per invocation and step: BM4·BK / 256
const LB: u32 = {{LB}}u;      // BK·BN4 / 256
const HALVES: u32 = {{HALVES}}u;   // K steps workgroup memory holds (2: double-buffered)

var<workgroup> At: array<vec4<f32>, HALVES * BK * BM4>;   // HALVES halves; Aᵀ: At[h·BK·BM4 + kk·BM4 + m4] = A[4·m4 .. 4·m4 + 3][kk]
var<workgroup> Bt: array<vec4<f32>, HALVES * BK * BN4>;
var<private> pa: array<vec4<f32>, LA>;
var<private> pb: array<vec4<f32>, LB>;

// The K step at k0's words of the block (rows m0 .., columns n0 ..) into pa, pb.
fn fetch(m0: u32, n0: u32, k0: u32, tid: u32) {
  let K4 = dims.K / 4u;
  let N4 = dims.N / 4u;
  {{#for x < LA}}pa[{{x}}] = a[(m0 + (tid + {{x}}u * 256u) / (BK / 4u)) * K4 + k0 / 4u + (tid + {{x}}u * 256u) % (BK / 4u)];
  {{/for}}{{#for x < LB}}pb[{{x}}] = b[(k0 + (tid + {{x}}u * 256u) / BN4) * N4 + n0 / 4u + (tid + {{x}}u * 256u) % BN4];
  {{/for}}
}

// pa, pb into half h of At (transposed) and Bt.
fn stash(h: u32, tid: u32) {
  let na = h * BK * BM4;
  let nb = h * BK * BN4;
  {{#for x < LA}}{ let e = tid + {{x}}u * 256u; let m = e / (BK / 4u); let k4 = e % (BK / 4u);
    {{#for z < 4}}At[na + (4u * k4 + {{z}}u) * BM4 + m / 4u][m % 4u] = pa[{{x}}][{{z}}];
    {{/for}} }
  {{/for}}{{#for x < LB}}Bt[nb + tid + {{x}}u * 256u] = pb[{{x}}];
  {{/for}}
}

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let tx = tid % 16u;
  let ty = tid / 16u;
  let m0 = wg.y * 64u * TMV;
  let n0 = wg.x * 64u * TNV;
  let steps = dims.K / BK;
  var acc = Acc();
  fetch(m0, n0, 0u, tid);
  stash(0u, tid);
  workgroupBarrier();
  for (var s = 0u; s < steps; s++) {
    let h = s % HALVES;
    let more = s + 1u < steps;
    if (more) { fetch(m0, n0, (s + 1u) * BK, tid); }
    products(&acc, h * BK * BM4, h * BK * BN4, tx, ty);
    if (HALVES == 1u) { workgroupBarrier(); }
    if (more) { stash((h + 1u) % HALVES, tid); }
    workgroupBarrier();
  }
  store_c(&acc, m0, n0, tx, ty);
}

// The portable ceiling probe, plain (after gemm_f32_common.wgsl): each K step staged between two
// barriers, its global words loaded and stored to workgroup memory while every invocation waits.
// Not an attention kernel: `node bench/ceiling/run.mjs` times it to show what a plain-WGSL f32
// matrix product reaches on a device, the yardstick of the portable attention kernels (which run
// the same kind of inner loop).

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
  var acc = Acc();
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
    products(&acc, 0u, 0u, tx, ty);
  }
  store_c(&acc, m0, n0, tx, ty);
}

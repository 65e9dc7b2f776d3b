// The portable ceiling probes' common part (gemm_f32.wgsl, gemm_f32_pf.wgsl: each is this file
// followed by its own): C = A·B in f32 (A [M, K], B [K, N], C [M, N] row-major), plain WGSL,
// register-tiled. A workgroup of 16×16 invocations owns a BM×BN block of C (BM = 64·TMV,
// BN = 64·TNV) and walks K in steps of BK, staging Aᵀ and B in workgroup memory (At, Bt: each
// kernel declares them, one K step or two) with 16-byte loads.
// Invocation (ty, tx) owns rows 4·(ty + 16·i) + r and vec4 columns tx + 16·j of C
// (i < TMV, r < 4, j < TNV) in registers indexed by constants; each step of k is an outer
// product of TMV vec4 of Aᵀ with TNV vec4 of B.
// The host requires M % BM = N % BN = K % BK = 0, so every index is in range by construction:
// workgroup indices kk·(BM/4) + m4 < BK·BM/4 and kk·(BN/4) + n4 < BK·BN/4 (plus a half's offset,
// below each kernel's own bound); global reads (m0 + m)·K/4 + k4 < M·K/4 and (k0 + kk)·N/4 + n4 <
// K·N/4; writes < M·N/4. Dispatch: (N / BN, M / BM).

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

alias Acc = array<vec4<f32>, 4 * TMV * TNV>;

// One staged K step's outer products into acc: Aᵀ from At[ha ..], B from Bt[hb ..].
fn products(acc: ptr<function, Acc>, ha: u32, hb: u32, tx: u32, ty: u32) {
  for (var kk = 0u; kk < BK; kk++) {
    {{#for j < TNV}}let b{{j}} = Bt[hb + kk * BN4 + tx + {{j}}u * 16u];
    {{/for}}
    {{#for i < TMV}}{ let w = At[ha + kk * BM4 + ty + {{i}}u * 16u];
      {{#for j < TNV}}(*acc)[(4u * {{i}}u + 0u) * TNV + {{j}}u] += w.x * b{{j}};
      (*acc)[(4u * {{i}}u + 1u) * TNV + {{j}}u] += w.y * b{{j}};
      (*acc)[(4u * {{i}}u + 2u) * TNV + {{j}}u] += w.z * b{{j}};
      (*acc)[(4u * {{i}}u + 3u) * TNV + {{j}}u] += w.w * b{{j}};
      {{/for}} }
    {{/for}}
  }
}

// The invocation's block of C.
fn store_c(acc: ptr<function, Acc>, m0: u32, n0: u32, tx: u32, ty: u32) {
  let N4 = dims.N / 4u;
  {{#for i < TMV}}{{#for j < TNV}}{{#for r < 4}}c[(m0 + 4u * (ty + {{i}}u * 16u) + {{r}}u) * N4 + n0 / 4u + tx + {{j}}u * 16u] = (*acc)[(4u * {{i}}u + {{r}}u) * TNV + {{j}}u];
  {{/for}}{{/for}}{{/for}}
}

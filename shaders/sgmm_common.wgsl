// Shared by the tensor-core kernels (flash_fwd_sgmm, flash_bwd_sgmm, gemm_sgmm); the host puts
// it after the enable directives: the matrix types, and the halves of a 16-byte load.

alias LM = subgroup_matrix_left<f16, 16, 16>;
alias RM = subgroup_matrix_right<f16, 16, 16>;
alias AM = subgroup_matrix_result<f32, 16, 16>;

// The 8 halves of a 16-byte word of an f16 tensor viewed as vec4<u32>, in memory order.
fn halves8(w: vec4<u32>) -> array<f16, 8> {
  let a = bitcast<vec2<f16>>(w.x);
  let b = bitcast<vec2<f16>>(w.y);
  let c = bitcast<vec2<f16>>(w.z);
  let d = bitcast<vec2<f16>>(w.w);
  return array<f16, 8>(a.x, a.y, b.x, b.y, c.x, c.y, d.x, d.y);
}

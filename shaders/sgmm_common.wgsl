// Shared by the tensor-core kernels (flash_fwd_sgmm, flash_bwd_sgmm; also the GEMM probes of
// bench/ceiling); the host puts it after the enable directives: the matrix types, the halves of
// a 16-byte load, and tests for non-finite values. (Only constant indices here: nothing for
// robustness to clamp.)

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

// A score that makes its whole softmax row NaN: NaN, or +inf (exp(S − max) = exp(inf − inf)).
fn tc_spoils_row(x: f32) -> bool {
  let b = bitcast<u32>(x);
  return (b & 0x7f800000u) == 0x7f800000u && b != 0xff800000u;
}

// Whether any of the 8 halves of a 16-byte word is non-finite (exponent bits all ones).
fn tc_nonfinite8(w: vec4<u32>) -> bool {
  return any((w & vec4<u32>(0x7c00u)) == vec4<u32>(0x7c00u)) || any((w & vec4<u32>(0x7c000000u)) == vec4<u32>(0x7c000000u));
}

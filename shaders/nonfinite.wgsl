// Non-finite values, tested by bits (comparisons with NaN may be folded away, and max() may drop
// a NaN operand). nan_f32() is a runtime NaN: NaN is not a valid WGSL constant. Appended to the
// attention kernels' header (common.wgsl) and to merge.wgsl by src/kernels/shaders.ts.
fn nan_f32() -> f32 {
  var bits = 0x7fc00000u;
  return bitcast<f32>(bits);
}

fn is_nan(x: f32) -> bool {
  let b = bitcast<u32>(x);
  return (b & 0x7f800000u) == 0x7f800000u && (b & 0x007fffffu) != 0u;
}

fn pos_inf() -> f32 {
  var bits = 0x7f800000u;
  return bitcast<f32>(bits);
}

// ±inf: a ring step's LSE for a row with no mass in its keys (−inf: no visible key; +inf: visible
// keys whose scores are all −inf), common.wgsl lse_merge.
fn is_inf(x: f32) -> bool {
  return (bitcast<u32>(x) & 0x7fffffffu) == 0x7f800000u;
}

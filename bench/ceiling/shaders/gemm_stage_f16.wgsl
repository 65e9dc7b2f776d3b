// Staging for gemm_sgmm_padded.wgsl: workgroup slices as arrays of f16, the element type the
// f16 matrix loads are specified for. A 16-byte word goes in as 8 scalar f16 stores: WGSL has
// no way to store a vec2/vec4 into an array<f16> (no pointer casts, no aliasing), and an array
// of vec2<f16> or vec4<u32> is not what the specification lets an f16 matrix load read (see
// gemm_stage_vec.wgsl). The offsets are multiples of 8 halves, so a driver that can prove the
// alignment may merge the 8 stores into one 16-byte store. Both arrays are multiples of 16 bytes.
const EU: u32 = 1u;                     // halves per element of As, Bs

var<workgroup> As: array<f16, 2u * A_TILE>;
var<workgroup> Bs: array<f16, 2u * B_TILE>;

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

// Staging for gemm_sgmm_padded.wgsl, EXPERIMENTAL: workgroup slices as arrays of vec4<u32>,
// one 16-byte store per word, and the f16 matrix loads read them with offset and stride in
// elements of the array (16-byte words, EU = 8 halves), as a SPIR-V cooperative-matrix load
// through a pointer to a vector element does. Tint's validator (Dawn 0.6.2, null backend)
// accepts a matrix load from an array whose element type differs from the matrix's, but
// whether its SPIR-V keeps those units is not checked here: the float64 check before timing
// decides. (Were they taken as halves, every offset and stride would be 8× too small: wrong
// halves, but still inside the arrays.)
const EU: u32 = 8u;                     // halves per element of As, Bs

var<workgroup> As: array<vec4<u32>, 2u * A_TILE / 8u>;
var<workgroup> Bs: array<vec4<u32>, 2u * B_TILE / 8u>;

fn put_a(o: u32, w: vec4<u32>) { As[o / 8u] = w; }
fn put_b(o: u32, w: vec4<u32>) { Bs[o / 8u] = w; }

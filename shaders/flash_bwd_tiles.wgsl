// Shared part of the scalar backward (flash_bwd.wgsl: its preprocess, dK/dV and dQ kernels,
// and the preprocess the tensor-core backward runs first): bindings, the resident Q/dO and K/V
// tiles and their loaders. The specializer puts it after common.wgsl.

@group(0) @binding(1) var<storage, read> q: array<ST>;
@group(0) @binding(2) var<storage, read> k: array<ST>;
@group(0) @binding(3) var<storage, read> v: array<ST>;
@group(0) @binding(4) var<storage, read> o: array<OT>;
@group(0) @binding(5) var<storage, read> dout: array<ST>;
@group(0) @binding(6) var<storage, read> lse: array<f32>;
@group(0) @binding(7) var<storage, read_write> delta: array<f32>;
@group(0) @binding(8) var<storage, read_write> dq: array<GT>;
@group(0) @binding(9) var<storage, read_write> dk: array<GT>;
@group(0) @binding(10) var<storage, read_write> dv: array<GT>;

var<workgroup> Qs: array<ST, BR * D>;
var<workgroup> dOs: array<ST, BR * D>;
var<workgroup> Ks: array<ST, BC * D>;
var<workgroup> Vs: array<ST, BC * D>;
var<workgroup> lse2_s: array<f32, BR>;    // LSE · log2(e); +1e30 for fully masked rows (P = 0)
var<workgroup> delta_s: array<f32, BR>;   // Δ

// Loads Br rows of Q, dO, LSE and Δ starting at query i0 of head row base `row0`.
fn load_q_tile(row0: u32, i0: u32, tid: u32) {
  for (var e = tid; e < rt(BR * D); e += WG) {
    let i = i0 + e / D;
    var qx = ST(0.0);
    var gx = ST(0.0);
    if (i < P.Nq) {
      qx = q[(row0 + i0) * D + e];
      gx = dout[(row0 + i0) * D + e];
    }
    Qs[e] = qx;
    dOs[e] = gx;
  }
  for (var r = tid; r < rt(BR); r += WG) {
    var l2 = -NEG_BIG;
    var dl = 0.0;
    if (i0 + r < P.Nq) {
      let x = lse[row0 + i0 + r];
      if (x > NEG_HALF) { l2 = x * LOG2E; }
      dl = delta[row0 + i0 + r];
    }
    lse2_s[r] = l2;
    delta_s[r] = dl;
  }
}

fn load_kv_tile(kv_row0: u32, j0: u32, tid: u32) {
  for (var e = tid; e < rt(BC * D); e += WG) {
    let j = j0 + e / D;
    var kx = ST(0.0);
    var vx = ST(0.0);
    if (j < P.Nk) {
      kx = k[(kv_row0 + j0) * D + e];
      vx = v[(kv_row0 + j0) * D + e];
    }
    Ks[e] = kx;
    Vs[e] = vx;
  }
}

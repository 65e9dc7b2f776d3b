// FlashAttention-2 backward from the saved LSE (portable path), three entry points:
//   preprocess:  Δ_i = Σ_d dO_id · O_id                       dispatch (ceil(Nq / WG), Hq, B)
//   dkdv:        a K/V tile of Bc rows resident; loop over the query heads of its group and
//                over Q tiles:  P = exp2(S − LSE·log2 e),  dV += Pᵀ dO,
//                dP = dO Vᵀ,  dS = P ∘ (dP − Δ),  dK += scale · dSᵀ Q   dispatch (ceil(Nk / Bc), Hkv, B)
//   dq:          a Q tile of Br rows resident; loop over K/V tiles:  dQ += scale · dS K
//                                                              dispatch (ceil(Nq / Br), Hq, B)
// No atomics: every output element is written by exactly one invocation, in a fixed order,
// so gradients are bitwise reproducible. Rows with LSE = −inf (fully masked) contribute nothing.

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

@compute @workgroup_size(WG)
fn preprocess(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let i = wg.x * WG + tid;
  if (i >= P.Nq) { return; }
  let row = (wg.z * P.Hq + wg.y) * P.Nq + i;
  var acc = 0.0;
  for (var d = 0u; d < rt(D); d++) { acc += f32(dout[row * D + d]) * f32(o[row * D + d]); }
  delta[row] = acc;
}

var<workgroup> Qs: array<ST, BR * D>;
var<workgroup> dOs: array<ST, BR * D>;
var<workgroup> Ks: array<ST, BC * D>;
var<workgroup> Vs: array<ST, BC * D>;
var<workgroup> Pt: array<f32, BR * BC>;   // P
var<workgroup> dSt: array<f32, BR * BC>;  // dS
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

// P and dS for the resident tiles (queries i0.., keys j0..); masked entries are 0.
fn tile_p_ds(i0: u32, j0: u32, tid: u32) {
  for (var e = tid; e < rt(BR * BC); e += WG) {
    let r = e / BC;
    let c = e % BC;
    var p = 0.0;
    var ds = 0.0;
    if (visible(i0 + r, j0 + c)) {
      var s = 0.0;
      var dp = 0.0;
      for (var d = 0u; d < rt(D); d++) {
        s += f32(Qs[r * D + d]) * f32(Ks[c * D + d]);
        dp += f32(dOs[r * D + d]) * f32(Vs[c * D + d]);
      }
      p = exp2(s * P.scale_log2 - lse2_s[r]);
      ds = p * (dp - delta_s[r]);
    }
    Pt[e] = p;
    dSt[e] = ds;
  }
}

const TPC: u32 = WG / BC;               // invocations per key row (dkdv)
const DPC: u32 = (D + TPC - 1u) / TPC;  // head-dim columns per invocation (dkdv)

@compute @workgroup_size(WG)
fn dkdv(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hk = wg.y;
  let j0 = wg.x * BC;
  let G = P.Hq / P.Hkv;
  let kv_row0 = (b * P.Hkv + hk) * P.Nk;
  let c_own = tid / TPC;
  let t_own = tid % TPC;
  var dk_acc = array<f32, DPC>();
  var dv_acc = array<f32, DPC>();

  load_kv_tile(kv_row0, j0, tid);
  let i_start = (query_start(j0) / BR) * BR;
  for (var g = 0u; g < G; g++) {
    let row0 = (b * P.Hq + hk * G + g) * P.Nq;
    for (var i0 = i_start; i0 < P.Nq; i0 += BR) {
      workgroupBarrier();
      load_q_tile(row0, i0, tid);
      workgroupBarrier();
      tile_p_ds(i0, j0, tid);
      workgroupBarrier();
      // dV += Pᵀ dO,  dK += dSᵀ Q  (scale applied at the end)
      for (var u = 0u; u < rt(DPC); u++) {
        let d = t_own + u * TPC;
        if (d < D) {
          var xv = dv_acc[u];
          var xk = dk_acc[u];
          for (var r = 0u; r < rt(BR); r++) {
            xv += Pt[r * BC + c_own] * f32(dOs[r * D + d]);
            xk += dSt[r * BC + c_own] * f32(Qs[r * D + d]);
          }
          dv_acc[u] = xv;
          dk_acc[u] = xk;
        }
      }
    }
  }
  let j = j0 + c_own;
  if (j < P.Nk) {
    for (var u = 0u; u < rt(DPC); u++) {
      let d = t_own + u * TPC;
      if (d < D) {
        let at = (kv_row0 + j) * D + d;
        var xk = dk_acc[u] * P.scale;
        var xv = dv_acc[u];
        if (P.accumulate != 0u) {
          xk += f32(dk[at]);
          xv += f32(dv[at]);
        }
        dk[at] = GT(xk);
        dv[at] = GT(xv);
      }
    }
  }
}

const TPR: u32 = WG / BR;               // invocations per query row (dq)
const DPT: u32 = (D + TPR - 1u) / TPR;  // head-dim columns per invocation (dq)

@compute @workgroup_size(WG)
fn dq_main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hq = wg.y;
  let i0 = wg.x * BR;
  let hk = hq / (P.Hq / P.Hkv);
  let row0 = (b * P.Hq + hq) * P.Nq;
  let kv_row0 = (b * P.Hkv + hk) * P.Nk;
  let r_own = tid / TPR;
  let t_own = tid % TPR;
  var acc = array<f32, DPT>();

  load_q_tile(row0, i0, tid);
  let n_end = key_end(min(i0 + BR, P.Nq) - 1u);
  for (var j0 = 0u; j0 < n_end; j0 += BC) {
    workgroupBarrier();
    load_kv_tile(kv_row0, j0, tid);
    workgroupBarrier();
    tile_p_ds(i0, j0, tid);
    workgroupBarrier();
    // dQ += dS K  (scale applied at the end)
    for (var u = 0u; u < rt(DPT); u++) {
      let d = t_own + u * TPR;
      if (d < D) {
        var x = acc[u];
        for (var c = 0u; c < rt(BC); c++) { x += dSt[r_own * BC + c] * f32(Ks[c * D + d]); }
        acc[u] = x;
      }
    }
  }
  let i = i0 + r_own;
  if (i < P.Nq) {
    for (var u = 0u; u < rt(DPT); u++) {
      let d = t_own + u * TPR;
      if (d < D) {
        let at = (row0 + i) * D + d;
        var x = acc[u] * P.scale;
        if (P.accumulate != 0u) { x += f32(dq[at]); }
        dq[at] = GT(x);
      }
    }
  }
}

// FlashAttention-2 backward from the saved LSE (portable path), three entry points:
//   preprocess:  Δ_i = Σ_d dO_id · O_id                       dispatch (ceil(Nq / WG), Hq, B)
//   dkdv:        a K/V tile of Bc rows resident; loop over the query heads of its group and
//                over Q tiles:  P = exp2(S − LSE·log2 e),  dV += Pᵀ dO,
//                dP = dO Vᵀ,  dS = P ∘ (dP − Δ),  dK += scale · dSᵀ Q   dispatch (ceil(Nk / Bc), Hkv, B)
//   dq:          a Q tile of Br rows resident; loop over K/V tiles:  dQ += scale · dS K
//                                                              dispatch (ceil(Nq / Br), Hq, B)
// No atomics: every output element is written by exactly one invocation, in a fixed order,
// so gradients are bitwise reproducible. Rows with LSE = −inf (fully masked) contribute nothing.
// Bindings, the Q/dO and K/V tiles and their loaders: flash_bwd_tiles.wgsl.

@compute @workgroup_size(WG)
fn preprocess(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let i = wg.x * WG + tid;
  if (i >= P.Nq) { return; }
  let row = (wg.z * P.Hq + wg.y) * P.Nq + i;
  var acc = 0.0;
  for (var d = 0u; d < rt(D); d++) { acc += f32(dout[row * D + d]) * f32(o[row * D + d]); }
  delta[row] = acc;
}

var<workgroup> Pt: array<f32, BR * BC>;   // P
var<workgroup> dSt: array<f32, BR * BC>;  // dS

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

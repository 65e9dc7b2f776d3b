// FlashAttention-2 backward on subgroup matrices (tensor cores): f16 Q, K, V, dO; f32
// accumulation. Δ comes from the scalar preprocess (flash_bwd.wgsl). One subgroup of 32 per
// workgroup, looping over 16×16 blocks (matrix offsets must be workgroup-uniform). Per tile:
//   S = Q Kᵀ,  P = exp2(S·scale·log2 e − LSE·log2 e)     (P kept in f16 for the products)
//   dP = dO Vᵀ,  dS = P ∘ (dP − Δ)                        (dS kept in f16)
//   dkdv:  dV += Pᵀ dO,  dK += dSᵀ Q   (K/V tile resident; loop over the group's query heads and Q tiles)
//   dq:    dQ += dS K                  (Q tile resident; loop over K/V tiles)
// The scale is applied to dK and dQ at the end. Accumulators live in workgroup memory (f32).
// Dispatch: dkdv (ceil(Nk / Bc), Hkv, B); dq (ceil(Nq / Br), Hq, B); workgroup size 32.
// Bindings, the Q/dO and K/V tiles and their loaders: flash_bwd_tiles.wgsl.

alias LM = subgroup_matrix_left<f16, 16, 16>;
alias RM = subgroup_matrix_right<f16, 16, 16>;
alias AM = subgroup_matrix_result<f32, 16, 16>;
const RB: u32 = BR / 16u;
const CB: u32 = BC / 16u;
const DB: u32 = D / 16u;

var<workgroup> S: array<f32, BR * BC>;     // scores, then dP
var<workgroup> Pm: array<f16, BR * BC>;    // P
var<workgroup> dSm: array<f16, BR * BC>;   // dS

// S (or dP) = A Bᵀ for the resident tiles: A is Qs or dOs (Br×D), B is Ks or Vs (Bc×D).
fn scores(use_dout: bool, use_v: bool) {
  for (var rb = 0u; rb < RB; rb++) {
    for (var cb = 0u; cb < CB; cb++) {
      var acc = AM();
      for (var kk = 0u; kk < DB; kk++) {
        var a: LM;
        var bt: RM;
        if (use_dout) { a = subgroupMatrixLoad<LM, row_major>(&dOs, rb * 16u * D + kk * 16u, D); }
        else { a = subgroupMatrixLoad<LM, row_major>(&Qs, rb * 16u * D + kk * 16u, D); }
        if (use_v) { bt = subgroupMatrixLoad<RM, col_major>(&Vs, cb * 16u * D + kk * 16u, D); }
        else { bt = subgroupMatrixLoad<RM, col_major>(&Ks, cb * 16u * D + kk * 16u, D); }
        acc = subgroupMatrixMultiplyAccumulate(a, bt, acc);
      }
      subgroupMatrixStore<row_major>(&S, rb * 16u * BC + cb * 16u, acc, BC);
    }
  }
}

// P and dS of the resident tiles (queries i0.., keys j0..): two score products, two elementwise passes.
fn tile_p_ds(i0: u32, j0: u32, tid: u32) {
  scores(false, false);
  workgroupBarrier();
  for (var e = tid; e < BR * BC; e += WG) {
    let r = e / BC;
    var p = 0.0;
    if (visible(i0 + r, j0 + e % BC)) { p = exp2(S[e] * P.scale_log2 - lse2_s[r]); }
    Pm[e] = f16(p);
  }
  workgroupBarrier();
  scores(true, true);
  workgroupBarrier();
  for (var e = tid; e < BR * BC; e += WG) {
    dSm[e] = f16(f32(Pm[e]) * (S[e] - delta_s[e / BC]));
  }
  workgroupBarrier();
}

var<workgroup> dKa: array<f32, BC * D>;
var<workgroup> dVa: array<f32, BC * D>;

@compute @workgroup_size(WG)
fn dkdv(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hk = wg.y;
  let j0 = wg.x * BC;
  let G = P.Hq / P.Hkv;
  let kv_row0 = (b * P.Hkv + hk) * P.Nk;
  load_kv_tile(kv_row0, j0, tid);
  for (var e = tid; e < BC * D; e += WG) {
    dKa[e] = 0.0;
    dVa[e] = 0.0;
  }
  let i_start = (query_start(j0) / BR) * BR;
  for (var g = 0u; g < G; g++) {
    let row0 = (b * P.Hq + hk * G + g) * P.Nq;
    for (var i0 = i_start; i0 < P.Nq; i0 += BR) {
      workgroupBarrier();
      load_q_tile(row0, i0, tid);
      workgroupBarrier();
      tile_p_ds(i0, j0, tid);
      // dV += Pᵀ dO and dK += dSᵀ Q: Pᵀ and dSᵀ are column-major views of P and dS.
      for (var cb = 0u; cb < CB; cb++) {
        for (var db = 0u; db < DB; db++) {
          var av = subgroupMatrixLoad<AM, row_major>(&dVa, cb * 16u * D + db * 16u, D);
          var ak = subgroupMatrixLoad<AM, row_major>(&dKa, cb * 16u * D + db * 16u, D);
          for (var rb = 0u; rb < RB; rb++) {
            let pt = subgroupMatrixLoad<LM, col_major>(&Pm, rb * 16u * BC + cb * 16u, BC);
            let dst = subgroupMatrixLoad<LM, col_major>(&dSm, rb * 16u * BC + cb * 16u, BC);
            let gm = subgroupMatrixLoad<RM, row_major>(&dOs, rb * 16u * D + db * 16u, D);
            let qm = subgroupMatrixLoad<RM, row_major>(&Qs, rb * 16u * D + db * 16u, D);
            av = subgroupMatrixMultiplyAccumulate(pt, gm, av);
            ak = subgroupMatrixMultiplyAccumulate(dst, qm, ak);
          }
          subgroupMatrixStore<row_major>(&dVa, cb * 16u * D + db * 16u, av, D);
          subgroupMatrixStore<row_major>(&dKa, cb * 16u * D + db * 16u, ak, D);
        }
      }
    }
  }
  workgroupBarrier();
  for (var e = tid; e < BC * D; e += WG) {
    if (j0 + e / D < P.Nk) {
      let at = (kv_row0 + j0) * D + e;
      var xk = dKa[e] * P.scale;
      var xv = dVa[e];
      if (P.accumulate != 0u) {
        xk += f32(dk[at]);
        xv += f32(dv[at]);
      }
      dk[at] = GT(xk);
      dv[at] = GT(xv);
    }
  }
}

var<workgroup> dQa: array<f32, BR * D>;

@compute @workgroup_size(WG)
fn dq_main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hq = wg.y;
  let i0 = wg.x * BR;
  let hk = hq / (P.Hq / P.Hkv);
  let row0 = (b * P.Hq + hq) * P.Nq;
  let kv_row0 = (b * P.Hkv + hk) * P.Nk;
  load_q_tile(row0, i0, tid);
  for (var e = tid; e < BR * D; e += WG) { dQa[e] = 0.0; }
  let n_end = key_end(min(i0 + BR, P.Nq) - 1u);
  for (var j0 = 0u; j0 < n_end; j0 += BC) {
    workgroupBarrier();
    load_kv_tile(kv_row0, j0, tid);
    workgroupBarrier();
    tile_p_ds(i0, j0, tid);
    // dQ += dS K
    for (var rb = 0u; rb < RB; rb++) {
      for (var db = 0u; db < DB; db++) {
        var acc = subgroupMatrixLoad<AM, row_major>(&dQa, rb * 16u * D + db * 16u, D);
        for (var cb = 0u; cb < CB; cb++) {
          let ds = subgroupMatrixLoad<LM, row_major>(&dSm, rb * 16u * BC + cb * 16u, BC);
          let km = subgroupMatrixLoad<RM, row_major>(&Ks, cb * 16u * D + db * 16u, D);
          acc = subgroupMatrixMultiplyAccumulate(ds, km, acc);
        }
        subgroupMatrixStore<row_major>(&dQa, rb * 16u * D + db * 16u, acc, D);
      }
    }
  }
  workgroupBarrier();
  for (var e = tid; e < BR * D; e += WG) {
    if (i0 + e / D < P.Nq) {
      let at = (row0 + i0) * D + e;
      var x = dQa[e] * P.scale;
      if (P.accumulate != 0u) { x += f32(dq[at]); }
      dq[at] = GT(x);
    }
  }
}

// FlashAttention-2 backward from the saved LSE, portable path (register-tiled, f32 math), two
// entry points after the preprocess (flash_bwd_pre.wgsl, Δ = rowsum(dO ∘ O)):
//   dkdv:    a K/V tile of T keys resident; loop over the query heads of its group and the Q
//            tiles that can see a key of it:  P = exp(scale·S − LSE),  dV += Pᵀ dO,
//            dP = dO Vᵀ,  dS = P ∘ (dP − Δ),  dK += scale · dSᵀ Q     dispatch (ceil(Nk / T), Hkv, B)
//   dq_main: a Q tile of T rows resident; loop over the K/V tiles it can see:  dQ += scale · dS K
//                                                                     dispatch (ceil(Nq / T), Hq, B)
// No atomics: every output element is written by exactly one invocation, in a fixed order, so
// gradients are bitwise reproducible. A fully masked row (no visible key) contributes nothing;
// a NaN or Inf in Q, K, V, dO, O or LSE reaches exactly the gradients the reference's does.
// Tiles, blocks and accumulation: flash_bwd_tiles.wgsl. Mask (common.wgsl): a dK/dV tile visits
// only the Q tiles of query_span (the rows that may see one of its keys), a dQ tile only the K/V
// tiles between its first row's lo and its last row's hi; tile_class picks the full or masked
// product per tile pair and skips the rest. Causal: dQ tiles run heavy-first (last first).

@compute @workgroup_size(WG)
fn dkdv(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hk = wg.y;
  let j0 = wg.x * BC;
  let G = P.Hq / P.Hkv;
  let kv_row0 = (b * P.Hkv + hk) * P.Nk;
  let tx = tid % T4;
  let ty = tid / T4;
  var dk_acc = Acc();
  var dv_acc = Acc();
  stage_r(false, kv_row0, j0, P.Nk, tid);
  let z = vec4<f32>();
  let span = query_span(j0, j0 + BC);
  let it0 = span.x / BR;
  let n_qt = (span.y + BR - 1u) / BR;
  let offs = vec4<u32>(0u, T4, 2u * T4, 3u * T4);
  for (var g = 0u; g < G; g++) {
    let row0 = (b * P.Hq + hk * G + g) * P.Nq;
    for (var it = it0; it < n_qt; it++) {
      let i0 = it * BR;
      let cls = tile_class(i0, i0 + BR, j0, j0 + BC);
      if (cls == TILE_SKIP) { continue; }
      workgroupBarrier();   // the previous tile's readers are done
      stage_c(true, row0, i0, P.Nq, tid);
      for (var x = 0u; x < rt(LR); x++) {
        let r = tid + x * WG;
        if (r < BR) {
          var ls = 0.0;
          var dl = 0.0;
          if (i0 + r < P.Nq) {
            ls = lse[row0 + i0 + r];
            dl = delta[row0 + i0 + r];
          }
          let kr = key_range(i0 + r);   // empty past Nq
          lse_s[r] = ls;
          delta_s[r] = dl;
          klo_s[r] = kr.x;
          khi_s[r] = kr.y;
        }
      }
      workgroupBarrier();
      var x = blocks(tx, ty);   // Sᵀ (keys × queries) in x[0..4], dPᵀ in x[4..8]
      let qi = vec4<u32>(tx) + offs;
      let lse_c = vec4<f32>(lse_s[qi.x], lse_s[qi.y], lse_s[qi.z], lse_s[qi.w]);
      let delta_c = vec4<f32>(delta_s[qi.x], delta_s[qi.y], delta_s[qi.z], delta_s[qi.w]);
      let klo_c = vec4<u32>(klo_s[qi.x], klo_s[qi.y], klo_s[qi.z], klo_s[qi.w]);
      let khi_c = vec4<u32>(khi_s[qi.x], khi_s[qi.y], khi_s[qi.z], khi_s[qi.w]);
      {{#loop rr < 4}}{ let key = vec4<u32>(j0 + ty + {{rr}}u * T4);
        let vis = (key >= klo_c) & (key < khi_c);
        let p = select(z, exp2((x[{{rr}}u] * P.scale - lse_c) * LOG2E), vis);
        Pw[(ty + {{rr}}u * T4) * TS + tx] = p;
        dSw[(ty + {{rr}}u * T4) * TS + tx] = select(z, p * (x[4u + {{rr}}u] - delta_c), vis); }
      {{/loop}}
      workgroupBarrier();
      if (cls == TILE_FULL) {
        accum_full(&dv_acc, &Pw, &C1, tx, ty);
        accum_full(&dk_acc, &dSw, &C0, tx, ty);
      } else {
        accum_masked(&dv_acc, &Pw, &C1, tx, ty, true, j0, vec4<u32>(), vec4<u32>());
        accum_masked(&dk_acc, &dSw, &C0, tx, ty, true, j0, vec4<u32>(), vec4<u32>());
      }
    }
  }
  {{#loop rr < 4}}{
    let j = j0 + ty + {{rr}}u * T4;
    if (j < P.Nk) {
      {{#loop u < DV}}{
        let at = (kv_row0 + j) * D4 + tx + {{u}}u * T4;
        var xk = dk_acc[{{rr}}u * DV + {{u}}u] * P.scale;
        var xv = dv_acc[{{rr}}u * DV + {{u}}u];
        if (P.accumulate != 0u) {
          xk += vec4<f32>(dk[at]);
          xv += vec4<f32>(dv[at]);
        }
        dk[at] = vec4<GT>(xk);
        dv[at] = vec4<GT>(xv);
      }
      {{/loop}}
    }
  }
  {{/loop}}
}

@compute @workgroup_size(WG)
fn dq_main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) tid: u32) {
  let rb = row_block(wg, nwg);   // heavy-first
  let i0 = rb.i0;
  let row0 = rb.q_row0;
  let kv_row0 = rb.kv_row0;
  let tx = tid % T4;
  let ty = tid / T4;
  stage_r(true, row0, i0, P.Nq, tid);
  // The invocation's rows: LSE, Δ and visible keys [klo, khi) (empty past Nq).
  var lse_r = vec4<f32>();
  var delta_r = vec4<f32>();
  var klo = vec4<u32>();
  var khi = vec4<u32>();
  {{#loop rr < 4}}if (i0 + ty + {{rr}}u * T4 < P.Nq) {
    lse_r[{{rr}}u] = lse[row0 + i0 + ty + {{rr}}u * T4];
    delta_r[{{rr}}u] = delta[row0 + i0 + ty + {{rr}}u * T4];
    let kr = key_range(i0 + ty + {{rr}}u * T4);
    klo[{{rr}}u] = kr.x;
    khi[{{rr}}u] = kr.y;
  }
  {{/loop}}
  let z = vec4<f32>();
  let i_end = min(i0 + BR, P.Nq);
  let t_first = key_range(i0).x / BC;
  let t_end = (key_range(i_end - 1u).y + BC - 1u) / BC;
  var acc = Acc();
  for (var jt = t_first; jt < t_end; jt++) {
    let j0 = jt * BC;
    let cls = tile_class(i0, i_end, j0, j0 + BC);
    if (cls == TILE_SKIP) { continue; }
    workgroupBarrier();   // the previous tile's readers are done
    stage_c(false, kv_row0, j0, P.Nk, tid);
    workgroupBarrier();
    var x = blocks(tx, ty);   // S in x[0..4], dP in x[4..8]
    let keys = vec4<u32>(j0 + tx) + vec4<u32>(0u, T4, 2u * T4, 3u * T4);
    {{#loop rr < 4}}{ let vis = (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u]));
      let p = select(z, exp2((x[{{rr}}u] * P.scale - vec4<f32>(lse_r[{{rr}}u])) * LOG2E), vis);
      dSw[(ty + {{rr}}u * T4) * TS + tx] = select(z, p * (x[4u + {{rr}}u] - vec4<f32>(delta_r[{{rr}}u])), vis); }
    {{/loop}}
    workgroupBarrier();
    if (cls == TILE_FULL) { accum_full(&acc, &dSw, &C0, tx, ty); } else { accum_masked(&acc, &dSw, &C0, tx, ty, false, j0, klo, khi); }
  }
  {{#loop rr < 4}}{
    let i = i0 + ty + {{rr}}u * T4;
    if (i < P.Nq) {
      {{#loop u < DV}}{
        let at = (row0 + i) * D4 + tx + {{u}}u * T4;
        var x = acc[{{rr}}u * DV + {{u}}u] * P.scale;
        if (P.accumulate != 0u) { x += vec4<f32>(dq[at]); }
        dq[at] = vec4<GT>(x);
      }
      {{/loop}}
    }
  }
  {{/loop}}
}

// FlashAttention-2 backward from the saved LSE, portable path (register-tiled, f32 math), two
// entry points after the preprocess (flash_bwd_pre.wgsl, Δ = rowsum(dO ∘ O)):
//   dkdv:    a K/V tile of RT keys resident; loop over the query heads of its group and the
//            CT-row Q tiles that can see a key of it:  P = exp(scale·S − LSE),  dV += Pᵀ dO,
//            dP = dO Vᵀ,  dS = P ∘ (dP − Δ),  dK += scale · dSᵀ Q     dispatch (ceil(Nk / RT), Hkv, B)
//   dq_main: a Q tile of RT rows resident; loop over the CT-key K/V tiles it can see:  dQ += scale · dS K
//                                                                     dispatch (ceil(Nq / RT), Hq, B)
// No atomics: every output element is written by exactly one invocation, in a fixed order, so
// gradients are bitwise reproducible. A fully masked row (no visible key) contributes nothing;
// a NaN or Inf in Q, K, V, dO, O or LSE reaches exactly the gradients the reference's does.
// Tiles, blocks and accumulation: flash_bwd_tiles.wgsl. Mask (common.wgsl): a dK/dV tile visits
// only the Q tiles of query_span (the rows that may see one of its keys), a dQ tile only the K/V
// tiles between its first row's lo and its last row's hi; the tile pair's class (dkdv: tile_class
// of each Q tile; dq: class_of against the block's row_keys, taken once) picks the full or masked
// product and skips the rest. Causal: dQ tiles run heavy-first (last first).
// Accumulating (ring steps), the host dispatches only the tiles some visible pair reaches, from
// tile P.k_blk0 (dkdv) and P.q_blk0 (dq) on (FlashBackward.encode); the grids above are the most.
// The tiles a workgroup visits are found by next_q_tile / next_k_tile (the class computed once
// per tile).

// dkdv: the first Q tile it >= `it` (below n_qt) that the K/V tile at j0 does not skip, and its
// class; (n_qt, TILE_SKIP) if none.
fn next_q_tile(it: u32, n_qt: u32, j0: u32) -> vec2<u32> {
  for (var t = it; t < n_qt; t++) {
    let cls = tile_class(t * CT, t * CT + CT, j0, j0 + RT);
    if (cls != TILE_SKIP) { return vec2<u32>(t, cls); }
  }
  return vec2<u32>(n_qt, TILE_SKIP);
}

// dq: the first K/V tile jt >= `jt` (below t_end) that the block's Q rows (row_keys) do not skip,
// and its class; (t_end, TILE_SKIP) if none.
fn next_k_tile(jt: u32, t_end: u32, rows: RowKeys) -> vec2<u32> {
  for (var t = jt; t < t_end; t++) {
    let cls = class_of(rows, t * CT, t * CT + CT);
    if (cls != TILE_SKIP) { return vec2<u32>(t, cls); }
  }
  return vec2<u32>(t_end, TILE_SKIP);
}

// A resident block's gradient rows r0 + ty + rr·TR (those below n) out of the accumulator, times
// `scale` (dQ and dK carry the softmax scale, dV none), into dQ, dK or dV (`which`) at head row
// row0, added to what is there when P.accumulate is set (the ring's travelling gradients).
// (GRAD_DQ, GRAD_DK, GRAD_DV: common.wgsl.)
fn store_rows(which: u32, row0: u32, r0: u32, n: u32, acc: ptr<function, AccAll>, scale: f32, tx: u32, ty: u32) {
  {{#loop rr < 4}}{
    let r = r0 + ty + {{rr}}u * TR;
    if (r < n) {
      {{#loop c < NCH}}{{#loop u < DU}}{
        let at = (row0 + r) * D4 + {{c}}u * DC + tx + {{u}}u * TC;
        var x = (*acc)[{{c}}u][{{rr}}u * DU + {{u}}u] * scale;
        switch which {
          case GRAD_DQ: { if (P.accumulate != 0u) { x += vec4<f32>(dq[at]); } dq[at] = vec4<GT>(x); }
          case GRAD_DK: { if (P.accumulate != 0u) { x += vec4<f32>(dk[at]); } dk[at] = vec4<GT>(x); }
          default: { if (P.accumulate != 0u) { x += vec4<f32>(dv[at]); } dv[at] = vec4<GT>(x); }
        }
      }
      {{/loop}}{{/loop}}
    }
  }
  {{/loop}}
}

@compute @workgroup_size(WG)
fn dkdv(g: Grid, @builtin(local_invocation_index) tid: u32) {
  let kb = key_block(g, RT);
  let G = P.Hq / P.Hkv;
  let tx = tid % TC;
  let ty = tid / TC;
  var dk_acc = AccAll();
  var dv_acc = AccAll();
  if (NCH == 1u) { stage_r(false, kb.kv_row0, kb.j0, P.Nk, 0u, tid); }
  let z = vec4<f32>();
  let span = query_span(kb.j0, kb.j0 + RT);
  let it0 = span.x / CT;
  let n_qt = (span.y + CT - 1u) / CT;
  let offs = vec4<u32>(0u, TC, 2u * TC, 3u * TC);
  // Tile pairs visited: for each query head g of the group, the Q tiles it0 … n_qt−1 that are not
  // skipped.
  let first = next_q_tile(it0, n_qt, kb.j0);
  for (var qh = 0u; qh < G; qh++) {
    let row0 = kb.q_row0 + qh * P.Nq;   // query head qh of the group
    var cur = first;
    loop {
      if (cur.x >= n_qt) { break; }
      let i0 = cur.x * CT;
      let cls = cur.y;
      var x = score_blocks(false, kb.kv_row0, kb.j0, P.Nk, row0, i0, P.Nq, tid, tx, ty);   // Sᵀ in x[0..4], dPᵀ in x[4..8]
      let qi = vec4<u32>(tx) + offs;
      let lse_c = vec4<f32>(lse_s[qi.x], lse_s[qi.y], lse_s[qi.z], lse_s[qi.w]);
      let delta_c = vec4<f32>(delta_s[qi.x], delta_s[qi.y], delta_s[qi.z], delta_s[qi.w]);
      let klo_c = vec4<u32>(klo_s[qi.x], klo_s[qi.y], klo_s[qi.z], klo_s[qi.w]);
      let khi_c = vec4<u32>(khi_s[qi.x], khi_s[qi.y], khi_s[qi.z], khi_s[qi.w]);
      {{#loop rr < 4}}{ let key = vec4<u32>(kb.j0 + ty + {{rr}}u * TR);
        let vis = (key >= klo_c) & (key < khi_c);
        let p = select(z, exp2((x[{{rr}}u] * P.scale - lse_c) * LOG2E), vis);
        Pw[ty + {{rr}}u * TR][tx] = p;
        dSw[ty + {{rr}}u * TR][tx] = select(z, p * (x[4u + {{rr}}u] - delta_c), vis); }
      {{/loop}}
      {{#loop c < NCH}}{ let ch = ({{c}}u + NCH - 1u) % NCH;
        restage_c(true, row0, i0, P.Nq, {{c}}u, tid, true);   // Q chunk ch at OC0, dO at OC1
        if (cls == TILE_FULL) {
          accum_full(&dv_acc[ch], &Pw, 1u, tx, ty);
          accum_full(&dk_acc[ch], &dSw, 0u, tx, ty);
        } else {
          accum_masked(&dv_acc[ch], &Pw, 1u, tx, ty, true, kb.j0, vec4<u32>(), vec4<u32>());
          accum_masked(&dk_acc[ch], &dSw, 0u, tx, ty, true, kb.j0, vec4<u32>(), vec4<u32>());
        } }
      {{/loop}}
      cur = next_q_tile(cur.x + 1u, n_qt, kb.j0);
    }
  }
  store_rows(GRAD_DK, kb.kv_row0, kb.j0, P.Nk, &dk_acc, P.scale, tx, ty);
  store_rows(GRAD_DV, kb.kv_row0, kb.j0, P.Nk, &dv_acc, 1.0, tx, ty);
}

@compute @workgroup_size(WG)
fn dq_main(g: Grid, @builtin(local_invocation_index) tid: u32) {
  let rb = row_block(g, RT);   // heavy-first
  let tx = tid % TC;
  let ty = tid / TC;
  if (NCH == 1u) { stage_r(true, rb.q_row0, rb.i0, P.Nq, 0u, tid); }
  // The invocation's rows: LSE, Δ and visible keys [klo, khi) (empty past Nq).
  var lse_r = vec4<f32>();
  var delta_r = vec4<f32>();
  var klo = vec4<u32>();
  var khi = vec4<u32>();
  {{#loop rr < 4}}if (rb.i0 + ty + {{rr}}u * TR < P.Nq) {
    lse_r[{{rr}}u] = lse[rb.q_row0 + rb.i0 + ty + {{rr}}u * TR];
    delta_r[{{rr}}u] = delta[rb.q_row0 + rb.i0 + ty + {{rr}}u * TR];
    let kr = key_range(rb.i0 + ty + {{rr}}u * TR);
    klo[{{rr}}u] = kr.x;
    khi[{{rr}}u] = kr.y;
  }
  {{/loop}}
  let z = vec4<f32>();
  let i_end = min(rb.i0 + RT, P.Nq);
  let rows = row_keys(rb.i0, i_end);   // the block's first and last rows' keys: the tiles it visits and their classes
  let t_first = rows.first.x / CT;
  let t_end = (rows.last.y + CT - 1u) / CT;
  var acc = AccAll();
  // K/V tiles visited: t_first … t_end−1 but the skipped ones.
  var cur = next_k_tile(t_first, t_end, rows);
  loop {
    if (cur.x >= t_end) { break; }
    let j0 = cur.x * CT;
    let cls = cur.y;
    var x = score_blocks(true, rb.q_row0, rb.i0, P.Nq, rb.kv_row0, j0, P.Nk, tid, tx, ty);   // S in x[0..4], dP in x[4..8]
    let keys = vec4<u32>(j0 + tx) + vec4<u32>(0u, TC, 2u * TC, 3u * TC);
    {{#loop rr < 4}}{ let vis = (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u]));
      let p = select(z, exp2((x[{{rr}}u] * P.scale - vec4<f32>(lse_r[{{rr}}u])) * LOG2E), vis);
      dSw[ty + {{rr}}u * TR][tx] = select(z, p * (x[4u + {{rr}}u] - vec4<f32>(delta_r[{{rr}}u])), vis); }
    {{/loop}}
    {{#loop c < NCH}}{ let ch = ({{c}}u + NCH - 1u) % NCH;
      restage_c(false, rb.kv_row0, j0, P.Nk, {{c}}u, tid, false);   // K chunk ch at OC0
      if (cls == TILE_FULL) { accum_full(&acc[ch], &dSw, 0u, tx, ty); } else { accum_masked(&acc[ch], &dSw, 0u, tx, ty, false, j0, klo, khi); } }
    {{/loop}}
    cur = next_k_tile(cur.x + 1u, t_end, rows);
  }
  store_rows(GRAD_DQ, rb.q_row0, rb.i0, P.Nq, &acc, P.scale, tx, ty);
}

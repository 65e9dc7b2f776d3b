// FlashAttention-2 forward, portable path: plain WGSL (no subgroup matrices), f32 or f16
// storage, f32 softmax and accumulation. Register-tiled like a fast WGSL matrix product.
//
// A workgroup owns Br = 4·TY query rows of one (batch, head) and streams K/V tiles of
// Bc = 4·TX keys through workgroup memory. Invocation (ty, tx) = (tid / TX, tid % TX) owns
//   the 4×4 block of S at rows ty + TY·rr and keys tx + TX·cc (rr, cc < 4), and
//   the O accumulator of the same 4 rows at vec4 columns tx + TX·u (u < DV = D/4 / TX),
// all in registers indexed only by constants (unrolled by the specializer).
// Per tile, in natural-log units (the scale is applied to QKᵀ before the max is taken, and the
// small difference S − m is what goes to exp2, so no log2(e)-scaled large logit is rounded):
//   S = scale · Q Kᵀ                          (keys a row cannot see: −inf)
//   m_new = max(m, rowmax(S)) only where rowmax(S) > m + STALE (stale-max: else m is kept,
//           so P~ ≤ e^STALE and acc, ℓ are rescaled only when the max grows by that much)
//   P~ = exp(S − m_new),  ℓ = exp(m − m_new)·ℓ + rowsum(P~),  acc = exp(m − m_new)·acc + P~ V
// and at the end O = acc / ℓ, LSE = m + log ℓ. A row with no visible key: O = 0, LSE = −inf.
// Non-finite inputs propagate as in the reference (src/reference/attention.ts): a NaN score
// gives P~ = NaN, so ℓ and the row's O and LSE are NaN; +Inf makes m = +Inf and P~ = NaN; a row
// whose visible scores are all −Inf has ℓ = 0 and gives NaN. Keys a row cannot see never touch
// its accumulator (masked tiles select V per row), so a NaN there stays out.
// Row max and sum across the TX invocations of a row block: row_max4 / row_sum4 (flash_rows_*.wgsl).
// Mask (common.wgsl): row r sees keys [klo, khi) of key_range; the block visits only the K/V
// tiles between its first row's lo and its last row's hi, and tile_class picks the unmasked
// (full) or masked product per tile. Causal: row blocks run heavy-first (the last block first).
// Dispatch: (ceil(Nq / Br), Hq, B).
//
// Bounds (indices in range by construction, for Dawn without robustness):
//   workgroup arrays: every index is r·DS + d4 or r·PS + t with r < Br (or Bc), d4 < D/4, t < TX;
//   global reads only for rows i < Nq (Q) and keys j < Nk (K, V), so (row0 + i)·D/4 + d4 lies
//   in [0, B·H·N·D/4); O and LSE are written only for rows i < Nq.

@group(0) @binding(1) var<storage, read> q: array<vec4<ST>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<ST>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<ST>>;
@group(0) @binding(4) var<storage, read_write> o: array<vec4<OT>>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

const TX: u32 = BC / 4u;      // invocations across a K/V tile's keys (4 keys each)
const TY: u32 = BR / 4u;      // invocations across the query rows (4 rows each)
const D4: u32 = D / 4u;       // vec4 words per row
const DS: u32 = D4 + 1u;      // padded row stride of staged tiles: rows start 4 banks apart
const DV: u32 = {{DV}}u;      // vec4 columns of O per invocation (D4 / TX)
const PS: u32 = TX + 1u;      // padded row stride of P~
const LQ: u32 = (BR * D4 + WG - 1u) / WG;   // vec4 loads per invocation for a Q tile
const LK: u32 = (BC * D4 + WG - 1u) / WG;   // ... for a K or V tile
const STALE: f32 = 8.0;       // rescale only when the row max grows by more than this (nat. log)

var<workgroup> Qs: array<vec4<f32>, BR * DS>;
var<workgroup> KVs: array<vec4<f32>, BC * DS>;   // K of the tile, then its V
var<workgroup> Ps: array<vec4<f32>, BR * PS>;    // P~: row r, word t = keys t + TX·(0..3)

fn nan_f32() -> f32 {
  var bits = 0x7fc00000u; // a runtime value: NaN is not a valid WGSL constant
  return bitcast<f32>(bits);
}

// Q rows i0 .. i0+Br of head row base q_row0 into Qs (rows past Nq: zeros).
fn stage_q(q_row0: u32, i0: u32, tid: u32) {
  for (var x = 0u; x < rt(LQ); x++) {
    let e = tid + x * WG;
    if (e < BR * D4) {
      let r = e / D4;
      let d4 = e % D4;
      var t = vec4<f32>();
      if (i0 + r < P.Nq) { t = vec4<f32>(q[(q_row0 + i0 + r) * D4 + d4]); }
      Qs[r * DS + d4] = t;
    }
  }
}

// K (use_v false) or V rows j0 .. j0+Bc of head row base kv_row0 into KVs (rows past Nk: zeros).
fn stage_kv(kv_row0: u32, j0: u32, tid: u32, use_v: bool) {
  for (var x = 0u; x < rt(LK); x++) {
    let e = tid + x * WG;
    if (e < BC * D4) {
      let c = e / D4;
      let d4 = e % D4;
      var t = vec4<f32>();
      if (j0 + c < P.Nk) {
        let g = (kv_row0 + j0 + c) * D4 + d4;
        if (use_v) { t = vec4<f32>(v[g]); } else { t = vec4<f32>(k[g]); }
      }
      KVs[c * DS + d4] = t;
    }
  }
}

// The invocation's 4×4 block of Q Kᵀ: s[rr][cc] = Q[ty + TY·rr] · K[tx + TX·cc].
fn scores(tx: u32, ty: u32) -> array<vec4<f32>, 4> {
  var s = array<vec4<f32>, 4>();
  for (var d4 = 0u; d4 < rt(D4); d4++) {
    var kk = array<vec4<f32>, 4>();
    {{#loop cc < 4}}kk[{{cc}}u] = KVs[(tx + {{cc}}u * TX) * DS + d4];
    {{/loop}}
    {{#loop rr < 4}}{ let x = Qs[(ty + {{rr}}u * TY) * DS + d4];
      s[{{rr}}u] += vec4<f32>(dot(x, kk[0]), dot(x, kk[1]), dot(x, kk[2]), dot(x, kk[3])); }
    {{/loop}}
  }
  return s;
}

// acc += P~ V over a tile every row sees entirely.
fn pv_full(acc: ptr<function, array<vec4<f32>, 4 * DV>>, tx: u32, ty: u32) {
  for (var t = 0u; t < rt(TX); t++) {
    var p = array<vec4<f32>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = Ps[(ty + {{rr}}u * TY) * PS + t];
    {{/loop}}
    {{#loop u < DV}}{
      let c = tx + {{u}}u * TX;
      let v0 = KVs[t * DS + c];
      let v1 = KVs[(t + TX) * DS + c];
      let v2 = KVs[(t + 2u * TX) * DS + c];
      let v3 = KVs[(t + 3u * TX) * DS + c];
      {{#loop rr < 4}}(*acc)[{{rr}}u * DV + {{u}}u] += p[{{rr}}u].x * v0 + p[{{rr}}u].y * v1 + p[{{rr}}u].z * v2 + p[{{rr}}u].w * v3;
      {{/loop}}
    }
    {{/loop}}
  }
}

// acc += P~ V where some keys are hidden from some rows: key j0 + c reaches row rr only if
// klo[rr] <= j0 + c < khi[rr] (its P~ is 0 there, but 0 · NaN would still be NaN).
fn pv_masked(acc: ptr<function, array<vec4<f32>, 4 * DV>>, tx: u32, ty: u32, j0: u32, klo: vec4<u32>, khi: vec4<u32>) {
  let z = vec4<f32>();
  for (var t = 0u; t < rt(TX); t++) {
    let keys = vec4<u32>(j0 + t) + vec4<u32>(0u, TX, 2u * TX, 3u * TX);
    var p = array<vec4<f32>, 4>();
    var w = array<vec4<bool>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = Ps[(ty + {{rr}}u * TY) * PS + t];
    w[{{rr}}u] = (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u]));
    {{/loop}}
    {{#loop u < DV}}{
      let c = tx + {{u}}u * TX;
      let v0 = KVs[t * DS + c];
      let v1 = KVs[(t + TX) * DS + c];
      let v2 = KVs[(t + 2u * TX) * DS + c];
      let v3 = KVs[(t + 3u * TX) * DS + c];
      {{#loop rr < 4}}{ let pr = p[{{rr}}u];
        let wr = w[{{rr}}u];
        (*acc)[{{rr}}u * DV + {{u}}u] += select(z, pr.x * v0, wr.x) + select(z, pr.y * v1, wr.y) + select(z, pr.z * v2, wr.z) + select(z, pr.w * v3, wr.w); }
      {{/loop}}
    }
    {{/loop}}
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let rb = row_block(wg, nwg);   // heavy-first
  let i0 = rb.i0;
  let q_row0 = rb.q_row0;
  let kv_row0 = rb.kv_row0;
  let tx = tid % TX;
  let ty = tid / TX;
  stage_q(q_row0, i0, tid);

  // Keys visible to row ty + TY·rr: klo[rr] <= j < khi[rr] (klo = khi: a masked row).
  var klo = vec4<u32>();
  var khi = vec4<u32>();
  {{#loop rr < 4}}{ let kr = key_range(i0 + ty + {{rr}}u * TY);
    klo[{{rr}}u] = kr.x;
    khi[{{rr}}u] = kr.y; }
  {{/loop}}
  let i_end = min(i0 + BR, P.Nq);
  let t_first = key_range(i0).x / BC;                      // the block's first and last tiles
  let t_end = (key_range(i_end - 1u).y + BC - 1u) / BC;
  let ninf = vec4<f32>(neg_inf());
  var m = vec4<f32>(NEG_BIG);   // running (stale) row max, natural units
  var l = vec4<f32>();          // this invocation's share of ℓ (its keys)
  var acc = array<vec4<f32>, 4 * DV>();
  for (var jt = t_first; jt < t_end; jt++) {
    let j0 = jt * BC;
    let cls = tile_class(i0, i_end, j0, j0 + BC);
    if (cls == TILE_SKIP) { continue; }
    workgroupBarrier();   // the previous tile's readers of KVs and Ps are done
    stage_kv(kv_row0, j0, tid, false);
    workgroupBarrier();
    var s = scores(tx, ty);
    let keys = vec4<u32>(j0 + tx) + vec4<u32>(0u, TX, 2u * TX, 3u * TX);
    var mt = vec4<f32>();
    {{#loop rr < 4}}{ let x = select(ninf, s[{{rr}}u] * P.scale, (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u])));
      s[{{rr}}u] = x;
      mt[{{rr}}u] = max(max(x.x, x.y), max(x.z, x.w)); }
    {{/loop}}
    mt = row_max4(mt, tid);
    let grow = mt > m + vec4<f32>(STALE);
    let m_new = select(m, mt, grow);
    let alpha = select(vec4<f32>(1.0), exp2((m - m_new) * LOG2E), grow);
    m = m_new;
    var rs = vec4<f32>();
    {{#loop rr < 4}}{ let p = exp2((s[{{rr}}u] - vec4<f32>(m[{{rr}}u])) * LOG2E);
      rs[{{rr}}u] = (p.x + p.y) + (p.z + p.w);
      Ps[(ty + {{rr}}u * TY) * PS + tx] = p;
      let a = alpha[{{rr}}u];
      {{#loop u < DV}}acc[{{rr}}u * DV + {{u}}u] *= a;
      {{/loop}}
    }
    {{/loop}}
    l = l * alpha + rs;
    workgroupBarrier();   // every S is computed (KVs free) and P~ is written
    stage_kv(kv_row0, j0, tid, true);
    workgroupBarrier();
    if (cls == TILE_FULL) { pv_full(&acc, tx, ty); } else { pv_masked(&acc, tx, ty, j0, klo, khi); }
  }

  let lt = row_sum4(l, tid);
  {{#loop rr < 4}}{
    let i = i0 + ty + {{rr}}u * TY;
    let l_i = lt[{{rr}}u];
    if (i < P.Nq) {
      let seen = khi[{{rr}}u] > klo[{{rr}}u];
      let inv = 1.0 / l_i;
      {{#loop u < DV}}o[(q_row0 + i) * D4 + tx + {{u}}u * TX] = vec4<OT>(select(vec4<f32>(), acc[{{rr}}u * DV + {{u}}u] * inv, seen));
      {{/loop}}
      if (tx == 0u) {
        var out = neg_inf();
        if (seen) {
          out = m[{{rr}}u] + log(l_i);
          if (l_i == 0.0) { out = nan_f32(); }   // every visible score was −Inf
        }
        lse[q_row0 + i] = out;
      }
    }
  }
  {{/loop}}
}

// Shared part of the portable backward (flash_bwd.wgsl: dK/dV and dQ kernels): bindings (16-byte
// views), the staged tiles, their loader, the two 4×4 score blocks and the accumulation of
// P·X / dS·X into registers. The specializer puts it after common.wgsl. Square tiles: T = Br =
// Bc rows, T4 = T/4 invocations along each side, WG = T4·T4.
//
// Both kernels compute, for a resident tile R (rows ty + T4·rr) against a streamed tile C
// (columns tx + T4·cc), the invocation's 4×4 blocks of two products:
//   dkdv: R = keys (K, V), C = queries (Q, dO): Sᵀ = K Qᵀ, dPᵀ = V dOᵀ
//   dq:   R = queries (Q, dO), C = keys (K, V): S = Q Kᵀ, dP = dO Vᵀ
// then P = exp(scale·S − LSE), dS = P ∘ (dP − Δ) (both 0 where the key is hidden from the
// query), stored in Pw / dSw (row r, word t = columns t + T4·(0..3)), and accumulated:
//   dkdv: dV += Pᵀ dO, dK += dSᵀ Q;   dq: dQ += dS K   (scale applied at the end).
// The subtraction scale·S − LSE is done before exp2's log2(e) factor, in natural units, so a
// large logit is rounded once (as a plain f32 implementation rounds it), not three times.
//
// Bounds (indices in range by construction): workgroup indices are r·DS + d4, r·TS + t or r with
// r < T, d4 < D/4, t < T4 (the unrolled offsets are below 4·T4 = T); global reads only for
// rows below Nq / Nk, global writes only for rows below Nq (dQ) or Nk (dK, dV).

@group(0) @binding(1) var<storage, read> q: array<vec4<ST>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<ST>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<ST>>;
@group(0) @binding(5) var<storage, read> dout: array<vec4<ST>>;
@group(0) @binding(6) var<storage, read> lse: array<f32>;
@group(0) @binding(7) var<storage, read_write> delta: array<f32>;
@group(0) @binding(8) var<storage, read_write> dq: array<vec4<GT>>;
@group(0) @binding(9) var<storage, read_write> dk: array<vec4<GT>>;
@group(0) @binding(10) var<storage, read_write> dv: array<vec4<GT>>;

const T4: u32 = BR / 4u;      // invocations along each side of a tile (4 rows or columns each)
const D4: u32 = D / 4u;       // vec4 words per row
const DS: u32 = D4 + 1u;      // padded row stride of staged tiles (rows start 4 banks apart)
const DV: u32 = {{DV}}u;      // vec4 columns of dK/dV/dQ per invocation (D4 / T4)
const TS: u32 = T4 + 1u;      // padded row stride of Pw / dSw
const LT: u32 = (BR * D4 + WG - 1u) / WG;   // vec4 loads per invocation for one tile
const LR: u32 = (BR + WG - 1u) / WG;        // per-row statistics per invocation (dkdv)

alias Tile = array<vec4<f32>, BR * DS>;
alias Words = array<vec4<f32>, BR * TS>;
alias Acc = array<vec4<f32>, 4 * DV>;

var<workgroup> R0: Tile;    // resident: K (dkdv) or Q (dq)
var<workgroup> R1: Tile;    // resident: V (dkdv) or dO (dq)
var<workgroup> C0: Tile;    // streamed: Q (dkdv) or K (dq)
var<workgroup> C1: Tile;    // streamed: dO (dkdv) or V (dq)
var<workgroup> Pw: Words;   // Pᵀ (dkdv)
var<workgroup> dSw: Words;  // dSᵀ (dkdv) or dS (dq)
var<workgroup> lse_s: array<f32, BR>;     // dkdv: the Q tile's LSE, Δ and visible keys [lo, hi)
var<workgroup> delta_s: array<f32, BR>;
var<workgroup> klo_s: array<u32, BR>;
var<workgroup> khi_s: array<u32, BR>;

// Rows n0 .. n0+T of head row base row0, from Q and dO (queries) or K and V (keys); rows at
// or past n_rows are zeros. Word e of the tile is (row e / D4, column e % D4).
fn tile_word(queries: bool, second: bool, row0: u32, n0: u32, n_rows: u32, e: u32) -> vec4<f32> {
  let r = e / D4;
  var a = vec4<f32>();
  if (n0 + r < n_rows) {
    let g = (row0 + n0 + r) * D4 + e % D4;
    if (queries) {
      if (second) { a = vec4<f32>(dout[g]); } else { a = vec4<f32>(q[g]); }
    } else {
      if (second) { a = vec4<f32>(v[g]); } else { a = vec4<f32>(k[g]); }
    }
  }
  return a;
}

// The resident tiles R0, R1 (rows n0 .. n0+T).
fn stage_r(queries: bool, row0: u32, n0: u32, n_rows: u32, tid: u32) {
  for (var x = 0u; x < rt(LT); x++) {
    let e = tid + x * WG;
    if (e < BR * D4) {
      R0[(e / D4) * DS + e % D4] = tile_word(queries, false, row0, n0, n_rows, e);
      R1[(e / D4) * DS + e % D4] = tile_word(queries, true, row0, n0, n_rows, e);
    }
  }
}

// The streamed tiles C0, C1 (rows n0 .. n0+T).
fn stage_c(queries: bool, row0: u32, n0: u32, n_rows: u32, tid: u32) {
  for (var x = 0u; x < rt(LT); x++) {
    let e = tid + x * WG;
    if (e < BR * D4) {
      C0[(e / D4) * DS + e % D4] = tile_word(queries, false, row0, n0, n_rows, e);
      C1[(e / D4) * DS + e % D4] = tile_word(queries, true, row0, n0, n_rows, e);
    }
  }
}

// The invocation's 4×4 blocks: x[rr] = R0[row rr] · C0[col cc], x[4 + rr] = R1[row rr] · C1[col cc].
fn blocks(tx: u32, ty: u32) -> array<vec4<f32>, 8> {
  var x = array<vec4<f32>, 8>();
  for (var d4 = 0u; d4 < rt(D4); d4++) {
    var a = array<vec4<f32>, 4>();
    var c = array<vec4<f32>, 4>();
    {{#loop cc < 4}}a[{{cc}}u] = C0[(tx + {{cc}}u * T4) * DS + d4];
    c[{{cc}}u] = C1[(tx + {{cc}}u * T4) * DS + d4];
    {{/loop}}
    {{#loop rr < 4}}{ let r = R0[(ty + {{rr}}u * T4) * DS + d4];
      let s = R1[(ty + {{rr}}u * T4) * DS + d4];
      x[{{rr}}u] += vec4<f32>(dot(r, a[0]), dot(r, a[1]), dot(r, a[2]), dot(r, a[3]));
      x[4u + {{rr}}u] += vec4<f32>(dot(s, c[0]), dot(s, c[1]), dot(s, c[2]), dot(s, c[3])); }
    {{/loop}}
  }
  return x;
}

// acc[rr, u] += Σ_t Σ_cc w[row rr][t].cc · y[row t + T4·cc][col u] over a tile with no hidden pair.
fn accum_full(acc: ptr<function, Acc>, w: ptr<workgroup, Words>, y: ptr<workgroup, Tile>, tx: u32, ty: u32) {
  for (var t = 0u; t < rt(T4); t++) {
    var p = array<vec4<f32>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = (*w)[(ty + {{rr}}u * T4) * TS + t];
    {{/loop}}
    {{#loop u < DV}}{
      let c = tx + {{u}}u * T4;
      let y0 = (*y)[t * DS + c];
      let y1 = (*y)[(t + T4) * DS + c];
      let y2 = (*y)[(t + 2u * T4) * DS + c];
      let y3 = (*y)[(t + 3u * T4) * DS + c];
      {{#loop rr < 4}}(*acc)[{{rr}}u * DV + {{u}}u] += p[{{rr}}u].x * y0 + p[{{rr}}u].y * y1 + p[{{rr}}u].z * y2 + p[{{rr}}u].w * y3;
      {{/loop}}
    }
    {{/loop}}
  }
}

// The same where some keys are hidden from some queries: a hidden pair's product is skipped
// (its w is 0, but 0 · NaN would be NaN). rows_are_keys (dkdv): row rr is key j0 + ty + T4·rr,
// column cc query t + T4·cc of the Q tile (ranges in klo_s, khi_s); else (dq) row rr is a query
// with visible keys klo[rr] <= j < khi[rr], column cc key j0 + t + T4·cc.
fn accum_masked(acc: ptr<function, Acc>, w: ptr<workgroup, Words>, y: ptr<workgroup, Tile>, tx: u32, ty: u32,
                rows_are_keys: bool, j0: u32, klo: vec4<u32>, khi: vec4<u32>) {
  let z = vec4<f32>();
  let offs = vec4<u32>(0u, T4, 2u * T4, 3u * T4);
  for (var t = 0u; t < rt(T4); t++) {
    var lc = vec4<u32>();
    var hc = vec4<u32>();
    if (rows_are_keys) {
      lc = vec4<u32>(klo_s[t], klo_s[t + T4], klo_s[t + 2u * T4], klo_s[t + 3u * T4]);
      hc = vec4<u32>(khi_s[t], khi_s[t + T4], khi_s[t + 2u * T4], khi_s[t + 3u * T4]);
    }
    var p = array<vec4<f32>, 4>();
    var m = array<vec4<bool>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = (*w)[(ty + {{rr}}u * T4) * TS + t];
    { let kj = vec4<u32>(j0 + t) + offs;
      m[{{rr}}u] = (kj >= vec4<u32>(klo[{{rr}}u])) & (kj < vec4<u32>(khi[{{rr}}u])); }
    if (rows_are_keys) { let kr = vec4<u32>(j0 + ty + {{rr}}u * T4);
      m[{{rr}}u] = (kr >= lc) & (kr < hc); }
    {{/loop}}
    {{#loop u < DV}}{
      let c = tx + {{u}}u * T4;
      let y0 = (*y)[t * DS + c];
      let y1 = (*y)[(t + T4) * DS + c];
      let y2 = (*y)[(t + 2u * T4) * DS + c];
      let y3 = (*y)[(t + 3u * T4) * DS + c];
      {{#loop rr < 4}}{ let pr = p[{{rr}}u];
        let mr = m[{{rr}}u];
        (*acc)[{{rr}}u * DV + {{u}}u] += select(z, pr.x * y0, mr.x) + select(z, pr.y * y1, mr.y) + select(z, pr.z * y2, mr.z) + select(z, pr.w * y3, mr.w); }
      {{/loop}}
    }
    {{/loop}}
  }
}

// Shared part of the portable backward (flash_bwd.wgsl: dK/dV and dQ kernels): bindings (16-byte
// views), the staged chunks, their loaders, the two 4×4 score blocks and the accumulation of
// P·X / dS·X into registers. The specializer puts it after common.wgsl.
//
// Tiles: a workgroup owns RT = BR = BC resident rows (keys for dK/dV, queries for dQ) and streams
// tiles of CT rows of the other side; invocation (ty, tx) = (tid / TC, tid % TC), WG = TR·TC with
// TR = RT/4, TC = CT/4. Both kernels compute, for the resident tile R (rows ty + TR·rr) against a
// streamed tile C (rows tx + TC·cc), the invocation's 4×4 blocks of two products:
//   dkdv: R = keys (K, V), C = queries (Q, dO): Sᵀ = K Qᵀ, dPᵀ = V dOᵀ
//   dq:   R = queries (Q, dO), C = keys (K, V): S = Q Kᵀ, dP = dO Vᵀ
// then P = exp(scale·S − LSE), dS = P ∘ (dP − Δ) (both 0 where the key is hidden from the
// query), stored in Pw / dSw (row r, word t = columns t + TC·(0..3)), and accumulated:
//   dkdv: dV += Pᵀ dO, dK += dSᵀ Q;   dq: dQ += dS K   (scale applied at the end).
// The subtraction scale·S − LSE is done before exp2's log2(e) factor, in natural units, so a
// large logit is rounded once (as a plain f32 implementation rounds it), not three times.
//
// Chunks: the D columns are staged DC vec4 words (4·DC values) at a time, NCH = D/4/DC chunks, so
// that workgroup memory holds four RT- or CT-row chunks (not four full tiles) and the workgroup can
// have more invocations at large D (f32 at D = 128: 128 invocations in 46 KiB, against 16 with
// whole tiles). The score blocks sum over the chunks; the accumulators are split by chunk
// (acc[c] holds the invocation's columns c·DC + tx + TC·u, u < DU = DC/TC), so each chunk of
// the streamed tile feeds its own accumulators. With one chunk (NCH = 1) the resident tile is
// staged once and the streamed one once per tile.
//
// Staged words keep the storage type: R0, R1, C0, C1 (one array SW, below) hold vec4<ST>, so
// f16 storage stages 8-byte vec4<f16> words (half the bytes of f32: twice the chunk fits; tiles.ts
// counts them), widened to f32 right after each workgroup-memory read. Products and sums are f32
// as when the words were widened at staging (f16 → f32 is exact), so the results are bitwise
// those of f32 staging. Row padding: CS = DC + 1 words is odd wherever TC > 1 (TC divides DC, and
// D is a multiple of 8), so the words at one d of 8 (16-byte) or 16 (8-byte) consecutive rows,
// which blocks() reads at once across tx, sit in distinct banks. Pw and dSw stay f32.
//
// Staging points, in order: per tile pair, the NCH chunks of the score blocks (S0 … S(NCH−1):
// streamed chunk c, with NCH > 1 the resident chunk c, with S0 the statistics), then the chunks
// of the accumulation that must be staged again (A0 … A(NCH−2): streamed chunk c); then the next
// tile pair's S0. Each staging point is
//   barrier (a) · global loads and writes to R*, C* (and the statistics) · barrier (b) · reads
// (Two variants were measured on the H200 and removed: the next staging point's words prefetched
// into registers during the products, and the accumulation's chunks staged alternately into the
// resident and streamed buffers to save a barrier per chunk. Bitwise the same gradients, no gain:
// docs/performance.md, "Portable backward: f16 staged as f16; prefetch and merged barriers".)
//
// Workgroup arrays are two-dimensional, [row][word] (the same bytes as flat arrays with row r at
// word r·CS or r·TS): Dawn's robustness clamps every dynamic index, and with [row][word] a row's
// clamp does not change along the inner loops (it is hoisted) while the word's is one per step,
// shared by the step's loads, instead of one per load (see flash_fwd.wgsl).
//
// Bounds (indices in range by construction): SW[OFS + r][d] with r < RT (resident chunks at
// OFS = OR0, OR1) or r < CT (streamed chunks at OC0, OC1) and d < DC < CS, so each row index lies
// below the next offset (the last below 2·(RT + CT)); Pw, dSw [r][t] with r < RT, t < TC < TS
// (the unrolled offsets are below 4·TR = RT and 4·TC = CT); statistics [r] with r < CT; chunk
// c < NCH, so global columns c·DC + d < D/4; global reads only for rows below Nq / Nk, global
// writes only for rows below Nq (dQ) or Nk (dK, dV).
// Robustness (browsers): as in flash_fwd.wgsl, the inner loops' helpers restate their indices'
// bounds (tx_ % TC, ty_ % TR, t_ % TC, c_ % DC, the streamed chunk as 0 or 1), the same values,
// so that Tint proves them in range and clamps none of their workgroup reads.

// Storage words (the bindings: BACKWARD_BINDINGS, src/kernels/flashBackward.ts): dQ, dK, dV in vec4s of their element
// type; Q, K, V and dO as IW (tiles.ts portableValues), as in flash_fwd.wgsl: f32 storage's vec4<f32>, and f16
// storage's four halves as a pair of u32, which h4 bitcasts to vec4<f16> as each word is read: the same bits as
// vec4<f16> words, and on an H100 the backward 0.5–4.2% faster than with them (bench/results/2026-12-08-b32-pf2-h100).
alias IW = {{IW}};
fn h4(x: IW) -> vec4<ST> { return bitcast<vec4<ST>>(x); }
alias GW = vec4<GT>;

const RT: u32 = BR;           // resident rows per workgroup (BR = BC)
const CT: u32 = {{CT}}u;      // streamed rows per tile
const TR: u32 = RT / 4u;      // invocations along the resident rows (4 rows each)
const TC: u32 = CT / 4u;      // invocations along the streamed rows (4 each)
const D4: u32 = D / 4u;       // vec4 words per row
const DC: u32 = {{DC}}u;      // vec4 words per staged chunk
const NCH: u32 = {{NCH}}u;    // chunks per row (D4 / DC)
const CS: u32 = DC + 1u;      // padded row stride of staged chunks (rows start 4 (f32) or 2 (f16) banks apart)
const DU: u32 = {{DU}}u;      // vec4 columns of dK/dV/dQ per invocation and chunk (DC / TC)
const TS: u32 = TC + 1u;      // padded row stride of Pw / dSw
const LRW: u32 = (RT * DC + WG - 1u) / WG;   // vec4 loads per invocation for a resident chunk
const LCW: u32 = (CT * DC + WG - 1u) / WG;   // ... for a streamed chunk
const LS: u32 = (CT + WG - 1u) / WG;         // per-row statistics per invocation (dkdv)

alias Words = array<array<vec4<f32>, TS>, RT>;
alias Acc = array<vec4<f32>, 4 * DU>;     // one chunk's columns of the invocation's 4 rows
alias AccAll = array<Acc, NCH>;

// The staged chunks, one array of rows: R0, R1 (RT rows each), then C0, C1 (CT rows each), row r
// of one at row OFS + r of SW.
const OR0: u32 = 0u;                       // resident: K (dkdv) or Q (dq), chunk c
const OR1: u32 = RT;                       // resident: V (dkdv) or dO (dq)
const OC0: u32 = 2u * RT;                  // streamed: Q (dkdv) or K (dq)
const OC1: u32 = 2u * RT + CT;             // streamed: dO (dkdv) or V (dq)
var<workgroup> SW: array<array<vec4<ST>, CS>, 2u * (RT + CT)>;
var<workgroup> Pw: Words;   // Pᵀ (dkdv)
var<workgroup> dSw: Words;  // dSᵀ (dkdv) or dS (dq)
var<workgroup> lse_s: array<f32, CT>;     // dkdv: the Q tile's LSE, Δ and visible keys [lo, hi)
var<workgroup> delta_s: array<f32, CT>;
var<workgroup> klo_s: array<u32, CT>;
var<workgroup> khi_s: array<u32, CT>;

// Word e of chunk c of rows n0 .. n0+rows of head row base row0, from Q and dO (queries) or
// K and V (keys): row e / DC, column c·DC + e % DC; rows at or past n_rows are zeros.
fn chunk_word(queries: bool, second: bool, row0: u32, n0: u32, n_rows: u32, c: u32, e: u32) -> vec4<ST> {
  let r = e / DC;
  var a = vec4<ST>();
  if (n0 + r < n_rows) {
    let g = (row0 + n0 + r) * D4 + c * DC + e % DC;
    if (queries) {
      if (second) { a = h4(dout[g]); } else { a = h4(q[g]); }
    } else {
      if (second) { a = h4(v[g]); } else { a = h4(k[g]); }
    }
  }
  return a;
}

// Chunk c of the resident tiles R0, R1 (rows n0 .. n0+RT).
fn stage_r(queries: bool, row0: u32, n0: u32, n_rows: u32, c: u32, tid: u32) {
  for (var x = 0u; x < rt(LRW); x++) {
    let e = tid + x * WG;
    if (e < RT * DC) {
      SW[OR0 + e / DC][e % DC] = chunk_word(queries, false, row0, n0, n_rows, c, e);
      SW[OR1 + e / DC][e % DC] = chunk_word(queries, true, row0, n0, n_rows, c, e);
    }
  }
}

// Chunk c of the streamed tiles C0 and (when both) C1 (rows n0 .. n0+CT).
fn stage_c(queries: bool, row0: u32, n0: u32, n_rows: u32, c: u32, tid: u32, both: bool) {
  for (var x = 0u; x < rt(LCW); x++) {
    let e = tid + x * WG;
    if (e < CT * DC) {
      SW[OC0 + e / DC][e % DC] = chunk_word(queries, false, row0, n0, n_rows, c, e);
      if (both) { SW[OC1 + e / DC][e % DC] = chunk_word(queries, true, row0, n0, n_rows, c, e); }
    }
  }
}

// The staged chunk's share of the invocation's 4×4 blocks:
// x[rr] += R0[row rr] · C0[col cc], x[4 + rr] += R1[row rr] · C1[col cc].
fn blocks(x: ptr<function, array<vec4<f32>, 8>>, tx_: u32, ty_: u32) {
  let tx = tx_ % TC;   // = tx_, ty_: the bounds made visible (see "Robustness" above)
  let ty = ty_ % TR;
  for (var d = 0u; d < rt(DC); d++) {
    var a = array<vec4<f32>, 4>();
    var c = array<vec4<f32>, 4>();
    {{#loop cc < 4}}a[{{cc}}u] = vec4<f32>(SW[OC0 + tx + {{cc}}u * TC][d]);
    c[{{cc}}u] = vec4<f32>(SW[OC1 + tx + {{cc}}u * TC][d]);
    {{/loop}}
    {{#loop rr < 4}}{ let r = vec4<f32>(SW[OR0 + ty + {{rr}}u * TR][d]);
      let s = vec4<f32>(SW[OR1 + ty + {{rr}}u * TR][d]);
      (*x)[{{rr}}u] += vec4<f32>(dot(r, a[0]), dot(r, a[1]), dot(r, a[2]), dot(r, a[3]));
      (*x)[4u + {{rr}}u] += vec4<f32>(dot(s, c[0]), dot(s, c[1]), dot(s, c[2]), dot(s, c[3])); }
    {{/loop}}
  }
}

// The score blocks of the current tile pair: the sum of blocks() over the NCH chunks (staging
// points S0 … S(NCH−1)). The resident chunk is staged here too unless it stays (NCH = 1: staged
// once, before the tiles); the streamed rows' statistics (dkdv) go to workgroup memory with the
// first chunk.
fn score_blocks(queries_resident: bool, r_row0: u32, r0: u32, r_rows: u32,
                c_row0: u32, c0: u32, c_rows: u32, tid: u32, tx: u32, ty: u32) -> array<vec4<f32>, 8> {
  var x = array<vec4<f32>, 8>();
  for (var c = 0u; c < rt(NCH); c++) {
    workgroupBarrier();   // (a) the readers of the previous chunk (or tile) are done
    if (NCH > 1u) { stage_r(queries_resident, r_row0, r0, r_rows, c, tid); }
    stage_c(!queries_resident, c_row0, c0, c_rows, c, tid, true);
    if (!queries_resident && c == 0u) { stage_stats(c_row0, c0, tid); }
    workgroupBarrier();   // (b) staged
    blocks(&x, tx, ty);
  }
  return x;
}

// dkdv: LSE, Δ and the visible keys [lo, hi) of the Q tile's rows i0 .. i0+CT (past Nq: none).
fn stage_stats(row0: u32, i0: u32, tid: u32) {
  for (var x = 0u; x < rt(LS); x++) {
    let r = tid + x * WG;
    if (r < CT) {
      var ls = 0.0;
      var dl = 0.0;
      if (i0 + r < P.Nq) {
        ls = lse[row0 + i0 + r];
        dl = delta[row0 + i0 + r];
      }
      let kr = key_range(i0 + r);
      lse_s[r] = ls;
      delta_s[r] = dl;
      klo_s[r] = kr.x;
      khi_s[r] = kr.y;
    }
  }
}

// Step st (0 … NCH−1) of the accumulation takes chunk ch = (st + NCH − 1) % NCH: the last chunk
// of score_blocks is still staged, so the chunks go in the order NCH−1, 0, 1, …, and step st ≥ 1
// stages A(st−1) (chunk st − 1) into C0 (and C1 when both) between two barriers (2·NCH − 1
// barriers a tile pair in all). The products then read it at OC0, OC1.
fn restage_c(queries: bool, row0: u32, n0: u32, n_rows: u32, st: u32, tid: u32, both: bool) {
  workgroupBarrier();   // Pw / dSw written; (a) the previous chunk's readers are done
  if (st >= 1u) {
    stage_c(queries, row0, n0, n_rows, st - 1u, tid, both);
    workgroupBarrier();   // (b)
  }
}

// Column c of the streamed chunk C0 (ys = 0) or C1 (ys = 1) at rows t + TC·(0..3), in f32: the y
// words that multiply w word t.
fn y_words(ys: u32, t_: u32, c_: u32) -> array<vec4<f32>, 4> {
  let yo = OC0 + (ys % 2u) * CT;   // = OC0 or OC1; ys, t_ and c_ restated with their bounds visible
  let t = t_ % TC;
  let c = c_ % DC;
  return array<vec4<f32>, 4>(vec4<f32>(SW[yo + t][c]), vec4<f32>(SW[yo + t + TC][c]), vec4<f32>(SW[yo + t + 2u * TC][c]), vec4<f32>(SW[yo + t + 3u * TC][c]));
}

// acc[rr, u] += Σ_t Σ_cc w[row rr][t].cc · y[row t + TC·cc][col u] over a tile with no hidden pair,
// as a chain of fma into acc (one operation a product); y: the streamed chunk C0 (ys = 0) or C1 (ys = 1).
// (S and dP in blocks() keep a word's dot() and an add: flash_fwd.wgsl scores says why.)
fn accum_full(acc: ptr<function, Acc>, w: ptr<workgroup, Words>, ys: u32, tx: u32, ty_: u32) {
  let ty = ty_ % TR;   // = ty_: its bound made visible (see "Robustness" above)
  for (var t = 0u; t < rt(TC); t++) {
    var p = array<vec4<f32>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = (*w)[ty + {{rr}}u * TR][t];
    {{/loop}}
    {{#loop u < DU}}{
      let y = y_words(ys, t, tx + {{u}}u * TC);
      {{#loop rr < 4}}{ let pr = p[{{rr}}u];
        (*acc)[{{rr}}u * DU + {{u}}u] = fma(vec4<f32>(pr.w), y[3], fma(vec4<f32>(pr.z), y[2], fma(vec4<f32>(pr.y), y[1], fma(vec4<f32>(pr.x), y[0], (*acc)[{{rr}}u * DU + {{u}}u])))); }
      {{/loop}}
    }
    {{/loop}}
  }
}

// The same where some keys are hidden from some queries: a hidden pair's product is skipped
// (its w is 0, but 0 · NaN would be NaN). rows_are_keys (dkdv): row rr is key j0 + ty + TR·rr,
// column cc query t + TC·cc of the Q tile (ranges in klo_s, khi_s); else (dq) row rr is a query
// with visible keys klo[rr] <= j < khi[rr], column cc key j0 + t + TC·cc.
fn accum_masked(acc: ptr<function, Acc>, w: ptr<workgroup, Words>, ys: u32, tx: u32, ty_: u32,
                rows_are_keys: bool, j0: u32, klo: vec4<u32>, khi: vec4<u32>) {
  let ty = ty_ % TR;   // = ty_: its bound made visible (see "Robustness" above)
  let z = vec4<f32>();
  let offs = vec4<u32>(0u, TC, 2u * TC, 3u * TC);
  for (var t = 0u; t < rt(TC); t++) {
    var lc = vec4<u32>();
    var hc = vec4<u32>();
    if (rows_are_keys) {
      lc = vec4<u32>(klo_s[t], klo_s[t + TC], klo_s[t + 2u * TC], klo_s[t + 3u * TC]);
      hc = vec4<u32>(khi_s[t], khi_s[t + TC], khi_s[t + 2u * TC], khi_s[t + 3u * TC]);
    }
    var p = array<vec4<f32>, 4>();
    var m = array<vec4<bool>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = (*w)[ty + {{rr}}u * TR][t];
    { let kj = vec4<u32>(j0 + t) + offs;
      m[{{rr}}u] = (kj >= vec4<u32>(klo[{{rr}}u])) & (kj < vec4<u32>(khi[{{rr}}u])); }
    if (rows_are_keys) { let kr = vec4<u32>(j0 + ty + {{rr}}u * TR);
      m[{{rr}}u] = (kr >= lc) & (kr < hc); }
    {{/loop}}
    {{#loop u < DU}}{
      let y = y_words(ys, t, tx + {{u}}u * TC);
      {{#loop rr < 4}}{ let pr = p[{{rr}}u];
        let mr = m[{{rr}}u];
        (*acc)[{{rr}}u * DU + {{u}}u] += select(z, pr.x * y[0], mr.x) + select(z, pr.y * y[1], mr.y) + select(z, pr.z * y[2], mr.z) + select(z, pr.w * y[3], mr.w); }
      {{/loop}}
    }
    {{/loop}}
  }
}

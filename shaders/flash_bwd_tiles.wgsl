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
//   barrier (a) · writes to R*, C* (and the statistics) · barrier (b) · reads (products)
// Prefetch (PF, FLASHRING_PORTABLE_BWD_PREFETCH): PF = 0 loads each staging point's words from
// global memory between (a) and (b) and stores them at once (the loads' latency stalls the
// workgroup there). PF > 0 keeps the next staging point's words in registers (pf_* below): right
// after (b) of one staging point, each invocation issues the global loads of the next one
// (fetch_*: the next chunk of this tile pair, else the first chunk of the next tile pair the
// kernel will visit, which the kernels find one tile ahead), whose latency hides behind the
// products in between; between (a) and (b) of the next staging point it only stores them
// (stash_*). PF = 1 prefetches the streamed chunks and the statistics (2·LCW vec4 words and 4·LS
// scalars of registers per invocation); PF = 2 also the resident chunks (2·LRW words more; the
// same as PF = 1 with one chunk, where the resident rows are staged once).
// Race freedom is unchanged by PF: the registers are private, and every write to workgroup
// memory (stash or stage) sits between the same barriers (a) and (b): after (a), so every read of
// the previous contents (the previous staging point's products, or the previous tile pair's
// Pw/dSw/statistics readers) is done, and before (b), which precedes every read of the new
// contents. The arithmetic and its order do not change with PF (bitwise the same results).
// Barrier merge (MG, FLASHRING_PORTABLE_BWD_MERGE; AM where NCH > 1 and CT <= RT): during the
// accumulation the resident chunks are idle (they are staged again at the next S0), so A0, A1, …
// go alternately into them and into the streamed chunks, each staged while the previous one is
// read: one barrier per accumulation chunk instead of two (restage_c has the proof). Again the
// same arithmetic in the same order.
//
// Bounds (indices in range by construction): workgroup indices are OFS + r·CS + d (SW), r·TS + t
// or r, with r < RT (resident chunks at OFS = OR0, OR1; Pw, dSw) or r < CT (streamed chunks at
// OC0, OC1, or with the merge at OR0, OR1, which CT <= RT allows; statistics), d < DC, t < TC
// (the unrolled offsets are below 4·TR = RT and 4·TC = CT), so each index lies below the next
// offset (the last below 2·(RT + CT)·CS); chunk c < NCH, so global columns c·DC + d < D/4;
// global reads only for rows below Nq / Nk (the prefetch of a next tile pair too: its rows are
// n0 + r with the check n0 + r < Nq / Nk, its head row base that of a query head below Hq),
// global writes only for rows below Nq (dQ) or Nk (dK, dV). Registers pf_* are indexed by the
// staging loops' counters x < LCW, LRW, LS.

@group(0) @binding(1) var<storage, read> q: array<vec4<ST>>;
@group(0) @binding(2) var<storage, read> k: array<vec4<ST>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<ST>>;
@group(0) @binding(5) var<storage, read> dout: array<vec4<ST>>;
@group(0) @binding(6) var<storage, read> lse: array<f32>;
@group(0) @binding(7) var<storage, read_write> delta: array<f32>;
@group(0) @binding(8) var<storage, read_write> dq: array<vec4<GT>>;
@group(0) @binding(9) var<storage, read_write> dk: array<vec4<GT>>;
@group(0) @binding(10) var<storage, read_write> dv: array<vec4<GT>>;

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
const PF: u32 = {{PF}}u;      // prefetch: 0 none, 1 streamed chunks and statistics, 2 also resident chunks
// Alternating accumulation buffers (the barrier merge, MG = 1; see the header): only where the
// resident chunks are restaged (NCH > 1) and a streamed chunk fits in a resident one (CT <= RT).
const MG: u32 = {{MG}}u;      // barrier merge asked for (0, 1)
const AM: bool = MG == 1u && NCH > 1u && CT <= RT;

alias Words = array<vec4<f32>, RT * TS>;
alias Acc = array<vec4<f32>, 4 * DU>;     // one chunk's columns of the invocation's 4 rows
alias AccAll = array<Acc, NCH>;

// The staged chunks, one array: R0, R1 (RT rows each), then C0, C1 (CT rows each), row r of one
// at word OFS + r·CS. Every index is below its chunk's end: OFS + (rows − 1)·CS + DC < OFS + rows·CS.
const OR0: u32 = 0u;                       // resident: K (dkdv) or Q (dq), chunk c
const OR1: u32 = RT * CS;                  // resident: V (dkdv) or dO (dq)
const OC0: u32 = 2u * RT * CS;             // streamed: Q (dkdv) or K (dq)
const OC1: u32 = 2u * RT * CS + CT * CS;   // streamed: dO (dkdv) or V (dq)
var<workgroup> SW: array<vec4<ST>, 2u * (RT + CT) * CS>;
var<workgroup> Pw: Words;   // Pᵀ (dkdv)
var<workgroup> dSw: Words;  // dSᵀ (dkdv) or dS (dq)
var<workgroup> lse_s: array<f32, CT>;     // dkdv: the Q tile's LSE, Δ and visible keys [lo, hi)
var<workgroup> delta_s: array<f32, CT>;
var<workgroup> klo_s: array<u32, CT>;
var<workgroup> khi_s: array<u32, CT>;

// Prefetch registers (PF > 0): the next staging point's words, as stage_c / stage_r / stage_stats
// would store them (word x of the invocation: e = tid + x·WG).
var<private> pf_c0: array<vec4<ST>, LCW>;
var<private> pf_c1: array<vec4<ST>, LCW>;
var<private> pf_r0: array<vec4<ST>, LRW>;
var<private> pf_r1: array<vec4<ST>, LRW>;
var<private> pf_lse: array<f32, LS>;
var<private> pf_delta: array<f32, LS>;
var<private> pf_kr: array<vec2<u32>, LS>;

// The next tile pair a kernel visits (PF > 0): the first row n0 of its streamed tile and that
// tile's head row base row0 (dkdv: the next query head's after the last tile of one); ok false
// after the last.
struct Next { row0: u32, n0: u32, ok: bool }

// Word e of chunk c of rows n0 .. n0+rows of head row base row0, from Q and dO (queries) or
// K and V (keys): row e / DC, column c·DC + e % DC; rows at or past n_rows are zeros.
fn chunk_word(queries: bool, second: bool, row0: u32, n0: u32, n_rows: u32, c: u32, e: u32) -> vec4<ST> {
  let r = e / DC;
  var a = vec4<ST>();
  if (n0 + r < n_rows) {
    let g = (row0 + n0 + r) * D4 + c * DC + e % DC;
    if (queries) {
      if (second) { a = dout[g]; } else { a = q[g]; }
    } else {
      if (second) { a = v[g]; } else { a = k[g]; }
    }
  }
  return a;
}

// Chunk c of the resident tiles R0, R1 (rows n0 .. n0+RT).
fn stage_r(queries: bool, row0: u32, n0: u32, n_rows: u32, c: u32, tid: u32) {
  for (var x = 0u; x < rt(LRW); x++) {
    let e = tid + x * WG;
    if (e < RT * DC) {
      SW[OR0 + (e / DC) * CS + e % DC] = chunk_word(queries, false, row0, n0, n_rows, c, e);
      SW[OR1 + (e / DC) * CS + e % DC] = chunk_word(queries, true, row0, n0, n_rows, c, e);
    }
  }
}

// Chunk c of the streamed tiles C0 and (when both) C1 (rows n0 .. n0+CT).
fn stage_c(queries: bool, row0: u32, n0: u32, n_rows: u32, c: u32, tid: u32, both: bool) {
  for (var x = 0u; x < rt(LCW); x++) {
    let e = tid + x * WG;
    if (e < CT * DC) {
      SW[OC0 + (e / DC) * CS + e % DC] = chunk_word(queries, false, row0, n0, n_rows, c, e);
      if (both) { SW[OC1 + (e / DC) * CS + e % DC] = chunk_word(queries, true, row0, n0, n_rows, c, e); }
    }
  }
}

// PF > 0: the words stage_r / stage_c would store, into registers (global loads only) ...
fn fetch_r(queries: bool, row0: u32, n0: u32, n_rows: u32, c: u32, tid: u32) {
  for (var x = 0u; x < rt(LRW); x++) {
    let e = tid + x * WG;
    if (e < RT * DC) {
      pf_r0[x] = chunk_word(queries, false, row0, n0, n_rows, c, e);
      pf_r1[x] = chunk_word(queries, true, row0, n0, n_rows, c, e);
    }
  }
}

fn fetch_c(queries: bool, row0: u32, n0: u32, n_rows: u32, c: u32, tid: u32, both: bool) {
  for (var x = 0u; x < rt(LCW); x++) {
    let e = tid + x * WG;
    if (e < CT * DC) {
      pf_c0[x] = chunk_word(queries, false, row0, n0, n_rows, c, e);
      if (both) { pf_c1[x] = chunk_word(queries, true, row0, n0, n_rows, c, e); }
    }
  }
}

// ... and from registers into workgroup memory (the same words, the same places).
fn stash_r(tid: u32) {
  for (var x = 0u; x < rt(LRW); x++) {
    let e = tid + x * WG;
    if (e < RT * DC) {
      SW[OR0 + (e / DC) * CS + e % DC] = pf_r0[x];
      SW[OR1 + (e / DC) * CS + e % DC] = pf_r1[x];
    }
  }
}

// Into the streamed chunks (o = (OC0, OC1)) or, merged accumulation, the resident ones ((OR0, OR1)).
fn stash_c(o: vec2<u32>, tid: u32, both: bool) {
  for (var x = 0u; x < rt(LCW); x++) {
    let e = tid + x * WG;
    if (e < CT * DC) {
      SW[o.x + (e / DC) * CS + e % DC] = pf_c0[x];
      if (both) { SW[o.y + (e / DC) * CS + e % DC] = pf_c1[x]; }
    }
  }
}

// The staged chunk's share of the invocation's 4×4 blocks:
// x[rr] += R0[row rr] · C0[col cc], x[4 + rr] += R1[row rr] · C1[col cc].
fn blocks(x: ptr<function, array<vec4<f32>, 8>>, tx: u32, ty: u32) {
  for (var d = 0u; d < rt(DC); d++) {
    var a = array<vec4<f32>, 4>();
    var c = array<vec4<f32>, 4>();
    {{#loop cc < 4}}a[{{cc}}u] = vec4<f32>(SW[OC0 + (tx + {{cc}}u * TC) * CS + d]);
    c[{{cc}}u] = vec4<f32>(SW[OC1 + (tx + {{cc}}u * TC) * CS + d]);
    {{/loop}}
    {{#loop rr < 4}}{ let r = vec4<f32>(SW[OR0 + (ty + {{rr}}u * TR) * CS + d]);
      let s = vec4<f32>(SW[OR1 + (ty + {{rr}}u * TR) * CS + d]);
      (*x)[{{rr}}u] += vec4<f32>(dot(r, a[0]), dot(r, a[1]), dot(r, a[2]), dot(r, a[3]));
      (*x)[4u + {{rr}}u] += vec4<f32>(dot(s, c[0]), dot(s, c[1]), dot(s, c[2]), dot(s, c[3])); }
    {{/loop}}
  }
}

// The score blocks of the current tile pair: the sum of blocks() over the NCH chunks (staging
// points S0 … S(NCH−1)). The resident chunk is staged here too unless it stays (NCH = 1: staged
// once, before the tiles); the streamed rows' statistics (dkdv) go to workgroup memory with the
// first chunk. PF > 0: the registers hold S0's words on entry (fetched during the previous tile
// pair, or before the first), and after each (b) take the next staging point's: S(c+1), else
// A0 of this tile pair (NCH > 1), else S0 of the next (`nxt`); the next resident chunk (PF = 2)
// and the next tile pair's statistics likewise.
fn score_blocks(queries_resident: bool, r_row0: u32, r0: u32, r_rows: u32,
                c_row0: u32, c0: u32, c_rows: u32, nxt: Next, tid: u32, tx: u32, ty: u32) -> array<vec4<f32>, 8> {
  var x = array<vec4<f32>, 8>();
  let stats = !queries_resident;   // dkdv: statistics staged, both streamed chunks restaged
  for (var c = 0u; c < rt(NCH); c++) {
    workgroupBarrier();   // (a) the readers of the previous chunk (or tile) are done
    if (PF == 0u) {
      if (NCH > 1u) { stage_r(queries_resident, r_row0, r0, r_rows, c, tid); }
      stage_c(!queries_resident, c_row0, c0, c_rows, c, tid, true);
      if (stats && c == 0u) { stage_stats(c_row0, c0, tid); }
    } else {
      if (NCH > 1u) {
        if (PF == 2u) { stash_r(tid); } else { stage_r(queries_resident, r_row0, r0, r_rows, c, tid); }
      }
      stash_c(vec2<u32>(OC0, OC1), tid, true);
      if (stats && c == 0u) { stash_stats(tid); }
    }
    workgroupBarrier();   // (b) staged
    if (PF > 0u) {
      if (c + 1u < NCH) { fetch_c(!queries_resident, c_row0, c0, c_rows, c + 1u, tid, true); }
      else if (NCH > 1u) { fetch_c(!queries_resident, c_row0, c0, c_rows, 0u, tid, stats); }
      else if (nxt.ok) { fetch_c(!queries_resident, nxt.row0, nxt.n0, c_rows, 0u, tid, true); }
      if (PF == 2u && NCH > 1u && (c + 1u < NCH || nxt.ok)) { fetch_r(queries_resident, r_row0, r0, r_rows, (c + 1u) % NCH, tid); }
      if (stats && c == 0u && nxt.ok) { fetch_stats(nxt.row0, nxt.n0, tid); }
    }
    blocks(&x, tx, ty);
  }
  return x;
}

// dkdv: LSE, Δ and the visible keys [lo, hi) of the Q tile's rows i0 .. i0+CT (past Nq: none),
// through registers into workgroup memory at once (PF = 0; with PF > 0 the fetch runs a step
// ahead and the stash at the staging point).
fn stage_stats(row0: u32, i0: u32, tid: u32) {
  fetch_stats(row0, i0, tid);
  stash_stats(tid);
}

// The same rows' LSE, Δ and visible keys into registers (pf_*); stash_stats puts them in
// workgroup memory.
fn fetch_stats(row0: u32, i0: u32, tid: u32) {
  for (var x = 0u; x < rt(LS); x++) {
    let r = tid + x * WG;
    if (r < CT) {
      var ls = 0.0;
      var dl = 0.0;
      if (i0 + r < P.Nq) {
        ls = lse[row0 + i0 + r];
        dl = delta[row0 + i0 + r];
      }
      pf_lse[x] = ls;
      pf_delta[x] = dl;
      pf_kr[x] = key_range(i0 + r);
    }
  }
}

fn stash_stats(tid: u32) {
  for (var x = 0u; x < rt(LS); x++) {
    let r = tid + x * WG;
    if (r < CT) {
      lse_s[r] = pf_lse[x];
      delta_s[r] = pf_delta[x];
      klo_s[r] = pf_kr[x].x;
      khi_s[r] = pf_kr[x].y;
    }
  }
}

// Step st (0 … NCH−1) of the accumulation: it takes chunk ch = (st + NCH − 1) % NCH (the last
// chunk of score_blocks is still staged, so the chunks go in the order NCH−1, 0, 1, …), and
// chunks 0 … NCH−2 must be staged again (staging points A0 … A(NCH−2)). Returns the offsets
// (first, second array) in SW where step st reads chunk ch; accum_end(st) follows its products.
// Unmerged: step st ≥ 1 stages A(st−1) into C0, C1 between two barriers, then the products read
// it there (2·NCH − 1 barriers a tile pair). PF > 0: the registers hold A(st−1)'s words, and after
// (b) take A(st)'s, after the last S0 of the next tile pair (`nxt`).
// Merged (AM): step st stages A(st) (st <= NCH−2) into X(st) = the resident chunks for st even,
// the streamed ones for st odd, while its products read Y(st) = C for st = 0, X(st−1) after:
//   barrier B(st) · A(st) → X(st) · products from Y(st) (≠ X(st))   (NCH barriers a tile pair)
// B(0) is the barrier after Pw / dSw are written. Race freedom: the writes to X(st) follow
// B(st), by which every earlier reader of X(st) is done (st = 0: X = R, last read by score_blocks
// before B(0); st = 1: X = C, read by score_blocks and step 0 before B(1); st >= 2: X(st) =
// X(st−2) = Y(st−1), read by step st−1 before B(st)), and precede B(st+1), after which step st+1
// reads them; the next tile pair's S0 writes R and C after its barrier (a), after the last step's
// reads. A streamed chunk fits in a resident one (CT <= RT), and the resident rows are staged
// again at every S(c) (NCH > 1), so the data the R buffers held is not needed again. With PF > 0
// the registers hold A(st)'s words (stored at once, then A(st+1)'s or the next S0's are fetched);
// with PF = 0 A(st)'s words are loaded before the products and stored after them (accum_end).
fn restage_c(queries: bool, row0: u32, n0: u32, n_rows: u32, st: u32, nxt: Next, tid: u32, both: bool) -> vec2<u32> {
  workgroupBarrier();   // Pw / dSw written; (a) the previous chunk's readers are done (merged: B(st))
  if (AM) {
    if (st + 1u < NCH) {
      if (PF > 0u) {
        stash_c(stage_at(st), tid, both);
        if (st + 2u < NCH) { fetch_c(queries, row0, n0, n_rows, st + 1u, tid, both); }
        else if (nxt.ok) { fetch_c(queries, nxt.row0, nxt.n0, n_rows, 0u, tid, true); }
      } else {
        fetch_c(queries, row0, n0, n_rows, st, tid, both);
      }
    }
    if (st >= 1u) { return stage_at(st - 1u); }
  } else if (st >= 1u) {
    if (PF == 0u) { stage_c(queries, row0, n0, n_rows, st - 1u, tid, both); } else { stash_c(vec2<u32>(OC0, OC1), tid, both); }
    workgroupBarrier();   // (b)
    if (PF > 0u) {
      if (st + 1u < NCH) { fetch_c(queries, row0, n0, n_rows, st, tid, both); }
      else if (nxt.ok) { fetch_c(queries, nxt.row0, nxt.n0, n_rows, 0u, tid, true); }
    }
  }
  return vec2<u32>(OC0, OC1);
}

// Merged accumulation: where A(st) goes, X(st) (resident chunks for st even, streamed for odd).
fn stage_at(st: u32) -> vec2<u32> {
  if (st % 2u == 0u) { return vec2<u32>(OR0, OR1); }
  return vec2<u32>(OC0, OC1);
}

// After step st's products, merged with PF = 0: A(st)'s words, loaded by restage_c, into X(st)
// (before B(st+1), after step st's reads of Y(st) ≠ X(st)).
fn accum_end(st: u32, tid: u32, both: bool) {
  if (AM && PF == 0u && st + 1u < NCH) { stash_c(stage_at(st), tid, both); }
}

// acc[rr, u] += Σ_t Σ_cc w[row rr][t].cc · y[row t + TC·cc][col u] over a tile with no hidden pair;
// y: the staged chunk at word yo of SW (row r at yo + r·CS).
fn accum_full(acc: ptr<function, Acc>, w: ptr<workgroup, Words>, yo: u32, tx: u32, ty: u32) {
  for (var t = 0u; t < rt(TC); t++) {
    var p = array<vec4<f32>, 4>();
    {{#loop rr < 4}}p[{{rr}}u] = (*w)[(ty + {{rr}}u * TR) * TS + t];
    {{/loop}}
    {{#loop u < DU}}{
      let c = tx + {{u}}u * TC;
      let y0 = vec4<f32>(SW[yo + t * CS + c]);
      let y1 = vec4<f32>(SW[yo + (t + TC) * CS + c]);
      let y2 = vec4<f32>(SW[yo + (t + 2u * TC) * CS + c]);
      let y3 = vec4<f32>(SW[yo + (t + 3u * TC) * CS + c]);
      {{#loop rr < 4}}(*acc)[{{rr}}u * DU + {{u}}u] += p[{{rr}}u].x * y0 + p[{{rr}}u].y * y1 + p[{{rr}}u].z * y2 + p[{{rr}}u].w * y3;
      {{/loop}}
    }
    {{/loop}}
  }
}

// The same where some keys are hidden from some queries: a hidden pair's product is skipped
// (its w is 0, but 0 · NaN would be NaN). rows_are_keys (dkdv): row rr is key j0 + ty + TR·rr,
// column cc query t + TC·cc of the Q tile (ranges in klo_s, khi_s); else (dq) row rr is a query
// with visible keys klo[rr] <= j < khi[rr], column cc key j0 + t + TC·cc.
fn accum_masked(acc: ptr<function, Acc>, w: ptr<workgroup, Words>, yo: u32, tx: u32, ty: u32,
                rows_are_keys: bool, j0: u32, klo: vec4<u32>, khi: vec4<u32>) {
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
    {{#loop rr < 4}}p[{{rr}}u] = (*w)[(ty + {{rr}}u * TR) * TS + t];
    { let kj = vec4<u32>(j0 + t) + offs;
      m[{{rr}}u] = (kj >= vec4<u32>(klo[{{rr}}u])) & (kj < vec4<u32>(khi[{{rr}}u])); }
    if (rows_are_keys) { let kr = vec4<u32>(j0 + ty + {{rr}}u * TR);
      m[{{rr}}u] = (kr >= lc) & (kr < hc); }
    {{/loop}}
    {{#loop u < DU}}{
      let c = tx + {{u}}u * TC;
      let y0 = vec4<f32>(SW[yo + t * CS + c]);
      let y1 = vec4<f32>(SW[yo + (t + TC) * CS + c]);
      let y2 = vec4<f32>(SW[yo + (t + 2u * TC) * CS + c]);
      let y3 = vec4<f32>(SW[yo + (t + 3u * TC) * CS + c]);
      {{#loop rr < 4}}{ let pr = p[{{rr}}u];
        let mr = m[{{rr}}u];
        (*acc)[{{rr}}u * DU + {{u}}u] += select(z, pr.x * y0, mr.x) + select(z, pr.y * y1, mr.y) + select(z, pr.z * y2, mr.z) + select(z, pr.w * y3, mr.w); }
      {{/loop}}
    }
    {{/loop}}
  }
}

// FlashAttention-2 forward, portable path: plain WGSL (no subgroup matrices), f32 or f16
// storage, f32 softmax and accumulation. Register-tiled like a fast WGSL matrix product.
//
// A workgroup owns Br = RR·TY query rows of one (batch, head) and streams K/V tiles of
// Bc = 4·TX keys through workgroup memory. Invocation (ty, tx) = (tid / TX, tid % TX) owns
//   the RR×4 block of S at rows ty + TY·rr and keys tx + TX·cc (rr < RR, cc < 4), and
//   the O accumulator of the same RR rows at vec4 columns c·DC + tx + TX·u of each chunk c
//   (u < DU = DC / TX),
// all in registers indexed only by constants (unrolled by the specializer). RR (rows per
// invocation) is 4 (tiles.ts PORTABLE_FWD_RR): per word of the head dim, 4 K words and 4 Q words
// feed 16 dot4, and in P~ V each 4 V words feed 4 rows. The rows' statistics (m, ℓ and their
// reductions) sit in NG = RR/4 vec4 groups (one), row rr at group rr / 4, component rr % 4; their
// key ranges in arrays of RR.
// Chunks: Q, K and V are staged DC vec4 words of the head dim at a time (NCH = D/4/DC chunks):
// S sums the chunks' products, and each chunk of V feeds its own accumulators. With one chunk
// (whole rows) Q is staged once per workgroup; with more, Q's chunks are staged again for each
// K/V tile (from L1/L2), which buys wider workgroups at large D within the same memory (f32 at
// D = 128: 64×32 tiles, 128 invocations, against 32×32 and 64 with whole rows).
// Staged words keep the storage type: vec4<ST>, so f16 storage stages 8-byte vec4<f16> words,
// half the workgroup bytes and load bandwidth of f32, and the same memory holds twice the chunk
// (tiles.ts counts it). With f32 products the inner loops widen each word to f32 right after its
// load from workgroup memory: f32 products and sums, exactly as if the inputs had been converted
// to f32 when staged; FLASHRING_PORTABLE_FWD_WIDE=1 does convert them then (WT = f32: twice the
// bytes, planned as f32's, no conversion at each read; bitwise the same O and LSE).
// f16 products (PK = 1: f16 storage unless FLASHRING_PORTABLE_FWD_PRODUCTS=f32 pins f32): where
// a chunk's inputs allow it, its products are summed in f16 and only each sum is widened to f32.
//   S: each lane's two f16 sums per score (vec2<f16> fma over the chunk's words: 2·DC products
//      each), added to the f32 S once per chunk, where Λ = scale · D · max|q| · max|k| ≤ PK_LOGIT
//      (the largest logit rows and keys with the chunk's maxima in every column could make:
//      the sums' rounding grows with it) and 4·DC · max|q| · max|k| ≤ PK_SUM (no f16 sum can
//      exceed it);
//   P~ V: P~ is kept in f16 in workgroup memory (half the bytes), as 16 · P~ (P_SCALE; P~ ≤ e^STALE,
//      so 16 · P~ fits): rounding moves a P~ by at most 2^-11 of itself, or by 2^-25 / 16 ≈ 1.9e-9
//      where 16 · P~ falls below f16's normal range, against ℓ ≥ 1 (ℓ stays the f32 sum). The f32
//      products read a stored 0 as the least normal f32 (p_read), so that a ±Inf in V gives ±Inf
//      where a P~ rounded to 0, as in f32; the one difference left: a key whose score is −Inf and
//      whose V is ±Inf gives ±Inf, where the reference's 0 · Inf gives NaN. On tiles every row sees
//      entirely, an invocation's products are summed in f16 over the tile's Bc keys and added, times 1/16, to
//      the f32 accumulator once, where Bc · 16 · max P~ · max|v| ≤ PK_SUM_PV (max P~ =
//      exp(the largest over its rows of the tile's row max − m): ≤ 1 but for a stale max), so no
//      f16 sum can exceed it;
//   otherwise f32 products, as above (of the f16 P~ in P~ V).
// The maxima are per chunk: Q's over the invocation's RR rows (read from global memory once a
// workgroup: q_range), K's and V's over the tile, taken as the words are staged and reduced
// through workgroup atomics (kmax, vmax: one word per chunk); all as the f16 bits of |x|, so NaN
// and Inf count as largest and fail both tests (non-finite inputs always take f32 products, and
// propagate as below). Both decisions are an invocation's (its rows) and a chunk's.
// PK_LOGIT was chosen from exploratory runs on lavapipe against float64 (uniform, two-valued,
// normal and near-tie inputs; not recorded), and test/f16-products.test.ts checks both sides of it
// (docs/numerics.md): at Λ just below 176 it measures O's relative error 1.7e-3 to 3.7e-3 on
// lavapipe and 2.4e-3 to 3.4e-3 on the H200 (the f16 contract: 5e-3; f32 products: 2e-4).
// Unit-normal q and k on the H200's tiles give Λ ≈ 86 at D = 64 and ≈ 123 at D = 128 in the median
// chunk (a simulation of the maxima); 1.3% of D = 128's chunks pass 176 and take f32 products.
// Per tile, in natural-log units (the scale is applied to QKᵀ before the max is taken, and the
// small difference S − m is what goes to exp2, so no log2(e)-scaled large logit is rounded):
//   S = scale · Q Kᵀ                          (keys a row cannot see: −inf)
//   m_new = max(m, rowmax(S)) only where rowmax(S) > m + STALE (stale-max: else m is kept,
//           so P~ ≤ e^STALE and acc, ℓ are rescaled only when the max grows by that much)
//   P~ = exp(S − m_new),  ℓ = exp(m − m_new)·ℓ + rowsum(P~),  acc = exp(m − m_new)·acc + P~ V
// and at the end O = acc / ℓ, LSE = m + log ℓ. A row with no visible key: O = 0, LSE = −inf. m starts
// at the lowest finite f32 (F32_LOWEST), so a finite score however negative becomes the max.
// A ring step (P.accumulate) merges its rows into the O and LSE the buffers hold instead
// (common.wgsl lse_merge: a row with no visible key keeps them).
// Non-finite inputs propagate as in the reference (src/reference/attention.ts): a NaN score
// gives P~ = NaN, so ℓ and the row's O and LSE are NaN; +Inf makes m = +Inf and P~ = NaN; a row
// whose visible scores are all −Inf has ℓ = 0 and gives NaN (in a ring step, P.partial, a partial
// without mass: common.wgsl no_mass_lse). Keys a row cannot see never touch
// its accumulator (masked tiles select V per row), so a NaN there stays out.
// Row max and sum across the TX invocations of a row block: row_max / row_sum (flash_rows_*.wgsl),
// each on the NG vec4 groups of an invocation's rows at once.
// Mask (common.wgsl): row r sees keys [klo, khi) of key_range; the block visits only the K/V
// tiles between its first row's lo and its last row's hi, and class_of (against the block's
// row_keys, taken once) picks the unmasked (full) or masked product per tile. Causal: row blocks run heavy-first (the last block first).
// Dispatch: (ceil(Nq / Br), Hq, B), or for a ring step the row blocks a visible pair reaches,
// from block P.q_blk0 on (row_block; FlashForward.encode).
//
// Bounds (indices in range by construction, for Dawn without robustness):
//   workgroup arrays are two-dimensional, [row][word]: every access is Qs[r][d], KVs[r][d] or
//   Ps[r][t] with r < Br (or Bc), d < DC < CS, t < TX < PS (Qs and KVs are Br×CS and Bc×CS
//   words of either type; CS = DC + 1 in both precisions; where P~ shares Qs, Qs[r][t] with
//   t < PS ≤ QW and Qs is Br×QW);
//   the rows an invocation touches are ty + TY·rr < TY·RR = Br (ty < TY = WG / TX, rr < RR);
//   private arrays pq[x], pk[x] with x < LQ, LK (constant indices, word e = tid + x·WG fetched
//   and stashed only where e < Br·DC, Bc·DC); function arrays: s[rr], klo[rr], khi[rr] with
//   rr < RR, groups [rr / 4] < NG = RR / 4 (RR is 4), acc[c][rr·DU + u] with c < NCH,
//   rr·DU + u < RR·DU;
//   global reads only for rows i < Nq (Q) and keys j < Nk (K, V), at columns c·DC + d < D/4
//   (c < NCH), so (row0 + i)·D/4 + c·DC + d lies in [0, B·H·N·D/4); O and LSE are written only
//   for rows i < Nq.
// Robustness (browsers: Dawn keeps its transform, which clamps each array index it cannot prove
// in range and guards each loop it cannot prove finite): Tint proves a bound only within one
// function, from constants, loop counters stepped by 1 against a constant bound (rt(X) is written
// as X on GPUs: constantBounds, src/kernels/specialize.ts) and operators such as x % C. So the
// inner loops' helpers take tx, ty, t and c as parameters and restate them as tx_ % TX, ty_ % TY,
// t_ % TX, c_ % DC (the same values): their workgroup reads then carry no clamp. After inlining
// the driver folds the % where it can see the bound (tx = tid % TX; t, an unrolled counter); with
// robustness off the change measured f32 0.4–1.1% slower, f16's forward faster
// (bench/results/2026-12-04-robust-off-h200).

// Storage words (the bindings: FORWARD_BINDINGS, src/kernels/flashForward.ts): O in vec4s of its element type; Q, K
// and V as IW (tiles.ts portableValues): f32 storage's vec4<f32>, and f16 storage's four halves as a pair of u32,
// which h4 bitcasts to vec4<f16> as each word is read: the same bits as vec4<f16> words, and on an H100 the forward
// 3.2–6.7% faster than with them (bench/results/2026-12-07-u32-h100).
alias IW = {{IW}};
fn h4(x: IW) -> vec4<ST> { return bitcast<vec4<ST>>(x); }
// The staged words' element type: ST, or f32 (f16 storage with f32 products, FLASHRING_PORTABLE_FWD_WIDE=1: each word
// widened once as it is staged, twice the workgroup bytes, no conversion at each read; the same values, so bitwise the
// same O and LSE).
alias WT = {{WT}};
alias OW = vec4<OT>;

const TX: u32 = BC / 4u;      // invocations across a K/V tile's keys (4 keys each)
const RR: u32 = {{RR}}u;      // query rows per invocation (4)
const NG: u32 = RR / 4u;      // vec4 groups of an invocation's row statistics
const TY: u32 = BR / RR;      // invocations across the query rows (RR rows each)
const D4: u32 = D / 4u;       // vec4 words per row
const DC: u32 = {{DC}}u;      // vec4 words per staged chunk
const NCH: u32 = {{NCH}}u;    // chunks per row (D4 / DC)
const CS: u32 = DC + 1u;      // padded row stride of staged chunks, in words (below)
const DU: u32 = {{DU}}u;      // vec4 columns of O per invocation and chunk (DC / TX)
const PS: u32 = TX + 1u;      // padded row stride of P~
const LQ: u32 = {{LQ}}u;      // vec4 loads per invocation for a Q chunk: ceil(Br·DC / WG)
const LK: u32 = {{LK}}u;      // ... for a K or V chunk: ceil(Bc·DC / WG)
// Prefetch (FLASHRING_PORTABLE_FWD_PREFETCH): 0 loads each staging point's words from global
// memory between its two barriers, where every invocation waits for them; 1 issues the loads of
// the next staging point right after the current one's second barrier, into registers (pk: LK
// words; pq: LQ more where Q is staged per tile, NCH > 1), so that their latency passes behind the products, and only stores them at the
// next staging point; 2 does so for K and V only, and loads Q's chunks between their barriers
// (the same rows every tile: L1 serves them), so that Q's words are not held through the products. The staging points of a tile, in order: S(c) = Q chunk c (with more than
// one chunk) and K chunk c, c < NCH; then A(c) = V chunk c; then the next visited tile's S(0).
// The same words reach the same places between the same barriers: bitwise the same results.
const PF: u32 = {{PF}}u;
const STALE: f32 = {{STALE}};       // rescale only when the row max grows by more than this (nat. log)

alias Acc = array<vec4<f32>, RR * DU>;  // one chunk's columns of the invocation's RR rows
alias Rows = array<vec4<f32>, NG>;       // one f32 per row of the invocation: row rr at [rr / 4][rr % 4]

// Staged chunks as [row][word] arrays (rows of CS words, the same bytes as a flat array with row r
// at word r·CS). Two dimensions for the browsers: Dawn's robustness clamps every dynamic index,
// and with one flat index each load in the inner loops carried its own clamp (row·CS + d differs
// per load); with [row][d] a row's clamp does not change along the loops (it is hoisted), and d's
// is one per step, shared by every load of the step (none where the step is unrolled). Rows have
// one word of padding, so consecutive rows start 4 banks (16-byte f32 words) or 2 banks (8-byte f16 words) apart, and with CS odd the words at
// one d of 8 (f32) or 16 (f16) consecutive rows sit in distinct banks: the rows tx + TX·cc that
// scores() reads at once, as 16-byte loads are served 8 lanes at a time and 8-byte loads 16 at a
// time (32 banks either way). CS is odd wherever TX > 1: TX divides DC, DC divides D/4, and D is
// a multiple of 8, so DC is even. P~V and the staging touch consecutive words of a row.
// P~ (row r, word t = keys t + TX·(0..3); in f16 where PK) has its own array, Ps, or (QP = 1) shares Qs:
// where Q is staged again for every tile (NCH > 1) and P~ has Q's word type (f32 storage, or f16
// with f16 products), Q's last chunk is read before P~ is written (a barrier more a tile) and P~'s
// readers are done before the next tile's first Q chunk (its first barrier), so one array holds
// both, rows of QW = max(CS, PS) words. The bytes saved let twice the chunk fit (f32 at D = 128:
// 64 columns a chunk in 48 KiB, against 32), half the staging points and barriers a tile; Q's and
// K's words reach S in the same order whatever the chunk, so O and LSE are bitwise the same.
// The value PV names P~'s array (Ps or Qs).
{{#for _ < NQP}}var<workgroup> Qs: array<array<vec4<WT>, CS>, BR>;
var<workgroup> Ps: array<array<vec4<{{PT}}>, PS>, BR>;
{{/for}}{{#for _ < QP}}var<workgroup> Qs: array<array<vec4<WT>, {{QW}}>, BR>;   // Q's chunk, then P~ (QP: vec4<{{PT}}> is vec4<WT>)
{{/for}}var<workgroup> KVs: array<array<vec4<WT>, CS>, BC>;    // K of the tile, then its V (chunk c)
{{#for _ < PK}}
// f16 products: their limits (above), and the staged K and V chunks' maxima: the f16 bits of
// max |x| (u16 order is float order for non-negative halves, and NaN's bits exceed +Inf's), gathered per
// invocation in `staged_max` while staging, then per workgroup (range_max, flash_rows_*.wgsl, and one
// atomicMax per row block or invocation). K's slots are reset while V is staged and V's while K
// is, when no invocation reads them.
const PK_LOGIT: f32 = 176.0;
const PK_SUM: f32 = 16384.0;      // S's f16 sums
const PK_SUM_PV: f32 = 32768.0;   // P~ V's f16 sums (of P_SCALE · P~ · V)
const F16_FINITE: u32 = 31743u;   // 0x7bff: the bits of the largest finite f16
// P~ is stored as P_SCALE · P~ in f16 (≤ 16 · e^STALE = 47696 < 65504): f16's subnormals start 16×
// lower in P~, so what rounding moves there is ≤ 2^-25 / 16 ≈ 1.9e-9 a key against ℓ ≥ 1.
const P_SCALE: f32 = 16.0;
const P_UNSCALE: f32 = 0.0625;
const F32_TINY: f32 = 1.17549435e-38;   // the least normal f32
var<private> staged_max: u32;
var<workgroup> kmax: array<atomic<u32>, NCH>;
var<workgroup> vmax: array<atomic<u32>, NCH>;

// The f16 bits of a word's largest |x| (integer operations only: no conversions).
fn word_bits(w: vec4<ST>) -> u32 {
  let b = bitcast<vec2<u32>>(w) & vec2<u32>(2147450879u);   // 0x7fff7fff: |x| of the four halves
  let h = max(b & vec2<u32>(65535u), b >> vec2<u32>(16u));
  return max(h.x, h.y);
}

// The value of f16 bits (an f16's exact f32 value).
fn f16_value(bits: u32) -> f32 { return unpack2x16float(bits).x; }

// The invocation's staged maximum into `slot` (called by every invocation, uniform control flow).
fn note_range(slot: ptr<workgroup, atomic<u32>>, tid: u32) {
  let r = range_max(staged_max);
  staged_max = 0u;
  if (tid % RANGE_LEAD == 0u) { atomicMax(slot, r); }
}

// Every chunk's slot to 0 (one store a chunk, spread over the workgroup's invocations, however few).
fn clear_ranges(slots: ptr<workgroup, array<atomic<u32>, NCH>>, tid: u32) {
  for (var x = tid; x < NCH; x += WG) { atomicStore(&(*slots)[x], 0u); }
}

// The f16 bits of max |q| over each chunk of the invocation's RR rows (from global memory, once
// a workgroup; rows past Nq count 0). With subgroups each of a row block's TX invocations reads
// every TX-th word (RANGE_STRIDE) and range_max combines them; without, each reads all.
fn q_range(q_row0: u32, i0: u32, tx: u32, ty: u32) -> array<u32, NCH> {
  var qm = array<u32, NCH>();
  for (var rr = 0u; rr < rt(RR); rr++) {
    let i = i0 + ty + rr * TY;
    if (i < P.Nq) {
      for (var c = 0u; c < rt(NCH); c++) {
        for (var d = tx % RANGE_STRIDE; d < DC; d += RANGE_STRIDE) { qm[c] = max(qm[c], word_bits(h4(q[(q_row0 + i) * D4 + c * DC + d]))); }
      }
    }
  }
  for (var c = 0u; c < rt(NCH); c++) { qm[c] = range_max(qm[c]); }
  return qm;
}

// Chunk c of the tile: S's products in f16 for the invocation's rows (qb: their max |q| in the chunk)?
fn s_in_f16(c: u32, qb: u32) -> bool {
  let kb = atomicLoad(&kmax[c]);
  if (qb > F16_FINITE || kb > F16_FINITE) { return false; }
  let mm = f16_value(qb) * f16_value(kb);
  return f32(4u * DC) * mm <= PK_SUM && f32(D) * mm * abs(P.scale) <= PK_LOGIT;
}

// P~ as stored: P_SCALE · P~ in f16.
fn p_f16(p: vec4<f32>) -> vec4<f16> { return vec4<f16>(p * P_SCALE); }

// A stored P~ word back in f32 for the f32 products, a stored 0 as F32_TINY: on a key a row sees,
// P~ is 0 only where it rounded to 0 (or its score is −Inf), and a ±Inf in V must still give ±Inf
// there as in f32 (a finite V gets 1e-38 of itself: nothing).
fn p_read(w: vec4<f16>) -> vec4<f32> {
  let x = vec4<f32>(w) * P_UNSCALE;
  return select(x, vec4<f32>(F32_TINY), x == vec4<f32>());
}

// Chunk c of the tile: P~ V's products in f16 for the invocation's rows, whose P~ are at most
// pmax (a tile every row sees entirely)?
fn v_in_f16(c: u32, pmax: f32) -> bool {
  let vb = atomicLoad(&vmax[c]);
  return vb <= F16_FINITE && f32(BC) * P_SCALE * pmax * f16_value(vb) <= PK_SUM_PV;
}
{{/for}}

// Word e of chunk ch of the Q rows i0 .. i0+Br of head row base q_row0 (row e / DC; zeros
// past Nq), and of the K (use_v false) or V rows j0 .. j0+Bc (zeros past Nk).
fn q_word(q_row0: u32, i0: u32, ch: u32, e: u32) -> vec4<ST> {
  var t = vec4<ST>();
  if (i0 + e / DC < P.Nq) { t = h4(q[(q_row0 + i0 + e / DC) * D4 + ch * DC + e % DC]); }
  return t;
}

fn kv_word(kv_row0: u32, j0: u32, ch: u32, e: u32, use_v: bool) -> vec4<ST> {
  var t = vec4<ST>();
  if (j0 + e / DC < P.Nk) {
    let g = (kv_row0 + j0 + e / DC) * D4 + ch * DC + e % DC;
    if (use_v) { t = h4(v[g]); } else { t = h4(k[g]); }
  }
  return t;
}

// Chunk ch of Q (rows i0 ..) into Qs, and of K or V (rows j0 ..) into KVs, at once (PF = 0; Q also where PF = 2).
fn stage_q(q_row0: u32, i0: u32, ch: u32, tid: u32) {
  for (var x = 0u; x < rt(LQ); x++) {
    let e = tid + x * WG;
    if (e < BR * DC) { Qs[e / DC][e % DC] = vec4<WT>(q_word(q_row0, i0, ch, e)); }
  }
}

fn stage_kv(kv_row0: u32, j0: u32, ch: u32, tid: u32, use_v: bool) {
  for (var x = 0u; x < rt(LK); x++) {
    let e = tid + x * WG;
    if (e < BC * DC) { KVs[e / DC][e % DC] = vec4<WT>(kv_word(kv_row0, j0, ch, e, use_v));{{#for _ < PK}} staged_max = max(staged_max, word_bits(KVs[e / DC][e % DC]));{{/for}} }
  }
}

// PF = 1 or 2: the same words into registers (global loads only), and from there into Qs / KVs.
var<private> pq: array<vec4<ST>, LQ>;
var<private> pk: array<vec4<ST>, LK>;

fn fetch_q(q_row0: u32, i0: u32, ch: u32, tid: u32) {
  {{#loop x < LQ}}{ let e = tid + {{x}}u * WG;
    if (e < BR * DC) { pq[{{x}}u] = q_word(q_row0, i0, ch, e); } }
  {{/loop}}
}

fn fetch_kv(kv_row0: u32, j0: u32, ch: u32, tid: u32, use_v: bool) {
  {{#loop x < LK}}{ let e = tid + {{x}}u * WG;
    if (e < BC * DC) { pk[{{x}}u] = kv_word(kv_row0, j0, ch, e, use_v); } }
  {{/loop}}
}

fn stash_q(tid: u32) {
  {{#loop x < LQ}}{ let e = tid + {{x}}u * WG;
    if (e < BR * DC) { Qs[e / DC][e % DC] = vec4<WT>(pq[{{x}}u]); } }
  {{/loop}}
}

fn stash_kv(tid: u32) {
  {{#loop x < LK}}{ let e = tid + {{x}}u * WG;
    if (e < BC * DC) { KVs[e / DC][e % DC] = vec4<WT>(pk[{{x}}u]);{{#for _ < PK}} staged_max = max(staged_max, word_bits(pk[{{x}}u]));{{/for}} } }
  {{/loop}}
}

// The staging point S(c) (between its barriers): Q chunk c (with more than one chunk) and K chunk c.
fn stage_s(q_row0: u32, i0: u32, kv_row0: u32, j0: u32, c: u32, tid: u32) {
  if (PF == 0u) {
    if (NCH > 1u) { stage_q(q_row0, i0, c, tid); }
    stage_kv(kv_row0, j0, c, tid, false);
  } else {
    if (NCH > 1u) { if (PF == 2u) { stage_q(q_row0, i0, c, tid); } else { stash_q(tid); } }
    stash_kv(tid);
  }
  {{#for _ < PK}}note_range(&kmax[c], tid);
  if (c == 0u) { clear_ranges(&vmax, tid); }{{/for}}
}

// PF = 1: the words of S(c) of the tile at j0 into registers (PF = 2: K's only).
fn fetch_s(q_row0: u32, i0: u32, kv_row0: u32, j0: u32, c: u32, tid: u32) {
  if (NCH > 1u && PF == 1u) { fetch_q(q_row0, i0, c, tid); }
  fetch_kv(kv_row0, j0, c, tid, false);
}

// The staged chunk's share of the invocation's RR×4 block of Q Kᵀ:
// s[rr][cc] += Q[ty + TY·rr] · K[tx + TX·cc], word by word, in f32: a word's 4 products summed (dot),
// then added to s. (As one chain of fma into s, a product an operation where this takes 5 for 4, the
// sum rounds at |s| once a product rather than once a word: at extreme logits, inputs ×30, the
// backward's gradients, whose S must match this one, came out 2.25× a plain f32 implementation's
// error against 0.8× (test/backward.test.ts, lavapipe). P~ V and the backward's sums over keys or
// rows are chains of fma: there the accuracy held.)
fn scores(s: ptr<function, array<vec4<f32>, RR>>, tx_: u32, ty_: u32) {
  let tx = tx_ % TX;   // = tx_: the bounds made visible (see "Robustness" above)
  let ty = ty_ % TY;
  for (var d = 0u; d < rt(DC); d++) {
    var kk = array<vec4<f32>, 4>();
    {{#loop cc < 4}}kk[{{cc}}u] = vec4<f32>(KVs[tx + {{cc}}u * TX][d]);
    {{/loop}}
    {{#loop rr < RR}}{ let x = vec4<f32>(Qs[ty + {{rr}}u * TY][d]);
      (*s)[{{rr}}u] += vec4<f32>(dot(x, kk[0]), dot(x, kk[1]), dot(x, kk[2]), dot(x, kk[3])); }
    {{/loop}}
  }
}

{{#for _ < PK}}
// scores() with f16 products (s_in_f16): s[rr][cc] += f32(h.x) + f32(h.y), h the vec2<f16> sums
// of the chunk's products q.xy·k.xy + q.zw·k.zw over its DC words.
fn scores_f16(s: ptr<function, array<vec4<f32>, RR>>, tx_: u32, ty_: u32) {
  let tx = tx_ % TX;   // = tx_, ty_: the bounds made visible (see "Robustness" above)
  let ty = ty_ % TY;
  var h = array<vec2<ST>, RR * 4u>();
  for (var d = 0u; d < rt(DC); d++) {
    var kk = array<vec4<ST>, 4>();
    {{#loop cc < 4}}kk[{{cc}}u] = KVs[tx + {{cc}}u * TX][d];
    {{/loop}}
    {{#loop rr < RR}}{ let x = Qs[ty + {{rr}}u * TY][d];
      {{#loop cc < 4}}h[{{rr}}u * 4u + {{cc}}u] = fma(x.zw, kk[{{cc}}u].zw, fma(x.xy, kk[{{cc}}u].xy, h[{{rr}}u * 4u + {{cc}}u]));
      {{/loop}} }
    {{/loop}}
  }
  {{#loop rr < RR}}{ let a = vec4<f32>(vec2<f32>(h[{{rr}}u * 4u]), vec2<f32>(h[{{rr}}u * 4u + 1u]));
    let b = vec4<f32>(vec2<f32>(h[{{rr}}u * 4u + 2u]), vec2<f32>(h[{{rr}}u * 4u + 3u]));
    (*s)[{{rr}}u] += vec4<f32>(a.x + a.y, a.z + a.w, b.x + b.y, b.z + b.w); }
  {{/loop}}
}
{{/for}}
// The invocation's RR×4 block of Q Kᵀ over the K/V tile at j0 (the sum over the chunks).
// PF = 1 or 2: after S(c)'s second barrier the registers take S(c + 1), or A(0) after the last.
fn tile_scores(q_row0: u32, i0: u32, kv_row0: u32, j0: u32, tid: u32, tx: u32, ty: u32{{#for _ < PK}}, qm: array<u32, NCH>{{/for}}) -> array<vec4<f32>, RR> {
  var s = array<vec4<f32>, RR>();
  for (var c = 0u; c < rt(NCH); c++) {
    workgroupBarrier();   // the previous chunk's (or tile's) readers of Qs, KVs and P~ are done
    stage_s(q_row0, i0, kv_row0, j0, c, tid);
    workgroupBarrier();
    if (PF != 0u) {
      if (c + 1u < NCH) { fetch_s(q_row0, i0, kv_row0, j0, c + 1u, tid); } else { fetch_kv(kv_row0, j0, 0u, tid, true); }
    }
    {{#for _ < NPK}}scores(&s, tx, ty);{{/for}}{{#for _ < PK}}if (s_in_f16(c, qm[c])) { scores_f16(&s, tx, ty); } else { scores(&s, tx, ty); }{{/for}}
  }
  return s;
}

// The first K/V tile jt >= `jt` (below t_end) that the block's rows (row_keys) do not skip, and
// its class; (t_end, TILE_SKIP) if none.
fn next_tile(jt: u32, t_end: u32, rows: RowKeys) -> vec2<u32> {
  for (var t = jt; t < t_end; t++) {
    let cls = class_of(rows, t * BC, t * BC + BC);
    if (cls != TILE_SKIP) { return vec2<u32>(t, cls); }
  }
  return vec2<u32>(t_end, TILE_SKIP);
}

// Column c of the staged chunk of V at keys t + TX·(0..3), in f32: the V words that multiply
// P~ word t.
fn v_words(t_: u32, c_: u32) -> array<vec4<f32>, 4> {
  let t = t_ % TX;   // = t_ and c_ (t < TX, c < DC): the bounds made visible (see "Robustness" above)
  let c = c_ % DC;
  return array<vec4<f32>, 4>(vec4<f32>(KVs[t][c]), vec4<f32>(KVs[t + TX][c]), vec4<f32>(KVs[t + 2u * TX][c]), vec4<f32>(KVs[t + 3u * TX][c]));
}

// acc += P~ V (the staged chunk of V) over a tile every row sees entirely: per key word t,
// the 4 products of P~ and V as a chain of fma into acc, in f32 (4 V words for RR rows).
fn pv_full(acc: ptr<function, Acc>, tx_: u32, ty_: u32) {
  let tx = tx_ % TX;   // = tx_, ty_: the bounds made visible (see "Robustness" above)
  let ty = ty_ % TY;
  for (var t = 0u; t < rt(TX); t++) {
    var p = array<vec4<f32>, RR>();
    {{#loop rr < RR}}p[{{rr}}u] = {{#for _ < NPK}}{{PV}}[ty + {{rr}}u * TY][t]{{/for}}{{#for _ < PK}}p_read({{PV}}[ty + {{rr}}u * TY][t]){{/for}};
    {{/loop}}
    {{#loop u < DU}}{
      let v = v_words(t, tx + {{u}}u * TX);
      {{#loop rr < RR}}{ let pr = p[{{rr}}u];
        (*acc)[{{rr}}u * DU + {{u}}u] = fma(vec4<f32>(pr.w), v[3], fma(vec4<f32>(pr.z), v[2], fma(vec4<f32>(pr.y), v[1], fma(vec4<f32>(pr.x), v[0], (*acc)[{{rr}}u * DU + {{u}}u])))); }
      {{/loop}}
    }
    {{/loop}}
  }
}

// acc += P~ V where some keys are hidden from some rows: key j0 + c reaches row rr only if
// klo[rr] <= j0 + c < khi[rr] (its P~ is 0 there, but 0 · NaN would still be NaN).
fn pv_masked(acc: ptr<function, Acc>, tx_: u32, ty_: u32, j0: u32, klo: array<u32, RR>, khi: array<u32, RR>) {
  let tx = tx_ % TX;   // = tx_, ty_: the bounds made visible (see "Robustness" above)
  let ty = ty_ % TY;
  let z = vec4<f32>();
  for (var t = 0u; t < rt(TX); t++) {
    let keys = vec4<u32>(j0 + t) + vec4<u32>(0u, TX, 2u * TX, 3u * TX);
    var p = array<vec4<f32>, RR>();
    var w = array<vec4<bool>, RR>();
    {{#loop rr < RR}}p[{{rr}}u] = {{#for _ < NPK}}{{PV}}[ty + {{rr}}u * TY][t]{{/for}}{{#for _ < PK}}p_read({{PV}}[ty + {{rr}}u * TY][t]){{/for}};
    w[{{rr}}u] = (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u]));
    {{/loop}}
    {{#loop u < DU}}{
      let v = v_words(t, tx + {{u}}u * TX);
      {{#loop rr < RR}}{ let pr = p[{{rr}}u];
        let wr = w[{{rr}}u];
        (*acc)[{{rr}}u * DU + {{u}}u] += select(z, pr.x * v[0], wr.x) + select(z, pr.y * v[1], wr.y) + select(z, pr.z * v[2], wr.z) + select(z, pr.w * v[3], wr.w); }
      {{/loop}}
    }
    {{/loop}}
  }
}

{{#for _ < PK}}
// pv_full() with f16 products (v_in_f16): per row rr and column word, the tile's Bc products
// P~ · V summed in f16, then added to acc in f32.
fn v_words_h(t_: u32, c_: u32) -> array<vec4<ST>, 4> {
  let t = t_ % TX;   // = t_ and c_: the bounds made visible (see "Robustness" above)
  let c = c_ % DC;
  return array<vec4<ST>, 4>(KVs[t][c], KVs[t + TX][c], KVs[t + 2u * TX][c], KVs[t + 3u * TX][c]);
}

fn pv_full_f16(acc: ptr<function, Acc>, tx_: u32, ty_: u32) {
  let tx = tx_ % TX;   // = tx_, ty_: the bounds made visible (see "Robustness" above)
  let ty = ty_ % TY;
  var h = array<vec4<ST>, RR * DU>();
  for (var t = 0u; t < rt(TX); t++) {
    var p = array<vec4<ST>, RR>();
    {{#loop rr < RR}}p[{{rr}}u] = {{PV}}[ty + {{rr}}u * TY][t];
    {{/loop}}
    {{#loop u < DU}}{
      let v = v_words_h(t, tx + {{u}}u * TX);
      {{#loop rr < RR}}{ let pr = p[{{rr}}u];
        h[{{rr}}u * DU + {{u}}u] = fma(vec4<ST>(pr.w), v[3], fma(vec4<ST>(pr.z), v[2], fma(vec4<ST>(pr.y), v[1], fma(vec4<ST>(pr.x), v[0], h[{{rr}}u * DU + {{u}}u])))); }
      {{/loop}}
    }
    {{/loop}}
  }
  {{#loop rr < RR}}{{#loop u < DU}}(*acc)[{{rr}}u * DU + {{u}}u] += vec4<f32>(h[{{rr}}u * DU + {{u}}u]) * P_UNSCALE;
  {{/loop}}{{/loop}}
}
{{/for}}
@compute @workgroup_size(WG)
fn main(g: Grid, @builtin(local_invocation_index) tid: u32) {
  let rb = row_block(g, BR);   // heavy-first
  let tx = tid % TX;
  let ty = tid / TX;
  if (NCH == 1u) { stage_q(rb.q_row0, rb.i0, 0u, tid); }
  {{#for _ < PK}}let qm = q_range(rb.q_row0, rb.i0, tx, ty);{{/for}}

  // Keys visible to row ty + TY·rr: klo[rr] <= j < khi[rr] (klo = khi: a masked row).
  var klo = array<u32, RR>();
  var khi = array<u32, RR>();
  {{#loop rr < RR}}{ let kr = key_range(rb.i0 + ty + {{rr}}u * TY);
    klo[{{rr}}u] = kr.x;
    khi[{{rr}}u] = kr.y; }
  {{/loop}}
  let i_end = min(rb.i0 + BR, P.Nq);
  let rows = row_keys(rb.i0, i_end);   // the block's first and last rows' keys: the tiles it visits and their classes
  let t_first = rows.first.x / BC;
  let t_end = (rows.last.y + BC - 1u) / BC;
  let ninf = vec4<f32>(neg_inf());
  var m = Rows();               // running (stale) row max, natural units
  {{#for g < RR/4}}m[{{g}}u] = vec4<f32>(F32_LOWEST);
  {{/for}}
  var l = Rows();               // this invocation's share of ℓ (its keys)
  var acc = array<Acc, NCH>();
  // The tiles visited: t_first … t_end−1 but the skipped ones, each found one ahead (the prefetch
  // loads the next one's first staging point during this one's last).
  var cur = next_tile(t_first, t_end, rows);
  if (PF != 0u && cur.x < t_end) { fetch_s(rb.q_row0, rb.i0, rb.kv_row0, cur.x * BC, 0u, tid); }
  loop {
    if (cur.x >= t_end) { break; }
    let j0 = cur.x * BC;
    let cls = cur.y;
    let nxt = next_tile(cur.x + 1u, t_end, rows);
    var s = tile_scores(rb.q_row0, rb.i0, rb.kv_row0, j0, tid, tx, ty{{#for _ < PK}}, qm{{/for}});
    let keys = vec4<u32>(j0 + tx) + vec4<u32>(0u, TX, 2u * TX, 3u * TX);
    var mt = Rows();
    {{#loop rr < RR}}{ let x = select(ninf, s[{{rr}}u] * P.scale, (keys >= vec4<u32>(klo[{{rr}}u])) & (keys < vec4<u32>(khi[{{rr}}u])));
      s[{{rr}}u] = x;
      mt[{{rr}}u / 4u][{{rr}}u % 4u] = max(max(x.x, x.y), max(x.z, x.w)); }
    {{/loop}}
    mt = row_max(mt, tid);
    var alpha = Rows();
    {{#for g < RR/4}}{ let grow = mt[{{g}}u] > m[{{g}}u] + vec4<f32>(STALE);
      let m_new = select(m[{{g}}u], mt[{{g}}u], grow);
      alpha[{{g}}u] = select(vec4<f32>(1.0), exp2((m[{{g}}u] - m_new) * LOG2E), grow);
      m[{{g}}u] = m_new; }
    {{/for}}
    var rs = Rows();
    {{#for _ < PK}}// The largest P~ of the invocation's rows in this tile (NaN or +Inf where their scores are).
    var dmax = vec4<f32>(NEG_BIG);
    {{#for g < RR/4}}dmax = max(dmax, mt[{{g}}u] - m[{{g}}u]);
    {{/for}}let pmax = exp2(max(max(dmax.x, dmax.y), max(dmax.z, dmax.w)) * LOG2E);{{/for}}
    {{#for _ < QP}}workgroupBarrier();   // P~ shares Qs (QP): every invocation's last reads of Q's chunk are done
    {{/for}}{{#loop rr < RR}}{ let p = exp2((s[{{rr}}u] - vec4<f32>(m[{{rr}}u / 4u][{{rr}}u % 4u])) * LOG2E);
      rs[{{rr}}u / 4u][{{rr}}u % 4u] = (p.x + p.y) + (p.z + p.w);
      {{PV}}[ty + {{rr}}u * TY][tx] = {{#for _ < NPK}}p{{/for}}{{#for _ < PK}}p_f16(p){{/for}};
      let a = alpha[{{rr}}u / 4u][{{rr}}u % 4u];
      {{#loop c < NCH}}{{#loop u < DU}}acc[{{c}}u][{{rr}}u * DU + {{u}}u] *= a;
      {{/loop}}{{/loop}}
    }
    {{/loop}}
    {{#for g < RR/4}}l[{{g}}u] = l[{{g}}u] * alpha[{{g}}u] + rs[{{g}}u];
    {{/for}}
    {{#loop c < NCH}}{
      workgroupBarrier();   // every S is computed (KVs free) and P~ is written; chunk c-1's readers are done
      if (PF == 0u) { stage_kv(rb.kv_row0, j0, {{c}}u, tid, true); } else { stash_kv(tid); }
      {{#for _ < PK}}note_range(&vmax[{{c}}u], tid);
      if ({{c}}u == 0u) { clear_ranges(&kmax, tid); }{{/for}}
      workgroupBarrier();
      if (PF != 0u) {   // A(c + 1), or the next visited tile's S(0)
        if ({{c}}u + 1u < NCH) { fetch_kv(rb.kv_row0, j0, {{c}}u + 1u, tid, true); }
        else if (nxt.x < t_end) { fetch_s(rb.q_row0, rb.i0, rb.kv_row0, nxt.x * BC, 0u, tid); }
      }
      {{#for _ < NPK}}if (cls == TILE_FULL) { pv_full(&acc[{{c}}u], tx, ty); } else { pv_masked(&acc[{{c}}u], tx, ty, j0, klo, khi); } }{{/for}}{{#for _ < PK}}
      if (cls == TILE_FULL && v_in_f16({{c}}u, pmax)) { pv_full_f16(&acc[{{c}}u], tx, ty); }
      else if (cls == TILE_FULL) { pv_full(&acc[{{c}}u], tx, ty); } else { pv_masked(&acc[{{c}}u], tx, ty, j0, klo, khi); } }{{/for}}
    {{/loop}}
    cur = nxt;
  }

  let lt = row_sum(l, tid);
  // Each row's LSE, and merging (P.accumulate, a ring step) its weights against what LSE holds
  // (common.wgsl lse_merge): every lane of a row reads the old LSE before the barrier, its lane
  // tx = 0 writes the new one after it (a storage barrier: workgroupBarrier orders only workgroup
  // memory, so a compiler could move a lane's read of LSE past it).
  var w = array<vec3<f32>, RR>();
  {{#loop rr < RR}}{
    let i = rb.i0 + ty + {{rr}}u * TY;
    let l_i = lt[{{rr}}u / 4u][{{rr}}u % 4u];
    var out = neg_inf();
    if (khi[{{rr}}u] > klo[{{rr}}u]) {
      out = m[{{rr}}u / 4u][{{rr}}u % 4u] + log(l_i);
      if (l_i == 0.0) { out = no_mass_lse(); }   // every visible score was −Inf
    }
    w[{{rr}}u] = vec3<f32>(0.0, 1.0, out);
    if (P.accumulate != 0u && i < P.Nq) { w[{{rr}}u] = lse_merge(lse[rb.q_row0 + i], out); }
  }
  {{/loop}}
  storageBarrier();
  {{#loop rr < RR}}{
    let i = rb.i0 + ty + {{rr}}u * TY;
    let l_i = lt[{{rr}}u / 4u][{{rr}}u % 4u];
    if (i < P.Nq) {
      let seen = khi[{{rr}}u] > klo[{{rr}}u];
      let inv = inv_l(l_i);
      {{#loop c < NCH}}{{#loop u < DU}}{
        let at = (rb.q_row0 + i) * D4 + {{c}}u * DC + tx + {{u}}u * TX;
        var x = select(vec4<f32>(), acc[{{c}}u][{{rr}}u * DU + {{u}}u] * inv, seen);
        if (P.accumulate != 0u) { x = merged4(w[{{rr}}u], vec4<f32>(o[at]), x); }
        o[at] = vec4<OT>(x); }
      {{/loop}}{{/loop}}
      if (tx == 0u) { lse[rb.q_row0 + i] = w[{{rr}}u].z; }
    }
  }
  {{/loop}}
}

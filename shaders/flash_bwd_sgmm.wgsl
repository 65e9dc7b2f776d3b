// FlashAttention-2 backward on subgroup matrices (tensor cores): f16 Q, K, V, dO; f32
// accumulation. Δ comes from the scalar preprocess (flash_bwd.wgsl).
//
// Work split (FlashAttention-2): a workgroup of SG = WG/32 subgroups; subgroup s owns 16 rows
// and keeps its operands and accumulators in registers for the whole kernel:
//   dkdv: 16 keys (K, V as left matrices; dK, dV accumulators); the workgroup's 16·SG keys
//         loop over the query heads of their group and over Q/dO tiles of Br rows shared in
//         workgroup memory.                                   dispatch (ceil(Nk / 16·SG), Hkv, B)
//   dq:   16 query rows (Q, dO as left matrices; dQ accumulator); the workgroup's 16·SG rows
//         loop over K/V tiles of Bc rows shared in workgroup memory.
//                                                             dispatch (ceil(Nq / 16·SG), Hq, B)
// Accumulating (ring steps), the host dispatches only the blocks some visible pair reaches, from
// block P.k_blk0 (dkdv) and P.q_blk0 (dq) on (FlashBackward.encode); the grids above are the most.
// Per tile, in the subgroup's own blocks of workgroup memory:
//   S = Q Kᵀ,  dP = dO Vᵀ        (dkdv computes their transposes: Sᵀ = K Qᵀ, dPᵀ = V dOᵀ)
//   P = exp2(S·scale·log2 e − LSE·log2 e),  dS = P ∘ (dP − Δ)    (two lanes per row, f16 out)
//   dkdv:  dV += Pᵀ dO,  dK += dSᵀ Q          dq:  dQ += dS K
// Up to D = 64 (DQ_ONE, KV_ONE) each kernel passes its tile through one f32 block a subgroup (Sa) and one f16 block
// (dSa), two barriers more a tile: dq spills S, keeps P in registers, then spills dP to the same block and writes
// dS; dkdv spills Sᵀ, keeps Pᵀ in registers and writes it to dSa for dV += Pᵀ dO, then spills dPᵀ and writes dSᵀ
// over Pᵀ for dK += dSᵀ Q. Neither then reaches dPa or Pa: a pipeline allocates only what its code reaches
// (test/sgmm-workgroup.test.ts), 12960 bytes at D = 64 4×16 (two blocks: dkdv 21152, dq 18080). On the H200 the D = 64
// backward's speed falls in steps as its workgroup bytes grow (1.6–1.8× slower past ~24.7 KB:
// bench/results/2026-12-04-wg-bytes-h200; again past 15–17 KB: …-wg-alias2-h200); one block made dq 13% and dkdv
// 7% faster at D = 64, and 18.5% and 14.6% slower at D = 128 (…-dq-one-spill-h200, …-kv-one-spill-h200).
// Above D = 64 (DQ_TWO, KV_TWO) they spill S and dP at once, into Sa and dPa; dkdv writes Pᵀ and dSᵀ to Pa and
// dSa; dq never reaches Pa.
// Operand and accumulator blocks are separate variables (k0…, dk0…, unrolled by the
// specializer), not arrays of subgroup matrices. The scale is applied to dK and dQ at the end.
// Matrix pointers (blocks) and offsets differ per subgroup (uniform within it): the module turns off Chromium's
// workgroup-uniformity check for subgroup matrices, and the host requires subgroups of exactly 32.
// Tiles come from global memory with 16-byte loads into registers, one tile ahead of the one
// in use (prefetch), and are then stored to workgroup memory (K, V, Q, dO hold f16: these
// kernels run only with f16 storage; the bindings view them as vec4<u32>, 8 halves each).
//
// Non-finite inputs follow the float64 reference (src/reference/attention.ts): a NaN LSE (a
// NaN row of the forward) gives P = NaN on the row's visible keys, and P, dS are computed for
// visible entries only (masked ones are exactly 0), so NaN reaches dQ, dK, dV through the
// products. The second products (dV += Pᵀ dO, dK += dSᵀ Q, dQ += dS K) cannot skip masked
// entries (0 times a NaN of Q, dO or K is NaN): a tile with masked entries whose staged rows
// hold a non-finite value (a workgroup vote while staging them) accumulates those products in
// scalar f32 over visible entries only. Full tiles neither vote nor read the vote (stash_rows,
// rare_tile); where every staged value is finite no tile takes that path.
// Mask (common.wgsl, any of causal, window, documents): dkdv visits the Q tiles of query_span,
// dq the K/V tiles from its first row's first key to its last row's last. Full tiles: dkdv's Q
// tiles inside rows_seeing_all of its keys, dq's K/V tiles inside shared_keys of its rows (both
// once per workgroup, not per tile); the rest is masked entry by entry against the lane's rows
// (query_span of its key, once; the rare scalar path takes it again per spilled block) or its
// row's keys (key_range, once per partial tile).
//
// Bounds (Node runs it without Dawn's robustness clamps, src/gpu/node.ts; test/robust.test.ts):
// - Qs/dOs (RB = Br/16 blocks of 16·DP; Bc = Br): word e < T8 = Br·D/8 (checked) goes to row
//   e / D8 < Br (block row / 16 < RB), halves 8·(e % D8)… < D of it. Matrix loads are 16×16: all
//   of block qb or cb < Br/16 (unrolled), or of a staged row block 16-aligned with s0 ≤ row < s0 + Br
//   (checked, so its block (row − s0) / 16 < RB), columns 16·kk or 16·db < D, stride DP.
// - Sa/dPa (SG blocks of 16·SS), Pa/dSa (of 16·PS): subgroup sg < SG has block sg; rows r < 16,
//   columns h·(Br/2) + col < Br (dkdv) or < Bc = Br (dq), both ≤ SS, PS; 16×16 spills at column 0.
//   pv[c] (dq's P, dkdv's Pᵀ) and the mask bits vis: c < Br/2 ≤ 32 (unrolled constants; Br ≤ 64 asserted).
// - lse2_s/delta_s (Br): tid < Br (checked) and qc < Br. nf: constant index. ar/br: t < LPT.
// - Storage: every row is checked against Nq or Nk before a load or store (fetch_rows'
//   r0 + e/D8 < r_end, fetch_stats, j < Nk, ii < Nq); j0 = 16·SG·(k_blk0 + wg.x) < Nk and
//   i0 < Nq by the dispatch (the host's block ranges lie within ceil(N / 16·SG)), so Nk − j0 and Nq − i0 do not wrap; the head of the next Q tile
//   (row1, counted along: head0 + g·Nq) is fetched only while t + 1 < G·nt, so g < G; hk < Hkv,
//   hq < Hq by the dispatch.
// Loops: constant bounds, t < G·nt, j0 < n_end ≤ Nk in steps of Bc.

// Storage words (the bindings: BACKWARD_BINDINGS, src/kernels/flashBackward.ts): Q, K, V, dO as
// 16-byte words of f16 data (8 halves each), dQ, dK, dV by element.
alias IW = vec4<u32>;
alias GW = GT;

const SG: u32 = WG / 32u;
const OWN: u32 = 16u * SG;     // rows (keys for dkdv, queries for dq) owned by a workgroup
const RB: u32 = BR / 16u;      // 16-row blocks of a Q tile (dkdv)
const_assert BR == BC;         // Qs and dOs hold RB blocks for either kernel's tile
const D8: u32 = D / 8u;        // 16-byte words per row
const T8: u32 = BR * D8;       // 16-byte words of a tile (Br = Bc)
const LPT: u32 = (T8 + WG - 1u) / WG;   // of them per invocation
const_assert BR <= WG;         // one invocation per Q-tile row loads its LSE and Δ
const_assert BR <= 64u;        // a lane's Br/2 entries of a row fit a u32 mask (vis)
// Row strides in workgroup memory, padded by PAD halves (16 bytes at PAD = 8; 0 for the
// unpadded ablation) so that the 16 rows of a matrix load or store start on different banks
// (as the forward, flash_fwd_sgmm.wgsl).
const PAD: u32 = {{PAD}}u;
const DP: u32 = D + PAD;       // Qs, dOs rows, halves
const SS: u32 = BR + PAD / 2u; // Sa, dPa rows (Br = Bc), f32
const PS: u32 = BR + PAD;      // Pa, dSa rows, halves

// Every workgroup variable is a multiple of 16 bytes (the NVIDIA driver's matrix loads and
// stores need 16-byte aligned arrays: docs/performance.md).
// Constant matrix offsets (browsers; as the forward, flash_fwd_sgmm.wgsl): Dawn's robustness
// transform checks a subgroup-matrix load or store at run time unless it can prove it in bounds
// (constant offset, stride and array length). So the tiles are arrays of 16-row blocks and the per-subgroup scratch
// one block a subgroup; each matrix operation takes its block's pointer (`&Qs[qb]`, `&Sa[sg]`: one
// index clamp) at a constant offset, the blocks of a tile unrolled by the specializer. The memory
// layout is that of flat arrays.
var<workgroup> Qs: array<array<f16, 16u * DP>, RB>;   // dkdv: the Q tile (K rows in the prologue); dq: K
var<workgroup> dOs: array<array<f16, 16u * DP>, RB>;  // dkdv: the dO tile (V rows in the prologue); dq: V
var<workgroup> lse2_s: array<f32, BR>;    // LSE · log2(e); +1e30 for fully masked rows (P = 0)
var<workgroup> delta_s: array<f32, BR>;   // Δ
var<workgroup> Sa: array<array<f32, 16u * SS>, SG>;    // per subgroup: Sᵀ (dkdv, 16×Br) or S (dq, 16×Bc)
var<workgroup> dPa: array<array<f32, 16u * SS>, SG>;   // dPᵀ or dP
var<workgroup> Pa: array<array<f16, 16u * PS>, SG>;    // Pᵀ (dkdv)
var<workgroup> dSa: array<array<f16, 16u * PS>, SG>;   // dSᵀ or dS
var<workgroup> nf: array<atomic<u32>, 4>;  // nf[0]: the staged tile holds a non-finite value (cleared after
                                           // the prologue, which does not vote, and by each reader: rare_tile)
var<workgroup> nf_u: vec4<u32>;            // its copy, read uniformly

var<private> ar: array<vec4<u32>, LPT>;   // the next tile's rows of Q (or K)
var<private> br: array<vec4<u32>, LPT>;   // and of dO (or V)
var<private> lr: f32;                     // the next Q tile's LSE as loaded (lanes tid < Br; l2_of at staging)
var<private> dr: f32;                     // and Δ

// Stores 16-byte word e (8 halves: row e / D8, columns 8·(e % D8)…) into dOs or Qs.
fn put8(into_do: bool, e: u32, w: vec4<u32>) {
  let h = halves8(w);
  let row = e / D8;
  let at = (row % 16u) * DP + (e % D8) * 8u;
  {{#for x < 8}}if (into_do) { dOs[row / 16u][at + {{x}}u] = h[{{x}}]; } else { Qs[row / 16u][at + {{x}}u] = h[{{x}}]; }
  {{/for}}
}

// Global → registers: Br rows from row r0 of head row base `base` of K and V (`kv`) or of Q
// and dO, zeros from row r_end on.
fn fetch_rows(kv: bool, base: u32, r0: u32, r_end: u32, tid: u32) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    var x = vec4<u32>();
    var y = vec4<u32>();
    if (e < T8 && r0 + e / D8 < r_end) {
      let at = (base + r0) * D8 + e;
      if (kv) { x = k[at]; y = v[at]; } else { x = q[at]; y = dout[at]; }
    }
    ar[t] = x;
    br[t] = y;
  }
}

// LSE·log2 e of a row whose LSE is x, as P = exp2(S·scale·log2 e − l2) wants it: +1e30 for a row with
// no visible key (LSE = −inf, or a row past Nq given x = NEG_BIG), so that P = 0; NaN for a NaN row.
fn l2_of(x: f32) -> f32 {
  var l2 = -NEG_BIG;
  if (x > NEG_HALF) { l2 = x * LOG2E; }
  if (is_nan(x)) { l2 = nan_f32(); }
  return l2;
}

// The next Q tile's LSE and Δ into registers (lanes tid < Br), as loaded: nothing here waits for
// the loads (l2_of is applied at staging, a tile later). Computed right after the loads, l2_of
// made every Q tile wait for them; staging the LSE and Δ then cost 22% of dkdv at D = 64
// (bench/results/2026-12-04-stash-h200).
fn fetch_stats(row0: u32, i0: u32, tid: u32) {
  lr = NEG_BIG;
  dr = 0.0;
  if (tid < BR && i0 + tid < P.Nq) {
    lr = lse[row0 + i0 + tid];
    dr = delta[row0 + i0 + tid];
  }
}

// Registers → workgroup memory: Qs and dOs (and, `stats`, dkdv's Q tile's LSE and Δ). `voting`: a
// tile that may read the vote (one with masked entries: rare_tile) sets nf[0] where a staged value it
// multiplies is non-finite; the others skip the test (11% of dq at D = 64 where every tile voted:
// 2026-12-04-stash-h200). dkdv votes on Q and dO (dK += dSᵀ Q, dV += Pᵀ dO), dq on K only (dQ += dS K:
// V enters dP alone, and dS is exactly 0 on masked entries whatever V holds).
fn stash_rows(tid: u32, stats: bool, voting: bool) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    if (e < T8) {
      put8(false, e, ar[t]);
      put8(true, e, br[t]);
      if (voting && (tc_nonfinite8(ar[t]) || (stats && tc_nonfinite8(br[t])))) { atomicOr(&nf[0], 1u); }
    }
  }
  if (stats && tid < BR) {
    lse2_s[tid] = l2_of(lr);
    delta_s[tid] = dr;
  }
}

// After the elementwise step: whether the tile takes the rare scalar path (an input of the tile
// was voted non-finite, and the tile has masked entries). A barrier (P and dS written before
// their matrix loads); a full tile (uniform) stops there: it was staged without a vote
// (stash_rows). Otherwise invocation 0 copies the tile's vote to nf_u and clears it, and every
// invocation reads nf_u with workgroupUniformLoad (two barriers more, so full tiles take 1 barrier
// here instead of 3).
fn rare_tile(tid: u32, full: bool) -> bool {
  workgroupBarrier();
  if (full) { return false; }
  if (tid == 0u) {
    nf_u = vec4<u32>(atomicLoad(&nf[0]), 0u, 0u, 0u);
    atomicStore(&nf[0], 0u);
  }
  return workgroupUniformLoad(&nf_u).x != 0u;
}

// P = exp2(S·scale·log2 e − l2), l2 = LSE·log2 e (a NaN LSE gives NaN).
fn p_of(s: f32, l2: f32) -> f32 {
  var p = exp2(fma(s, P.scale_log2, -l2));
  if (is_nan(l2)) { p = nan_f32(); }
  return p;
}

// P (p_of) and dS = P ∘ (dP − Δ).
fn p_and_ds(s: f32, dp: f32, l2: f32, delta: f32) -> vec2<f32> {
  let p = p_of(s, l2);
  return vec2<f32>(p, p * (dp - delta));
}

// The rare path of dkdv's second products (see the header): lane (r, h)'s 8 columns c0… of
// key jk's row of subgroup sg's spilled dK and dV blocks (row at `at` in its Sa and dPa blocks;
// its dSᵀ and Pᵀ at `ap` in its dSa and Pa blocks), tensor columns d0 + c0…: dK += dSᵀ Q,
// dV += Pᵀ dO over the Q tile's rows i0… that see key jk.
fn add_kv_row(sg: u32, at: u32, ap: u32, i0: u32, jk: u32, c0: u32, d0: u32) {
  let rows = query_span(jk, jk + 1u);   // the rows that see key jk
  for (var c = 0u; c < 8u; c++) {
    var xk = Sa[sg][at + c0 + c];
    var xv = dPa[sg][at + c0 + c];
    for (var qc = 0u; qc < BR; qc++) {
      if (in_keys(rows, i0 + qc)) {
        let q_at = (qc % 16u) * DP + d0 + c0 + c;
        xk += f32(dSa[sg][ap + qc]) * f32(Qs[qc / 16u][q_at]);
        xv += f32(Pa[sg][ap + qc]) * f32(dOs[qc / 16u][q_at]);
      }
    }
    Sa[sg][at + c0 + c] = xk;
    dPa[sg][at + c0 + c] = xv;
  }
}

// The rare path of one second product through subgroup sg's Sa block alone: lane (r, h)'s 8 columns c0… of its
// row of the spilled accumulator (at `at` in Sa; the row's dS, dSᵀ or Pᵀ at `ap` in dSa), tensor columns d0 + c0…,
// plus the products over the staged tile's rows base + jj in `span` (in_keys), with K or Q (Qs) or dO (dOs: `v`).
//   dq:          dQ += dS K   over the keys span = key_range(i) of its row i, base j0;
//   dkdv (KV_ONE): dK += dSᵀ Q, dV += Pᵀ dO (v) over the rows span = query_span(jk, jk + 1) that see key jk, base i0.
fn add_row(sg: u32, at: u32, ap: u32, span: vec2<u32>, base: u32, c0: u32, d0: u32, v: bool) {
  for (var c = 0u; c < 8u; c++) {
    var x = Sa[sg][at + c0 + c];
    for (var jj = 0u; jj < BR; jj++) {
      if (in_keys(span, base + jj)) {
        let w = (jj % 16u) * DP + d0 + c0 + c;
        var y: f32;
        if (v) { y = f32(dOs[jj / 16u][w]); } else { y = f32(Qs[jj / 16u][w]); }
        x += f32(dSa[sg][ap + jj]) * y;
      }
    }
    Sa[sg][at + c0 + c] = x;
  }
}

// The rare path's products for columns d0… (see the header), in scalar f32: dkdv's subgroup sg's
// accumulators a (dK) and b (dV) spilled to its Sa and dPa blocks, the visible entries' products
// added by add_kv_row, and loaded back.
fn rare_block_kv(a: ptr<function, AM>, b: ptr<function, AM>, sg: u32, r: u32, i0: u32, jk: u32, c0: u32, d0: u32) {
  subgroupMatrixStore<row_major>(&Sa[sg], 0u, *a, SS);
  subgroupMatrixStore<row_major>(&dPa[sg], 0u, *b, SS);
  workgroupBarrier();
  add_kv_row(sg, r * SS, r * PS, i0, jk, c0, d0);
  workgroupBarrier();
  *a = subgroupMatrixLoad<AM, row_major>(&Sa[sg], 0u, SS);
  *b = subgroupMatrixLoad<AM, row_major>(&dPa[sg], 0u, SS);
  workgroupBarrier();
}

// The same through subgroup sg's Sa block alone (add_row), for one accumulator a: dq's dQ, or dkdv's dK or dV
// (`v`) with one spill block (KV_ONE). Neither names dPa nor Pa, so a kernel that reaches them only here
// allocates neither.
fn rare_block_one(a: ptr<function, AM>, sg: u32, r: u32, span: vec2<u32>, base: u32, c0: u32, d0: u32, v: bool) {
  subgroupMatrixStore<row_major>(&Sa[sg], 0u, *a, SS);
  workgroupBarrier();
  add_row(sg, r * SS, r * PS, span, base, c0, d0, v);
  workgroupBarrier();
  *a = subgroupMatrixLoad<AM, row_major>(&Sa[sg], 0u, SS);
  workgroupBarrier();
}

// What a lane adds its 8 entries of block `db` (columns 16·db…) onto, when accumulating (0
// otherwise): entries e = lane + 32·k (row e / 16, column e % 16) of rows r_first… below n of the
// head at row0, of dQ, dK or dV (`which`). `load` false gives zeros (the block after the last).
// Read before the block's spill: an entry-by-entry read and write waited one global load an entry
// (128 a dkdv workgroup at D = 128, each waited for in turn).
fn old_block(which: u32, row0: u32, r_first: u32, n: u32, lane: u32, db: u32, load: bool) -> array<f32, 8> {
  var x: array<f32, 8>;
  if (load && P.accumulate != 0u) {
    for (var k = 0u; k < 8u; k++) {
      let r = r_first + 2u * k + lane / 16u;
      if (r < n) {
        let at = (row0 + r) * D + db * 16u + lane % 16u;
        switch which {
          case GRAD_DQ: { x[k] = f32(dq[at]); }
          case GRAD_DK: { x[k] = f32(dk[at]); }
          default: { x[k] = f32(dv[at]); }
        }
      }
    }
  }
  return x;
}

// A lane's 8 entries e = lane + 32·k (row e / 16, column e % 16) of subgroup sg's 16×16 spill in its
// Sa block (dQ, dK or dV, one at a time: the epilogues reach no other block).
fn spilled_sa(sg: u32, lane: u32) -> array<f32, 8> {
  var x: array<f32, 8>;
  for (var k = 0u; k < 8u; k++) { x[k] = Sa[sg][(2u * k + lane / 16u) * SS + lane % 16u]; }
  return x;
}

// Writes block `db` of dQ or dK (times the softmax scale) or dV (`which`) for rows r_first… below
// n of the head at row0, from a lane's entries of its subgroup's 16×16 spill (spilled_sa),
// adding `old` (old_block) when accumulating.
fn write_block(which: u32, row0: u32, r_first: u32, n: u32, lane: u32, db: u32, spill: array<f32, 8>, old: array<f32, 8>) {
  for (var k = 0u; k < 8u; k++) {
    let r = r_first + 2u * k + lane / 16u;
    if (r < n) {
      let at = (row0 + r) * D + db * 16u + lane % 16u;
      var x = spill[k];
      if (which != GRAD_DV) { x *= P.scale; }
      if (P.accumulate != 0u) { x += old[k]; }
      switch which {
        case GRAD_DQ: { dq[at] = GT(x); }
        case GRAD_DK: { dk[at] = GT(x); }
        default: { dv[at] = GT(x); }
      }
    }
  }
}

// The subgroup's two resident operands, its 16 rows of each as D/16 matrices, held in registers
// for the whole pass: K and V (dkdv) or Q and dO (dq_main).
alias Resident = array<LM, D / 16u>;

// Loads the subgroup's resident rows: of the workgroup's OWN rows from `base` (n of them below the
// end of the head), K and V (kv) or Q and dO, staged through Qs/dOs Br rows (= Bc) at a time.
fn resident_rows(kv: bool, base: u32, n: u32, tid: u32, a_reg: ptr<function, Resident>, b_reg: ptr<function, Resident>) {
  let sg = tid / 32u;
  for (var s0 = 0u; s0 < OWN; s0 += BR) {
    fetch_rows(kv, base, s0, n, tid);
    workgroupBarrier();
    stash_rows(tid, false, false);
    workgroupBarrier();
    if (sg * 16u >= s0 && sg * 16u < s0 + BR) {
      let a = (sg * 16u - s0) / 16u;   // the staged block
      {{#for kk < D/16}}(*a_reg)[{{kk}}] = subgroupMatrixLoad<LM, row_major>(&Qs[a], {{kk}}u * 16u, DP);
      (*b_reg)[{{kk}}] = subgroupMatrixLoad<LM, row_major>(&dOs[a], {{kk}}u * 16u, DP);
      {{/for}}
    }
  }
}

// The resident rows against the staged tile's Br/16 blocks of 16 rows (Qs, dOs, read column-major
// as the tile's transpose; unrolled): a_reg·Qsᵀ into Sa and b_reg·dOsᵀ into dPa, in subgroup sg's blocks.
fn resident_products(sg: u32, a_reg: ptr<function, Resident>, b_reg: ptr<function, Resident>) {
  {{#for b < BR/16}}{
    var s_acc = AM();
    var p_acc = AM();
    {{#for kk < D/16}}s_acc = subgroupMatrixMultiplyAccumulate((*a_reg)[{{kk}}], subgroupMatrixLoad<RM, col_major>(&Qs[{{b}}u], {{kk}}u * 16u, DP), s_acc);
    p_acc = subgroupMatrixMultiplyAccumulate((*b_reg)[{{kk}}], subgroupMatrixLoad<RM, col_major>(&dOs[{{b}}u], {{kk}}u * 16u, DP), p_acc);
    {{/for}}
    subgroupMatrixStore<row_major>(&Sa[sg], {{b}}u * 16u, s_acc, SS);
    subgroupMatrixStore<row_major>(&dPa[sg], {{b}}u * 16u, p_acc, SS);
  }
  {{/for}}
}

// dq (DQ_ONE): x·(the staged tile)ᵀ into subgroup sg's Sa block, x·Kᵀ (Qs; v false) or x·Vᵀ (dOs; v true), the
// tile's Bc/16 blocks unrolled (Kᵀ, Vᵀ: column-major views of the tiles).
fn tile_product(sg: u32, x: ptr<function, Resident>, v: bool) {
  {{#for b < BC/16}}{
    var acc = AM();
    {{#for kk < D/16}}if (v) {
      acc = subgroupMatrixMultiplyAccumulate((*x)[{{kk}}], subgroupMatrixLoad<RM, col_major>(&dOs[{{b}}u], {{kk}}u * 16u, DP), acc);
    } else {
      acc = subgroupMatrixMultiplyAccumulate((*x)[{{kk}}], subgroupMatrixLoad<RM, col_major>(&Qs[{{b}}u], {{kk}}u * 16u, DP), acc);
    }
    {{/for}}
    subgroupMatrixStore<row_major>(&Sa[sg], {{b}}u * 16u, acc, SS);
  }
  {{/for}}
}

@compute @workgroup_size(WG)
fn dkdv(g: Grid, @builtin(local_invocation_index) tid: u32) {
  let kb = key_block(g, OWN);   // under causal the first key blocks, seen by the most rows, start first
  let j0 = kb.j0;
  let kv_row0 = kb.kv_row0;
  let G = P.Hq / P.Hkv;
  let sg = tid / 32u;
  let lane = tid % 32u;
  let r = lane / 2u;
  let h = lane % 2u;
  let jk = j0 + sg * 16u + r;          // this lane's key

  var a_reg: Resident;
  var b_reg: Resident;
  resident_rows(true, kv_row0 + j0, P.Nk - j0, tid, &a_reg, &b_reg);   // K into a_reg, V into b_reg
  if (tid == 0u) { atomicStore(&nf[0], 0u); }   // the vote starts clear (ordered by the tile loop's first barrier)
  {{#for db < D/16}}var dk{{db}} = AM();
  var dv{{db}} = AM();
  {{/for}}
  // The direct epilogue (DIRECT: f32 gradients; this workgroup's keys all below Nk, so uniform): the
  // accumulators start from the old dK, dV (accumulating) and are stored straight to them at the end,
  // with the softmax scale taken into dS: no spills, no barriers, no old values read entry by entry.
  var direct = false;
  {{#for dx < DIRECT}}direct = j0 + OWN <= P.Nk;
  if (direct && P.accumulate != 0u) {
    let gk = (kv_row0 + j0 + sg * 16u) * D;
    {{#for db < D/16}}dk{{db}} = subgroupMatrixLoad<AM, row_major>(&dk, gk + {{db}}u * 16u, D);
    dv{{db}} = subgroupMatrixLoad<AM, row_major>(&dv, gk + {{db}}u * 16u, D);
    {{/for}}
  }
  {{/for}}
  let ds_scale = select(1.0, P.scale, direct);   // dK = Σ (scale·dS)ᵀ Q there; scale·dK at the end otherwise

  // The mask (common.wgsl): the Q tiles holding the rows that may see one of the keys.
  let span = query_span(j0, j0 + OWN);
  let i_start = (span.x / BR) * BR;
  let all_rows = rows_seeing_all(j0, j0 + OWN);   // a Q tile inside it is full
  let jk_rows = query_span(jk, jk + 1u);          // the rows that see this lane's key
  // The query heads g of the group times the Q tiles from i_start, as one loop so that the next
  // tile (possibly of the next head) is fetched while this one is used.
  let nt = (span.y - i_start + BR - 1u) / BR;
  let total = G * nt;
  let head0 = kb.q_row0;
  fetch_rows(false, head0, i_start, P.Nq, tid);
  fetch_stats(head0, i_start, tid);
  // The tile in use (i0) and the one fetched next (row1, i1), counted along rather than divided
  // out of t each tile (t % nt, (t + 1) / nt: integer divisions by a uniform value, tens of
  // instructions each, per tile).
  let i_stop = i_start + nt * BR;
  var i0 = i_start;
  var i1 = i_start;
  var row1 = head0;
  for (var t = 0u; t < total; t++) {
    {
      // A full Q tile (uniform): every row of it sees every key of the workgroup.
      let full = i0 + BR <= P.Nq && i0 >= all_rows.x && i0 + BR <= all_rows.y;
      workgroupBarrier();
      stash_rows(tid, true, !full);
      workgroupBarrier();
      i1 = i0 + BR;
      if (i1 >= i_stop) {
        i1 = i_start;
        row1 += P.Nq;
      }
      if (t + 1u < total) {
        fetch_rows(false, row1, i1, P.Nq, tid);
        fetch_stats(row1, i1, tid);
      }
      // Lane (r, h) owns key r and query columns h·Br/2 + (c + lane) mod Br/2 (unrolled by the specializer: no
      // indexed temporaries, constant skews) of its subgroup's blocks: at in Sa (and dPa), ap in dSa (and Pa).
      let at = r * SS + h * (BR / 2u);
      let ap = r * PS + h * (BR / 2u);
      // KV_ONE (D ≤ 64): Sᵀ and dPᵀ in turn through the subgroup's one f32 block (Sa), Pᵀ kept in registers and
      // written to its one f16 block (dSa) for dV's product, then dSᵀ over it for dK's (two barriers more a
      // tile; dkdv then reaches neither dPa nor Pa: 12960 bytes at D = 64, 4×16, where it took 21152).
      {{#for one < KV_ONE}}tile_product(sg, &a_reg, false);   // Sᵀ = K Qᵀ (Qᵀ: a column-major view of the Q tile)
      workgroupBarrier();
      var pv: array<f32, BR / 2u>;   // the lane's Pᵀ (constant indices: registers)
      var vis = 0u;                  // bit c: entry c is visible (partial tiles)
      {{#for c < BR/2}}{
        let col = ({{c}}u + lane) % (BR / 2u);
        let qc = h * (BR / 2u) + col;
        pv[{{c}}] = 0.0;
        if (full || in_keys(jk_rows, i0 + qc)) {
          pv[{{c}}] = p_of(Sa[sg][at + col], lse2_s[qc]);
          vis |= 1u << {{c}}u;
        }
        dSa[sg][ap + col] = f16(pv[{{c}}]);
      }
      {{/for}}
      // The vote's barrier also orders every lane's read of Sᵀ before dPᵀ overwrites it, and Pᵀ before its load.
      let rare = rare_tile(tid, full);
      if (rare) {
        // Rare: non-finite Q or dO in a tile with masked entries (see the header): dV += Pᵀ dO in scalar f32.
        {{#for db < D/16}}rare_block_one(&dv{{db}}, sg, r, jk_rows, i0, h * 8u, {{db}}u * 16u, true);
        {{/for}}
      } else {
        {{#for qb < BR/16}}{
          let pt = subgroupMatrixLoad<LM, row_major>(&dSa[sg], {{qb}}u * 16u, PS);
          {{#for db < D/16}}dv{{db}} = subgroupMatrixMultiplyAccumulate(pt, subgroupMatrixLoad<RM, row_major>(&dOs[{{qb}}u], {{db}}u * 16u, DP), dv{{db}});
          {{/for}}
        }
        {{/for}}
      }
      tile_product(sg, &b_reg, true);    // dPᵀ = V dOᵀ
      workgroupBarrier();                // dPᵀ stored; every lane's Pᵀ loaded
      {{#for c < BR/2}}{
        let col = ({{c}}u + lane) % (BR / 2u);
        let qc = h * (BR / 2u) + col;
        var ds = 0.0;
        if (full || (vis & (1u << {{c}}u)) != 0u) { ds = pv[{{c}}] * (Sa[sg][at + col] - delta_s[qc]); }
        dSa[sg][ap + col] = f16(ds * ds_scale);
      }
      {{/for}}
      workgroupBarrier();
      if (rare) {
        {{#for db < D/16}}rare_block_one(&dk{{db}}, sg, r, jk_rows, i0, h * 8u, {{db}}u * 16u, false);
        {{/for}}
      } else {
        {{#for qb < BR/16}}{
          let dst = subgroupMatrixLoad<LM, row_major>(&dSa[sg], {{qb}}u * 16u, PS);
          {{#for db < D/16}}dk{{db}} = subgroupMatrixMultiplyAccumulate(dst, subgroupMatrixLoad<RM, row_major>(&Qs[{{qb}}u], {{db}}u * 16u, DP), dk{{db}});
          {{/for}}
        }
        {{/for}}
      }
      {{/for}}
      // KV_TWO (D > 64): Sᵀ and dPᵀ at once, into Sa and dPa; Pᵀ and dSᵀ into Pa and dSa.
      {{#for two < KV_TWO}}resident_products(sg, &a_reg, &b_reg);   // Sᵀ = K Qᵀ, dPᵀ = V dOᵀ
      workgroupBarrier();
      {{#for c < BR/2}}{
        let col = ({{c}}u + lane) % (BR / 2u);
        let qc = h * (BR / 2u) + col;
        var p = 0.0;
        var ds = 0.0;
        if (full || in_keys(jk_rows, i0 + qc)) {
          let x = p_and_ds(Sa[sg][at + col], dPa[sg][at + col], lse2_s[qc], delta_s[qc]);
          p = x.x;
          ds = x.y;
        }
        Pa[sg][ap + col] = f16(p);
        dSa[sg][ap + col] = f16(ds * ds_scale);
      }
      {{/for}}
      if (rare_tile(tid, full)) {
        // Rare: non-finite Q or dO in a tile with masked entries: dV += Pᵀ dO, dK += dSᵀ Q in
        // scalar f32 over visible entries, one 16-column block at a time, spilled through Sa/dPa.
        {{#for db < D/16}}rare_block_kv(&dk{{db}}, &dv{{db}}, sg, r, i0, jk, h * 8u, {{db}}u * 16u);
        {{/for}}
      } else {
        // dV += Pᵀ dO,  dK += dSᵀ Q (the Q tile's blocks qb unrolled)
        {{#for qb < BR/16}}{
          let pt = subgroupMatrixLoad<LM, row_major>(&Pa[sg], {{qb}}u * 16u, PS);
          let dst = subgroupMatrixLoad<LM, row_major>(&dSa[sg], {{qb}}u * 16u, PS);
          {{#for db < D/16}}dv{{db}} = subgroupMatrixMultiplyAccumulate(pt, subgroupMatrixLoad<RM, row_major>(&dOs[{{qb}}u], {{db}}u * 16u, DP), dv{{db}});
          dk{{db}} = subgroupMatrixMultiplyAccumulate(dst, subgroupMatrixLoad<RM, row_major>(&Qs[{{qb}}u], {{db}}u * 16u, DP), dk{{db}});
          {{/for}}
        }
        {{/for}}
      }
      {{/for}}
    }
    i0 = i1;
  }

  // dK·scale and dV, one 16×16 block at a time through Sa (dK's block, then dV's: dPa is not reached with one
  // spill block, KV_ONE); keys past Nk are not written. The next block's old values are read while this one
  // is spilled and written.
  let jr = j0 + sg * 16u;
  {{#for dx < DIRECT}}if (direct) {
    let gk = (kv_row0 + jr) * D;
    {{#for db < D/16}}subgroupMatrixStore<row_major>(&dk, gk + {{db}}u * 16u, dk{{db}}, D);
    subgroupMatrixStore<row_major>(&dv, gk + {{db}}u * 16u, dv{{db}}, D);
    {{/for}}
    return;
  }
  {{/for}}
  var ok = old_block(GRAD_DK, kv_row0, jr, P.Nk, lane, 0u, true);
  var ov = old_block(GRAD_DV, kv_row0, jr, P.Nk, lane, 0u, true);
  {{#for db < D/16}}workgroupBarrier();
  subgroupMatrixStore<row_major>(&Sa[sg], 0u, dk{{db}}, SS);
  workgroupBarrier();
  {
    let nk = old_block(GRAD_DK, kv_row0, jr, P.Nk, lane, {{db}}u + 1u, {{db}}u + 1u < D / 16u);
    write_block(GRAD_DK, kv_row0, jr, P.Nk, lane, {{db}}u, spilled_sa(sg, lane), ok);
    ok = nk;
  }
  workgroupBarrier();
  subgroupMatrixStore<row_major>(&Sa[sg], 0u, dv{{db}}, SS);
  workgroupBarrier();
  {
    let nv = old_block(GRAD_DV, kv_row0, jr, P.Nk, lane, {{db}}u + 1u, {{db}}u + 1u < D / 16u);
    write_block(GRAD_DV, kv_row0, jr, P.Nk, lane, {{db}}u, spilled_sa(sg, lane), ov);
    ov = nv;
  }
  {{/for}}
}

@compute @workgroup_size(WG)
fn dq_main(g: Grid, @builtin(local_invocation_index) tid: u32) {
  let rb = row_block(g, OWN);   // heavy-first under causal
  let i0 = rb.i0;
  let row0 = rb.q_row0;
  let kv_row0 = rb.kv_row0;
  let sg = tid / 32u;
  let lane = tid % 32u;
  let r = lane / 2u;
  let h = lane % 2u;
  let i = i0 + sg * 16u + r;           // this lane's query row

  var a_reg: Resident;
  var b_reg: Resident;
  resident_rows(false, row0 + i0, P.Nq - i0, tid, &a_reg, &b_reg);   // Q into a_reg, dO into b_reg
  if (tid == 0u) { atomicStore(&nf[0], 0u); }   // the vote starts clear (ordered by the tile loop's first barrier)
  var lse_i = NEG_BIG;                 // this lane's row's LSE (a row past Nq: P = 0)
  var dl = 0.0;
  if (i < P.Nq) {
    lse_i = lse[row0 + i];
    dl = delta[row0 + i];
  }
  let l2 = l2_of(lse_i);               // LSE·log2 e
  {{#for db < D/16}}var dq{{db}} = AM();
  {{/for}}
  // The direct epilogue, as dkdv's (this workgroup's rows all below Nq): dQ starts from its old values.
  var direct = false;
  {{#for dx < DIRECT}}direct = i0 + OWN <= P.Nq;
  if (direct && P.accumulate != 0u) {
    let gq = (row0 + i0 + sg * 16u) * D;
    {{#for db < D/16}}dq{{db}} = subgroupMatrixLoad<AM, row_major>(&dq, gq + {{db}}u * 16u, D);
    {{/for}}
  }
  {{/for}}
  let ds_scale = select(1.0, P.scale, direct);   // dQ = Σ (scale·dS) K there; scale·dQ at the end otherwise

  let j_start = (key_range(i0).x / BC) * BC;
  let n_end = key_range(min(i0 + OWN, P.Nq) - 1u).y;
  let wg_keys = shared_keys(i0, i0 + OWN);   // keys every row of the workgroup sees
  fetch_rows(true, kv_row0, j_start, P.Nk, tid);
  for (var j0 = j_start; j0 < n_end; j0 += BC) {
    let full = all_see(wg_keys, j0, j0 + BC);   // uniform: every row of the workgroup sees the whole tile
    workgroupBarrier();
    stash_rows(tid, false, !full);    // K into Qs, V into dOs
    workgroupBarrier();
    if (j0 + BC < n_end) { fetch_rows(true, kv_row0, j0 + BC, P.Nk, tid); }
    // DQ_ONE (D ≤ 64): S and dP in turn through the subgroup's one f32 block (Sa), P kept in registers
    // between them (two barriers more a tile, 8 KiB less at 4×16: 13% faster at D = 64, 18.5% slower at
    // D = 128 on the H200, bench/results/2026-12-04-dq-one-spill-h200).
    {{#for one < DQ_ONE}}tile_product(sg, &a_reg, false);   // S = Q Kᵀ (Bc = Br)
    workgroupBarrier();
    var kr = vec2<u32>();              // this lane's row's keys, where the tile is partial
    if (!full) { kr = key_range(i); }
    let at = r * SS + h * (BC / 2u);   // in the subgroup's Sa block
    let ap = r * PS + h * (BC / 2u);   // and dSa block
    // Lane (r, h) owns row r's columns h·Bc/2 + (c + lane) mod Bc/2; masked entries P = 0, dS = 0.
    var pv: array<f32, BC / 2u>;       // its P (constant indices: registers)
    var vis = 0u;                      // bit c: entry c is visible (partial tiles)
    {{#for c < BC/2}}{
      let col = ({{c}}u + lane) % (BC / 2u);
      pv[{{c}}] = 0.0;
      if (full || in_keys(kr, j0 + h * (BC / 2u) + col)) {
        pv[{{c}}] = p_of(Sa[sg][at + col], l2);
        vis |= 1u << {{c}}u;
      }
    }
    {{/for}}
    workgroupBarrier();                // every lane has read its S
    tile_product(sg, &b_reg, true);    // dP = dO Vᵀ
    workgroupBarrier();
    {{#for c < BC/2}}{
      let col = ({{c}}u + lane) % (BC / 2u);
      var ds = 0.0;
      if (full || (vis & (1u << {{c}}u)) != 0u) { ds = pv[{{c}}] * (Sa[sg][at + col] - dl); }
      dSa[sg][ap + col] = f16(ds * ds_scale);
    }
    {{/for}}
    {{/for}}
    // DQ_TWO (D > 64): S and dP at once, into Sa and dPa.
    {{#for two < DQ_TWO}}resident_products(sg, &a_reg, &b_reg);   // S = Q Kᵀ, dP = dO Vᵀ (Bc = Br)
    workgroupBarrier();
    var kr = vec2<u32>();              // this lane's row's keys, where the tile is partial
    if (!full) { kr = key_range(i); }
    let at = r * SS + h * (BC / 2u);   // in the subgroup's blocks of Sa, dPa
    let ap = r * PS + h * (BC / 2u);   // and of dSa
    {{#for c < BC/2}}{
      let col = ({{c}}u + lane) % (BC / 2u);
      var ds = 0.0;
      if (full || in_keys(kr, j0 + h * (BC / 2u) + col)) { ds = p_and_ds(Sa[sg][at + col], dPa[sg][at + col], l2, dl).y; }
      dSa[sg][ap + col] = f16(ds * ds_scale);
    }
    {{/for}}
    {{/for}}
    if (rare_tile(tid, full)) {
      // Rare: non-finite K in a tile with masked entries: dQ += dS K in scalar f32 over visible
      // keys, one 16-column block at a time, spilled through Sa.
      {{#for db < D/16}}rare_block_one(&dq{{db}}, sg, r, key_range(i), j0, h * 8u, {{db}}u * 16u, false);
      {{/for}}
    } else {
      // dQ += dS K (the K tile's blocks cb unrolled)
      {{#for cb < BC/16}}{
        let dsm = subgroupMatrixLoad<LM, row_major>(&dSa[sg], {{cb}}u * 16u, PS);
        {{#for db < D/16}}dq{{db}} = subgroupMatrixMultiplyAccumulate(dsm, subgroupMatrixLoad<RM, row_major>(&Qs[{{cb}}u], {{db}}u * 16u, DP), dq{{db}});
        {{/for}}
      }
      {{/for}}
    }
  }

  // dQ·scale, one 16×16 block at a time through Sa; rows past Nq are not written. The next
  // block's old values are read while this one is spilled and written.
  let ir = i0 + sg * 16u;
  {{#for dx < DIRECT}}if (direct) {
    let gq = (row0 + ir) * D;
    {{#for db < D/16}}subgroupMatrixStore<row_major>(&dq, gq + {{db}}u * 16u, dq{{db}}, D);
    {{/for}}
    return;
  }
  {{/for}}
  var oq = old_block(GRAD_DQ, row0, ir, P.Nq, lane, 0u, true);
  {{#for db < D/16}}workgroupBarrier();
  subgroupMatrixStore<row_major>(&Sa[sg], 0u, dq{{db}}, SS);
  workgroupBarrier();
  {
    let nq = old_block(GRAD_DQ, row0, ir, P.Nq, lane, {{db}}u + 1u, {{db}}u + 1u < D / 16u);
    write_block(GRAD_DQ, row0, ir, P.Nq, lane, {{db}}u, spilled_sa(sg, lane), oq);
    oq = nq;
  }
  {{/for}}
}

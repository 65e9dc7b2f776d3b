// FlashAttention-2 forward on subgroup matrices (tensor cores through
// chromium_experimental_subgroup_matrix): f16 Q, K, V; f32 accumulation and softmax.
//
// Work split (FlashAttention-2): a workgroup of SG = WG/32 subgroups owns Br = 16·RB·SG/DS query
// rows; each group of DS subgroups owns RB blocks of 16 rows and keeps them in registers for the
// whole kernel: its Q blocks as left matrices (each subgroup of the group all of them) and its O
// accumulators as result matrices (subgroup hd of the group the DH = D/16/DS blocks of columns
// 16·DH·hd…: with DS = 2 the D split, half the accumulators a lane, so that twice the subgroups fit
// the registers). The DS subgroups of a group compute S's Bc/DS-column parts each, and its
// softmax rows 16·RB/DS each. The SG subgroups
// share each K/V tile of Bc rows in workgroup memory; the next tiles are fetched into registers
// (16-byte loads) while the current one is used (PIPE, below). Each K (or V) block loaded from workgroup
// memory feeds RB products (register blocking: at RB = 2 half the matrix loads per product).
// Matrix pointers (blocks) and offsets differ per subgroup (uniform within it), so the module turns off Chromium's
// workgroup-uniformity check for subgroup matrices; the adapter must run subgroups of exactly
// 32 (checked by the host).
//
// Operand and accumulator blocks are separate variables (q0_0…, o0_0…, unrolled by the
// specializer), so each stays in registers whatever the driver does with arrays of matrices.
// Per K/V tile, for each group's 16·RB rows:
//   S = Q Kᵀ                           (f32, to the group's SBR×Bc block of workgroup memory, SBR = 16·RB
//                                       or 16 taking turns, below; each of its DS subgroups the columns of
//                                       its Bc/DS keys)
//   LPR = 2·DS·NPH/RB lanes per row (each subgroup 16·RB/DS of the group's rows, or 16 a phase taking turns) read their columns
//   once into registers (skewed: no bank conflicts) and compute m_tile = rowmax(S)·scale·log2 e
//   (scale > 0);
//   m is only raised when m_tile > m + TH (TH = 8, i.e. ×256): otherwise the stale m is kept,
//   P ≤ 2^8 stays exact in f16, and O needs no rescaling. When some row of the workgroup does
//   raise m, all subgroups spill O to workgroup memory, scale the raised rows by
//   α = exp2(m_old − m_new) and reload (rare after the first tiles).
//   P = exp2(S·scale·log2 e − m)  (f16),   ℓ = α·ℓ + rowsum(P)
//   O += P V                           (matrix multiply-accumulate into the register accumulators)
// Taking turns (NPH = 2 phases, SBR = 16: two row blocks a subgroup, no D split, Bc = 16; without Dawn's
// robustness, src/kernels/sgmmTiles.ts sgmmFwdTurns), the group's S and P blocks hold 16 rows, not 32: both row
// blocks' S are computed at once (each K block feeding both products), the first is stored and its softmax run
// by all 32 lanes, two a row (LPR = 2), while the second's S waits in registers; then the first's P is loaded
// into registers, the second's S stored and its softmax run; both P V products share each V block. Two barriers
// more a tile, 8 KiB less workgroup memory (13344 bytes at D = 64, 4×16×2, where it takes 21536), which the
// H200 ran 7–14% faster (bench/results/2026-12-04-fwd-turns2-h200; its steps in workgroup bytes, as the
// backward's: …-fwd-bytes-h200). A lane keeps its rows' m, ℓ per phase.
// Finally O /= ℓ and LSE = (m + log2 ℓ)·ln 2. Masked entries get P = 0; a row with no visible
// key keeps ℓ = 0 and gets O = 0, LSE = −inf. A ring step (P.accumulate) merges its rows into what
// O and LSE hold instead (common.wgsl lse_merge; rows with no visible key keep them).
// Non-finite inputs follow the float64 reference (src/reference/attention.ts): a row with a
// visible score that is NaN or +inf, or whose visible scores are all −inf, gets O = LSE = NaN
// (exp(S − max) is NaN there; the latter, in a ring step (P.partial), a partial without mass: LSE =
// +inf, common.wgsl no_mass_lse); a NaN/inf in V reaches O through the product. The product cannot
// skip masked keys (P = 0 times a NaN of V is NaN), so a tile with masked entries whose V holds
// a non-finite value (a workgroup vote while staging it) adds P V in scalar f32 over visible
// keys only; tiles of finite data never take that branch.
// Dispatch: (ceil(Nq / Br), Hq, B), or for a ring step the row blocks a visible pair reaches,
// from block P.q_blk0 on (FlashForward.encode); workgroup size WG = 32·SG.
//
// Bounds (Node runs it without Dawn's robustness clamps, src/gpu/node.ts; test/robust.test.ts):
// - Ks/Vs (CB blocks of 16·DP): word e < KV8 = Bc·D/8 (checked) goes to row e / D8 < Bc (block
//   row / 16 < CB), halves 8·(e % D8)… < D of it. Matrix loads are 16×16: all of block cb < CB
//   (= Bc/16) or of a Q row block 16-aligned with s0 ≤ row < s0 + Bc (checked, so its block
//   (row − s0) / 16 < CB), columns 16·kk or 16·db < D, stride DP (the last ends at row 15's
//   column D − 1 < DP).
// - S (SG/DS blocks of SBR·SS) / Pm (of SBR·PS), SBR = 16·RB or 16 (taking turns): group grp < SG/DS has block
//   grp; its lanes read rows r0 = hd·SBR/DS + lane/LPR < SBR (lane < 32, LPR·SBR/DS = 32) and columns h·COLS + c < LPR·COLS
//   = Bc ≤ SS, PS; matrix blocks sit at rows 16·rb < SBR (taking turns, row 0), columns 16·cb < Bc; spills at columns 16·hd…,
//   below SW = 16·DS ≤ SS (const_assert), and lanes scale or add columns h·SW/LPR + c < SW; the epilogue reads
//   rows e / 16 < SBR (e < 16·SBR = 32·OPL).
// - l_s, w_s (Br; w_s only where MERGE = 1): grp·16·RB + ph·SBR + r0 (ph < NPH, r0 < SBR: below 16·RB), and from
//   l_first = grp·16·RB + ph·SBR, + rr (rr < SBR) in write_o_block. vote: constant indices, or par / par ^ 1 with par ∈ {0, 1} (it
//   starts at 0 and only flips). kr/vr: t < LPT, constant bounds.
// - Storage: Q rows i0 + s0 + e/D8 < Nq and key rows j0 + e/D8 < Nk are checked before each
//   load, O/LSE rows i < Nq before each store; head bases use hq < Hq (the dispatch) and
//   hk = hq / (Hq/Hkv) < Hkv; the host binds exactly B·H·N·D elements.
// Loops: constant bounds, or j0 < n_end ≤ Nk in steps of Bc.
// Mask (common.wgsl, any of causal, window, documents): tiles from the block's first visible key
// to its last; a tile is full where the keys every row sees cover it (shared_keys: the group's
// rows once, before the tile loop, for the softmax; the workgroup's rows once before the loop for
// the V vote and the rare path's test, or with the D split only on a tile whose vote is non-finite:
// vote_keys), and the row's keys (key_range, once per partial tile) mask the rest entry by entry.

// Storage words (the bindings: FORWARD_BINDINGS, src/kernels/flashForward.ts): Q, K, V as 16-byte
// words of f16 data (8 halves each), O by element.
alias IW = vec4<u32>;
alias OW = OT;

const SG: u32 = WG / 32u;      // subgroups per workgroup
const RB: u32 = {{RB}}u;       // 16-row blocks per group of DS subgroups (BR = 16·RB·SG/DS)
const DS: u32 = {{DS}}u;       // subgroups per group: 1, or 2 (the D split: RB = 1)
const DH: u32 = D / 16u / DS;  // O's 16-column blocks per subgroup
const CB: u32 = BC / 16u;      // 16-wide blocks of the key tile
const LPR: u32 = 2u * DS * NPH / RB; // lanes per row in the softmax (RB is 1 or 2; phases NPH): 1, 2 or 4
const COLS: u32 = {{COLS}}u;    // score columns per lane: Bc / LPR
const SROWS: u32 = 16u * RB;   // rows per group
// Rows of a group's S and Pm blocks: SROWS, or 16 where its row blocks take turns (NPH = RB phases a tile: the
// second's S held in registers while the first's softmax runs, the first's P in registers while the second's
// does; every lane works in each phase, LPR = 2 lanes a row, and keeps a row's state per phase): 13344 bytes at
// D = 64 4×16×2 where both at once take 21536. With the same work and 8 KiB less (a timing-only alias) the H200's
// forward ran 20% faster (bench/results/2026-12-04-fwd-bytes-h200); taking turns, with its two barriers more a
// tile, ran 7% faster in p2p's steps and 11–14% in the same call (…-fwd-turns2-h200), without the robustness
// transform only (12.5% slower with it).
const SBR: u32 = {{SBR}}u;
const NPH: u32 = {{NPH}}u;
// TURN / NOTURN (1 and 0, or 0 and 1) select the template's sections for taking turns or not, so that the code
// without turns holds none of the turns' code (no dead branches or held matrices): with it present, that code ran
// 3.4–7.3% slower with robustness on (bench/results/2026-12-04-robust-fwd-h200). It is the code that ran before
// taking turns but for constant integer expressions, names, a scope and write_o_block's l_first as a parameter.
// The sections taking turns assume NPH = RB = 2 (the const_assert below: SBR = 16 makes NPH = RB).
const_assert NPH * SBR == SROWS && (NPH == 1u || (SBR == 16u && DS == 1u && CB == 1u));
const SW: u32 = 16u * DS;      // columns of a group's O spill: one 16-column block per subgroup
const_assert DS == 1u || (RB == 1u && CB % DS == 0u && BC + PAD / 2u >= SW);
const D8: u32 = D / 8u;        // 16-byte words per row
// Row strides in workgroup memory, padded by PAD halves (16 bytes when PAD = 8; 0 for the
// unpadded ablation) so that the 16 rows a matrix load or store touches start on different
// banks: unpadded, a row of D = 64 halves (128 bytes) or of 32 f32 scores starts on bank 0 every
// time, and the NVIDIA driver serializes the rows (the GEMM probe: 114 → 194 TFLOP/s).
const PAD: u32 = {{PAD}}u;
const DP: u32 = D + PAD;       // Ks, Vs (and Q staging) rows, halves
const SS: u32 = BC + PAD / 2u; // S rows, f32
const PS: u32 = BC + PAD;      // Pm rows, halves
const TH: f32 = 8.0;
// The order of a tile's steps (src/kernels/sgmmTiles.ts sgmmFwdPipeForSplit: 2 with the D split, 0
// otherwise; FLASHRING_SGMM_FWD_PIPE pins it; barriers per K/V tile in brackets, counting a uniform
// load as the barrier, load, barrier that Tint makes of it):
//  0 [6]  barrier, stash K and V of tile t, barrier, fetch tile t + 1 (K and V in one loop each:
//         fetch_kv, stash_kv), S = Q Kᵀ, barrier,
//         softmax, barrier (votes), uniform load of the votes, O += P V.
//  2 [3]  S = Q Kᵀ (Ks holds K(t)), barrier, stash V(t) and K(t + 1), fetch V(t + 1) and
//         K(t + 2), softmax, uniform load of the votes read in place (no other barrier after the
//         softmax), O += P V (Vs holds V(t)).
// Taking turns adds two barriers a tile to either (between the phases of the softmax).
// 2 needs no more memory: Ks is free once every subgroup's S products are done (the barrier
// after them), Vs once every O += P V of tile t − 1 is (before that same barrier); the barrier
// before O += P V orders both stashes before their readers (S products of t + 1 read Ks after
// it too). The global loads of two tiles ahead land behind the softmax and two products.
// (An order 1, as 2 with the votes copied through vote_u, was never faster and was removed.)
const PIPE: u32 = {{PIPE}}u;

// Constant matrix offsets (browsers): Dawn's robustness transform (Tint) checks a subgroup-matrix
// load or store at run time (offset and stride through selects, so the stride too is no longer a
// constant) unless it can prove the access in bounds: constant offset, stride and array length, and
// (in the dumps) little more, nothing it could prove of offsets built from the subgroup. So the
// tiles are arrays of blocks, each matrix operation takes the pointer of its block (`&Ks[cb]`: one
// index clamp, like any other) at a constant offset within it: the key blocks are unrolled by the
// specializer, and the subgroup's part hd enters the offsets as the specializer's value HD, the
// constant 0u where DS = 1 (the split robust devices pick by default: src/kernels/sgmmTiles.ts).
// The memory layout is that of the flat arrays (block b's row rr at row 16·b + rr).
var<workgroup> Ks: array<array<f16, 16u * DP>, CB>;   // K tile, 16 rows a block; first stages Q Bc rows at a time
var<workgroup> Vs: array<array<f16, 16u * DP>, CB>;
var<workgroup> S: array<array<f32, SBR * SS>, BR / SROWS>;   // per group an SBR×Bc block: scores, O spills
var<workgroup> Pm: array<array<f16, SBR * PS>, BR / SROWS>;  // per group an SBR×Bc block: P
var<workgroup> l_s: array<f32, BR>;
// A ring's forward (MERGE = 1, src/kernels/sgmmTiles.ts planSgmm) merges (P.accumulate) with each
// row's weights (lse_merge) in w_s; a plain forward (MERGE = 0) has neither.
const MERGE: u32 = {{MERGE}}u;
{{#for m < MERGE}}var<workgroup> w_s: array<vec2<f32>, BR>;
{{/for}}
// Every workgroup variable is a multiple of 16 bytes: on the NVIDIA Vulkan driver a matrix
// load or store from an array that is not 16-byte aligned reads or writes the wrong elements
// (a 4-byte atomic here once shifted Ks by a row). A tile's votes are bits of one word:
// VOTE_RAISE (some row raised its max), VOTE_NONFINITE (the V tile holds a non-finite value; set only on a
// tile that votes: stash_kv).
// PIPE = 0: vote[0], copied by invocation 0 to vote_u and read uniformly from there; PIPE = 2:
// vote[tile parity], read uniformly in place (workgroupUniformLoad of an atomic).
var<workgroup> vote: array<atomic<u32>, 4>;
var<workgroup> vote_u: vec4<u32>;
const VOTE_RAISE: u32 = 1u;
const VOTE_NONFINITE: u32 = 2u;

const KV8: u32 = BC * D8;                  // 16-byte words of a K (or V) tile
const LPT: u32 = (KV8 + WG - 1u) / WG;     // of them per invocation
var<private> kr: array<vec4<u32>, LPT>;
var<private> vr: array<vec4<u32>, LPT>;

// Stores 16-byte word e (8 halves: row e / D8, columns 8·(e % D8)…) into Vs or Ks.
fn put8(e: u32, w: vec4<u32>, into_v: bool) {
  let h = halves8(w);
  let row = e / D8;
  let at = (row % 16u) * DP + (e % D8) * 8u;
  {{#for x < 8}}if (into_v) { Vs[row / 16u][at + {{x}}u] = h[{{x}}]; } else { Ks[row / 16u][at + {{x}}u] = h[{{x}}]; }
  {{/for}}
}

// Global → registers: the K (or, with use_v, the V) tile starting at key j0 (zeros past Nk).
fn fetch_tile(use_v: bool, kv8: u32, j0: u32, tid: u32) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    var x = vec4<u32>();
    if (e < KV8 && j0 + e / D8 < P.Nk) {
      if (use_v) { x = v[kv8 + j0 * D8 + e]; } else { x = k[kv8 + j0 * D8 + e]; }
    }
    if (use_v) { vr[t] = x; } else { kr[t] = x; }
  }
}

// PIPE = 0: both tiles at once, one loop (each step's K and V loads issued together).
fn fetch_kv(kv8: u32, j0: u32, tid: u32) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    var kx = vec4<u32>();
    var vx = vec4<u32>();
    if (e < KV8 && j0 + e / D8 < P.Nk) {
      kx = k[kv8 + j0 * D8 + e];
      vx = v[kv8 + j0 * D8 + e];
    }
    kr[t] = kx;
    vr[t] = vx;
  }
}

// Registers → workgroup memory; `voting` (a tile that may take the rare path: one with masked entries,
// or every tile with the D split): a non-finite V value sets VOTE_NONFINITE in vote[slot]. Voting on
// every tile cost the backward's dq 11% at D = 64 (its own vote, the same test:
// bench/results/2026-12-04-stash-h200).
fn stash_kv(tid: u32, slot: u32, voting: bool) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    if (e < KV8) {
      put8(e, kr[t], false);
      put8(e, vr[t], true);
      if (voting && tc_nonfinite8(vr[t])) { atomicOr(&vote[slot], VOTE_NONFINITE); }
    }
  }
}

fn stash_k(tid: u32) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    if (e < KV8) { put8(e, kr[t], false); }
  }
}

fn stash_v(tid: u32, slot: u32, voting: bool) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    if (e < KV8) {
      put8(e, vr[t], true);
      if (voting && tc_nonfinite8(vr[t])) { atomicOr(&vote[slot], VOTE_NONFINITE); }
    }
  }
}

// The keys every row of the workgroup (rows i0…) sees, held across main's tile loop (wg_keys): none
// with the D split (every tile votes there), so that it holds no registers for them.
fn held_keys(i0: u32) -> vec2<u32> {
  if (DS > 1u) { return vec2<u32>(); }
  return shared_keys(i0, i0 + BR);
}

// Whether the K/V tile from key j0 votes (stash_kv, stash_v): a tile the workgroup's rows do not all
// see in full (the only kind that may take the rare path), or every tile with the D split.
fn tile_votes(wg_keys: vec2<u32>, j0: u32) -> bool {
  return DS > 1u || !all_see(wg_keys, j0, j0 + BC);
}

// The same keys for the rare path's test: wg_keys as held, or with the D split recomputed here.
fn vote_keys(wg_keys: vec2<u32>, i0: u32) -> vec2<u32> {
  if (DS > 1u) { return shared_keys(i0, i0 + BR); }
  return wg_keys;
}

// A row's LPR lanes (adjacent: h = lane % LPR) combined by shuffles, each called by every lane: the
// row's max, its sum (pairs first, then pairs of pairs), and whether any of its lanes' flags is set.
fn row_max(x: f32) -> f32 {
  var y = x;
  if (LPR >= 2u) { y = max(y, subgroupShuffleXor(y, 1u)); }
  if (LPR == 4u) { y = max(y, subgroupShuffleXor(y, 2u)); }
  return y;
}

fn row_sum(x: f32) -> f32 {
  var y = x;
  if (LPR >= 2u) { y += subgroupShuffleXor(y, 1u); }
  if (LPR == 4u) { y += subgroupShuffleXor(y, 2u); }
  return y;
}

fn row_any(b: bool) -> bool {
  var y = u32(b);
  if (LPR >= 2u) { y |= subgroupShuffleXor(y, 1u); }
  if (LPR == 4u) { y |= subgroupShuffleXor(y, 2u); }
  return y != 0u;
}

// Lane (r, h) scales its part of row r of group grp's spilled O blocks (SW columns, from `at` in
// the group's block of S): O·α.
fn scale_block_row(grp: u32, at: u32, a: f32) {
  for (var c = 0u; c < SW / LPR; c++) { S[grp][at + c] *= a; }
}

// The rare path of O += P V (see the header): lane (r0, h)'s SW/LPR columns c0… of row r0 of a
// spilled 16-column O block (row r at `at` in group grp's block of S, its P at `ap` in the group's
// block of Pm), V columns d0 + c0…, over the tile's keys j0… visible to query i.
fn add_pv_row(grp: u32, at: u32, ap: u32, i: u32, j0: u32, c0: u32, d0: u32) {
  let kr = key_range(i);
  for (var c = 0u; c < SW / LPR; c++) {
    var x = S[grp][at + c0 + c];
    for (var jj = 0u; jj < BC; jj++) {
      if (in_keys(kr, j0 + jj)) { x += f32(Pm[grp][ap + jj]) * f32(Vs[jj / 16u][(jj % 16u) * DP + d0 + c0 + c]); }
    }
    S[grp][at + c0 + c] = x;
  }
}

// A lane's entries of a 16-column block of O's SBR rows: e = lane + 32·k (row e / 16, column e % 16), k < OPL.
const OPL: u32 = SBR * 16u / 32u;

// What a lane's entries of block `db` of O hold, for SBR of the group's rows, i_first… below Nq, when
// merging (P.accumulate; zeros otherwise, or with `load` false: the block after the last). Read a
// block ahead of its merge: read entry by entry at the merge, each waited for its global load.
fn old_o(q_row0: u32, i_first: u32, lane: u32, db: u32, load: bool) -> array<f32, OPL> {
  var x: array<f32, OPL>;
  if (load && MERGE == 1u && P.accumulate != 0u) {
    for (var k = 0u; k < OPL; k++) {
      let e = lane + 32u * k;
      let ii = i_first + e / 16u;
      if (ii < P.Nq) { x[k] = f32(o[(q_row0 + ii) * D + db * 16u + e % 16u]); }
    }
  }
  return x;
}

// Writes block `db` (columns 16·db…) of O/ℓ for SBR of group grp's rows (queries i_first…, their ℓ and merge
// weights from l_first in l_s and w_s), from the subgroup's spill at `sp` in the group's block of S (row rr at sp + rr·SS). ℓ = NaN marks a
// NaN row; ℓ = 0 a row with no visible key. Merging (P.accumulate, a ring step), each entry is merged into what
// O held (`old`, old_o) with the row's weights in w_s (common.wgsl lse_merge). (A ring step's row without mass has
// ℓ = 1: its undivided sums.)
fn write_o_block(q_row0: u32, i_first: u32, grp: u32, l_first: u32, sp: u32, lane: u32, db: u32, old: array<f32, OPL>) {
  for (var k = 0u; k < OPL; k++) {
    let e = lane + 32u * k;
    let rr = e / 16u;
    let cc = e % 16u;
    let ii = i_first + rr;
    if (ii < P.Nq) {
      let ll = l_s[l_first + rr];
      var x = 0.0;
      if (ll > 0.0) { x = S[grp][sp + rr * SS + cc] / ll; }
      if (is_nan(ll)) { x = nan_f32(); }
      {{#for m < MERGE}}if (P.accumulate != 0u) { x = merged(vec3<f32>(w_s[l_first + rr], 0.0), old[k], x); }
      {{/for}}
      o[(q_row0 + ii) * D + db * 16u + cc] = OT(x);
    }
  }
}

@compute @workgroup_size(WG)
fn main(g: Grid, @builtin(local_invocation_index) tid: u32) {
  // Heavy-first under causal masking: starting the longest workgroups first shortens the tail
  // (FlashAttention-2 orders its blocks the same way). The grid holds row blocks P.q_blk0 …
  // (ring steps: only those a visible pair reaches).
  let rb = row_block(g, BR);
  let i0 = rb.i0;
  let q_row0 = rb.q_row0;
  let kv8 = rb.kv_row0 * D8;
  let sg = tid / 32u;
  let lane = tid % 32u;
  let grp = sg / DS;                  // the subgroup's group (its rows)
  let hd = sg % DS;                   // and its part: O columns 16·DH·hd…, S columns 16·CB/DS·hd…
  let r0 = hd * (SBR / DS) + lane / LPR;    // this lane's softmax row within the group's S block; phase ph's
                                            // row ph·SBR + r0 of the group's 16·RB
  let h = lane % LPR;                 // and which part of the tile's columns it reads
  let i_sg = i0 + grp * SROWS;        // the group's first query row
  {{#for ph < NPH}}let iq{{ph}} = i_sg + {{ph}}u * SBR + r0;   // this lane's query row in phase ph
  {{/for}}  // Its O blocks' spills in the group's block of S: columns 16·hd… (HD · 16 in matrix offsets).
  let sp = hd * 16u;

  // The subgroup's Q blocks into registers (q<rb>_<kk>), staged through Ks Bc rows at a time
  // (zeros past Nq), and its O accumulators o<rb>_<db>: one variable per 16×16 block,
  // unrolled by the specializer.
  {{#for rb < RB}}{{#for kk < D/16}}var q{{rb}}_{{kk}} = LM();
  {{/for}}{{/for}}
  for (var s0 = 0u; s0 < BR; s0 += BC) {
    workgroupBarrier();
    for (var e = tid; e < BC * D8; e += WG) {
      var w = vec4<u32>();
      if (i0 + s0 + e / D8 < P.Nq) { w = q[(q_row0 + i0 + s0) * D8 + e]; }
      put8(e, w, false);
    }
    workgroupBarrier();
    {{#for rb < RB}}if (grp * SROWS + {{rb}}u * 16u >= s0 && grp * SROWS + {{rb}}u * 16u < s0 + BC) {
      let qa = (grp * SROWS + {{rb}}u * 16u - s0) / 16u;   // the staged block
      {{#for kk < D/16}}q{{rb}}_{{kk}} = subgroupMatrixLoad<LM, row_major>(&Ks[qa], {{kk}}u * 16u, DP);
      {{/for}}
    }
    {{/for}}
  }
  if (tid == 0u) {
    atomicStore(&vote[0], 0u);
    atomicStore(&vote[1], 0u);
  }
  {{#for rb < RB}}{{#for db < DH}}var o{{rb}}_{{db}} = AM();
  {{/for}}{{/for}}
  // Per phase ph (scalars named by phase: m0, m1, …), of this lane's row in it: m, the running max (exp2
  // domain); l, ℓ, the running sum of P; alpha, its tile's rescale; spoiled, a visible score of this lane's
  // columns was NaN or +inf.
  {{#for ph < NPH}}var m{{ph}} = NEG_BIG;
  var l{{ph}} = 0.0;
  var alpha{{ph}} = 1.0;
  var spoiled{{ph}} = false;
  {{/for}}

  // The mask (common.wgsl): K/V tiles from the first row's first key to the last row's last.
  let j_start = (key_range(i0).x / BC) * BC;
  let n_end = key_range(min(i0 + BR, P.Nq) - 1u).y;
  let sg_keys = shared_keys(i_sg, i_sg + SROWS);   // keys every row of the group sees
  // The keys every row of the workgroup sees (uniform): a tile inside them never reads the V vote, so it
  // does not vote. Held across the tile loop, except with the D split (512 invocations, no registers
  // to spare: holding them cost its forward 4-9% at D = 128, bench/results/2026-12-04-fwd-vote-h200),
  // where every tile votes and the rare path's test recomputes them (held_keys, vote_keys: DS is a
  // module constant). Recomputed every tile instead (shared_keys: two rows' key ranges, with
  // divisions, and binary searches over documents), they cost the forward 22% at D = 64.
  let wg_keys = held_keys(i0);
  if (PIPE == 0u) {
    fetch_kv(kv8, j_start, tid);
  } else {
    fetch_tile(false, kv8, j_start, tid);
    fetch_tile(true, kv8, j_start, tid);
    workgroupBarrier();               // every subgroup has its Q blocks out of Ks
    stash_k(tid);                     // K(0); kr ← K(1)
    if (j_start + BC < n_end) { fetch_tile(false, kv8, j_start + BC, tid); }
    workgroupBarrier();
  }
  var par = 0u;                       // the vote word of this tile (PIPE = 2: tile parity)
  // Taking turns (NPH = 2): the second row block's S, held while the first's softmax runs, and the first's P,
  // held while the second's runs.
  {{#for t < TURN}}var s_hold = AM();
  var p_hold = LM();
  {{/for}}  for (var j0 = j_start; j0 < n_end; j0 += BC) {
    if (PIPE == 0u) {
      workgroupBarrier();             // everyone is done with the previous tile (and with Q)
      stash_kv(tid, 0u, tile_votes(wg_keys, j0));
      workgroupBarrier();
      if (j0 + BC < n_end) { fetch_kv(kv8, j0 + BC, tid); }
    }

    // S = Q Kᵀ for the group's rows, the subgroup's CBS = CB/DS blocks of columns (block hd·CBS + c,
    // unrolled); each K block feeds RB products. Row blocks past the S block's SBR rows are held (NPH = 2).
    {{#for c < CBS}}{
      {{#for rb < RB}}var acc{{rb}} = AM();
      {{/for}}
      {{#for kk < D/16}}{
        let kt = subgroupMatrixLoad<RM, col_major>(&Ks[{{HD}} * {{CBS}}u + {{c}}u], {{kk}}u * 16u, DP);
        {{#for rb < RB}}acc{{rb}} = subgroupMatrixMultiplyAccumulate(q{{rb}}_{{kk}}, kt, acc{{rb}});
        {{/for}}
      }
      {{/for}}
      {{#for n < NOTURN}}{{#for rb < RB}}subgroupMatrixStore<row_major>(&S[grp], {{rb}}u * 16u * SS + {{HD}} * {{CBS}}u * 16u + {{c}}u * 16u, acc{{rb}}, SS);
      {{/for}}{{/for}}{{#for t < TURN}}subgroupMatrixStore<row_major>(&S[grp], {{HD}} * {{CBS}}u * 16u + {{c}}u * 16u, acc0, SS);
      s_hold = acc1;
      {{/for}}
    }
    {{/for}}
    workgroupBarrier();               // S written; every subgroup is done with Ks (and Vs of t − 1)
    if (PIPE != 0u) {
      stash_v(tid, par, tile_votes(wg_keys, j0));   // V(t); vr ← V(t + 1)
      if (j0 + BC < n_end) {
        stash_k(tid);                 // K(t + 1); kr ← K(t + 2)
        fetch_tile(true, kv8, j0 + BC, tid);
        if (j0 + 2u * BC < n_end) { fetch_tile(false, kv8, j0 + 2u * BC, tid); }
      }
    }

    // Online softmax: lane (r0, h) reads columns h·COLS + (c + lane) mod COLS once, as
    // S·scale·log2 e (masked ones as NEG_BIG), in phase ph (unrolled; one unless the row blocks take turns) of
    // row r0 of the S and Pm blocks, the group's row ph·SBR + r0.
    let full = all_see(sg_keys, j0, j0 + BC);   // the group's rows see the whole tile
    let row_at = r0 * SS + h * COLS;  // in the group's block of S
    let row_ap = r0 * PS + h * COLS;  // and of Pm
    let col0 = j0 + h * COLS;
    {{#for ph < NPH}}{{#for t < TURN}}if ({{ph}}u > 0u) {
      // The next phase (uniform: a constant): the last one's P into registers, then this one's S into the block.
      workgroupBarrier();
      p_hold = subgroupMatrixLoad<LM, row_major>(&Pm[grp], 0u, PS);
      subgroupMatrixStore<row_major>(&S[grp], 0u, s_hold, SS);
      workgroupBarrier();
    }
    {{/for}}{
      // The column loops are unrolled by the specializer (sv<c> stay in registers; a driver
      // that keeps a 32-long loop rolled would put an indexed array in local memory).
      var mt = NEG_BIG;
      {{#for c < COLS}}var sv{{c}} = NEG_BIG;
      {{/for}}
      if (full) {
        {{#for c < COLS}}sv{{c}} = S[grp][row_at + ({{c}}u + lane) % COLS] * P.scale_log2;
        mt = max(mt, sv{{c}});
        spoiled{{ph}} = spoiled{{ph}} | tc_spoils_row(sv{{c}});
        {{/for}}
      } else {
        let kr = key_range(iq{{ph}});
        {{#for c < COLS}}if (in_keys(kr, col0 + ({{c}}u + lane) % COLS)) { sv{{c}} = S[grp][row_at + ({{c}}u + lane) % COLS] * P.scale_log2; }
        mt = max(mt, sv{{c}});
        spoiled{{ph}} = spoiled{{ph}} | tc_spoils_row(sv{{c}});
        {{/for}}
      }
      mt = row_max(mt);
      alpha{{ph}} = 1.0;
      if (mt > m{{ph}} + TH) {
        if (m{{ph}} > NEG_HALF) {
          alpha{{ph}} = exp2(m{{ph}} - mt);
          atomicOr(&vote[par], VOTE_RAISE);
        }
        m{{ph}} = mt;
      }
      // Masked entries (NEG_BIG) get P = 0 outright: m itself may still be NEG_BIG.
      var sum = 0.0;
      {{#for c < COLS}}{
        var p = 0.0;
        if (full || sv{{c}} > NEG_HALF) { p = exp2(sv{{c}} - m{{ph}}); }
        Pm[grp][row_ap + ({{c}}u + lane) % COLS] = f16(p);
        sum += p;
      }
      {{/for}}
      sum = row_sum(sum);
      l{{ph}} = alpha{{ph}} * l{{ph}} + sum;
    }
    {{/for}}
    var votes = 0u;
    if (PIPE == 2u) {
      // The uniform load's barriers order P (and the stashes) before O += P V. The other word
      // was last read by tile t − 1's uniform load and is next written after tile t + 1's
      // first barrier.
      votes = workgroupUniformLoad(&vote[par]);
      if (tid == 0u) { atomicStore(&vote[par ^ 1u], 0u); }
      par ^= 1u;
    } else {
      workgroupBarrier();
      if (tid == 0u) {
        vote_u.x = atomicLoad(&vote[0]);
        atomicStore(&vote[0], 0u);
      }
      votes = workgroupUniformLoad(&vote_u).x;
    }
    if ((votes & VOTE_RAISE) != 0u) {
      // Some row raised its max: rescale O one 16-column block a subgroup at a time, spilled through
      // S (the group's subgroups side by side; the lanes of a row's softmax scale it).
      {{#for n < NOTURN}}{{#for db < DH}}{{#for rb < RB}}subgroupMatrixStore<row_major>(&S[grp], {{HD}} * 16u + {{rb}}u * 16u * SS, o{{rb}}_{{db}}, SS);
      {{/for}}workgroupBarrier();
      scale_block_row(grp, r0 * SS + h * (SW / LPR), alpha0);
      workgroupBarrier();
      {{#for rb < RB}}o{{rb}}_{{db}} = subgroupMatrixLoad<AM, row_major>(&S[grp], {{HD}} * 16u + {{rb}}u * 16u * SS, SS);
      {{/for}}workgroupBarrier();
      {{/for}}{{/for}}
      // Taking turns, one phase's row block at a time (phase ph: row block ph).
      {{#for t < TURN}}{{#for db < DH}}{{#for ph < NPH}}subgroupMatrixStore<row_major>(&S[grp], {{HD}} * 16u, o{{ph}}_{{db}}, SS);
      workgroupBarrier();
      scale_block_row(grp, r0 * SS + h * (SW / LPR), alpha{{ph}});
      workgroupBarrier();
      o{{ph}}_{{db}} = subgroupMatrixLoad<AM, row_major>(&S[grp], {{HD}} * 16u, SS);
      workgroupBarrier();
      {{/for}}{{/for}}{{/for}}
    }

    // Rare: unless every row of the workgroup sees every key of the tile (uniform, unlike `full`).
    if ((votes & VOTE_NONFINITE) != 0u && !all_see(vote_keys(wg_keys, i0), j0, j0 + BC)) {
      // Rare: a non-finite V element in a tile with masked entries: O += P V in scalar f32 over
      // visible keys only, one 16-column block at a time, spilled through S.
      // Lane (r, h) takes spill columns cs… of subgroup part cs / 16 (V columns of that part's block).
      let cs = h * (SW / LPR);
      {{#for n < NOTURN}}{{#for db < DH}}{{#for rb < RB}}subgroupMatrixStore<row_major>(&S[grp], {{HD}} * 16u + {{rb}}u * 16u * SS, o{{rb}}_{{db}}, SS);
      {{/for}}workgroupBarrier();
      add_pv_row(grp, r0 * SS + (cs / 16u) * 16u, r0 * PS, iq0, j0, cs % 16u, ((cs / 16u) * DH + {{db}}u) * 16u);
      workgroupBarrier();
      {{#for rb < RB}}o{{rb}}_{{db}} = subgroupMatrixLoad<AM, row_major>(&S[grp], {{HD}} * 16u + {{rb}}u * 16u * SS, SS);
      {{/for}}workgroupBarrier();
      {{/for}}{{/for}}
      // Taking turns, one phase at a time, its P put back in the Pm block first (the first phase's from p_hold;
      // the last one's, which the block holds, kept in p_last).
      {{#for t < TURN}}let p_last = subgroupMatrixLoad<LM, row_major>(&Pm[grp], 0u, PS);
      workgroupBarrier();             // loaded before the first phase's P is put back
      {{#for db < DH}}{{#for ph < NPH}}if ({{ph}}u == 0u) { subgroupMatrixStore<row_major>(&Pm[grp], 0u, p_hold, PS); } else { subgroupMatrixStore<row_major>(&Pm[grp], 0u, p_last, PS); }
      subgroupMatrixStore<row_major>(&S[grp], {{HD}} * 16u, o{{ph}}_{{db}}, SS);
      workgroupBarrier();
      add_pv_row(grp, r0 * SS + (cs / 16u) * 16u, r0 * PS, iq{{ph}}, j0, cs % 16u, ((cs / 16u) * DH + {{db}}u) * 16u);
      workgroupBarrier();
      o{{ph}}_{{db}} = subgroupMatrixLoad<AM, row_major>(&S[grp], {{HD}} * 16u, SS);
      workgroupBarrier();
      {{/for}}{{/for}}{{/for}}
    } else {
      // O += P V; each V block feeds RB products.
      {{#for cb < BC/16}}{
        {{#for n < NOTURN}}{{#for rb < RB}}let pm{{rb}} = subgroupMatrixLoad<LM, row_major>(&Pm[grp], {{rb}}u * 16u * PS + {{cb}}u * 16u, PS);
        {{/for}}{{/for}}{{#for t < TURN}}let pm0 = p_hold;   // taking turns (Bc = 16): the first row block's P, held; the block holds the last one's
        let pm1 = subgroupMatrixLoad<LM, row_major>(&Pm[grp], {{cb}}u * 16u, PS);
        {{/for}}
        {{#for db < DH}}{
          let vt = subgroupMatrixLoad<RM, row_major>(&Vs[{{cb}}u], {{HD}} * DH * 16u + {{db}}u * 16u, DP);
          {{#for rb < RB}}o{{rb}}_{{db}} = subgroupMatrixMultiplyAccumulate(pm{{rb}}, vt, o{{rb}}_{{db}});
          {{/for}}
        }
        {{/for}}
      }
      {{/for}}
    }
  }

  // Per phase, this lane's row (query iq): NaN rows, a visible score NaN or +inf (in any of the row's LPR lanes'
  // columns), or visible keys whose scores are all −inf (ℓ = 0 although the row sees keys), marked by ℓ = NaN
  // in l_s; its LSE, merged with what LSE holds in a ring step (read before its lane writes it below).
  // In a ring step (P.partial) visible keys whose scores are all −inf give a partial without mass instead
  // (common.wgsl no_mass_lse: LSE = +inf, and O the undivided sums: ℓ = 1 in l_s).
  {{#for ph < NPH}}spoiled{{ph}} = row_any(spoiled{{ph}});
  let keys{{ph}} = key_range(iq{{ph}});
  let no_mass{{ph}} = !spoiled{{ph}} && l{{ph}} == 0.0 && keys{{ph}}.y > keys{{ph}}.x;
  let nan_row{{ph}} = spoiled{{ph}} || (no_mass{{ph}} && P.partial == 0u);
  var l_out{{ph}} = l{{ph}};
  if (nan_row{{ph}}) { l_out{{ph}} = nan_f32(); }
  if (no_mass{{ph}} && P.partial != 0u) { l_out{{ph}} = 1.0; }
  var lse_new{{ph}} = neg_inf();
  if (l{{ph}} > 0.0) { lse_new{{ph}} = (m{{ph}} + log2(l{{ph}})) * LN2; }
  if (nan_row{{ph}}) { lse_new{{ph}} = nan_f32(); }
  if (no_mass{{ph}}) { lse_new{{ph}} = no_mass_lse(); }
  var w{{ph}} = vec3<f32>(0.0, 1.0, lse_new{{ph}});
  if (MERGE == 1u && P.accumulate != 0u && h == 0u && iq{{ph}} < P.Nq) { w{{ph}} = lse_merge(lse[q_row0 + iq{{ph}}], lse_new{{ph}}); }
  // O / ℓ, one 16-column block at a time through S; rows past Nq are not written.
  if (h == 0u) {
    l_s[grp * SROWS + {{ph}}u * SBR + r0] = l_out{{ph}};
    {{#for m < MERGE}}w_s[grp * SROWS + {{ph}}u * SBR + r0] = w{{ph}}.xy;
    {{/for}}
  }
  {{/for}}
  // Merging, each block's old entries are read while the one before is spilled and written.
  var old = old_o(q_row0, i_sg, lane, hd * DH, true);
  {{#for n < NOTURN}}{{#for db < DH}}workgroupBarrier();
  {{#for rb < RB}}subgroupMatrixStore<row_major>(&S[grp], {{HD}} * 16u + {{rb}}u * 16u * SS, o{{rb}}_{{db}}, SS);
  {{/for}}workgroupBarrier();
  {
    let nxt = old_o(q_row0, i_sg, lane, hd * DH + {{db}}u + 1u, {{db}}u + 1u < DH);
    write_o_block(q_row0, i_sg, grp, grp * SROWS, sp, lane, hd * DH + {{db}}u, old);
    old = nxt;
  }
  {{/for}}{{/for}}
  // Taking turns, each block goes out one phase's rows at a time (phase ph: row block ph, rows ph·SBR… of the group).
  {{#for t < TURN}}{{#for db < DH}}{{#for ph < NPH}}workgroupBarrier();
  subgroupMatrixStore<row_major>(&S[grp], {{HD}} * 16u, o{{ph}}_{{db}}, SS);
  workgroupBarrier();
  {
    let nph = ({{ph}}u + 1u) % NPH;             // the next block's phase, and its block
    let ndb = {{db}}u + ({{ph}}u + 1u) / NPH;
    let nxt = old_o(q_row0, i_sg + nph * SBR, lane, hd * DH + ndb, ndb < DH);
    write_o_block(q_row0, i_sg + {{ph}}u * SBR, grp, grp * SROWS + {{ph}}u * SBR, sp, lane, hd * DH + {{db}}u, old);
    old = nxt;
  }
  {{/for}}{{/for}}{{/for}}
  {{#for ph < NPH}}if (h == 0u && iq{{ph}} < P.Nq) { lse[q_row0 + iq{{ph}}] = w{{ph}}.z; }
  {{/for}}
}

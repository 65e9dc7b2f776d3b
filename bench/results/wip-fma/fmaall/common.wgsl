// Shared header of the attention kernels; attentionSource (src/kernels/source.ts) prepends it
// to each kernel file and the specializer (src/kernels/specialize.ts) fills in the {{...}}
// values (attentionValues there; PARAMS, the uniform block, from src/kernels/params.ts).
//
// Layout [B, H, N, D] row-major. Query head hq reads K/V head hq / (Hq / Hkv) (grouped query).
// Positions: query i sits at q_off + i·q_stride (+ q_jump from row q_split on: a chunk of two
// runs, as a zigzag shard), key j likewise from the k_ values. The mask is the
// one of src/mask.ts, mirrored here: pos_bounds (the rules), key_range (keys of a row),
// tile_class (skip / full / partial), query_span (rows that may see a key range).
{{ENABLES}}
alias ST = {{ST}};          // Q, K, V, dO storage and tile element type (f32, or f16 with shader-f16)
alias OT = {{OT}};          // O element type (f32 for the ring's partial results)
alias GT = {{GT}};          // dQ, dK, dV element type (f32 for the ring's travelling accumulators)
const D: u32 = {{D}}u;      // head dim
const BR: u32 = {{BR}}u;    // Br: query rows per tile
const BC: u32 = {{BC}}u;    // Bc: key rows per tile
const WG: u32 = {{WG}}u;    // invocations per workgroup
// Loop bounds go through rt(): on GPUs the specializer writes rt(X) as (X) (constantBounds,
// src/kernels/specialize.ts), so loops unroll and Dawn's robustness transform sees a constant
// bound (no loop guard, no clamp on the counter); on CPU Vulkan drivers (lavapipe, SwiftShader)
// rt() adds the uniform P.zero, which the compiler cannot see through, so loops stay loops:
// unrolled, one forward pipeline at D = 64 takes ~16 s to compile on lavapipe, not unrolled ~1 s.
fn rt(x: u32) -> u32 { return x{{RT}}; }
// Four words as their columns: result j holds component j of a, b, c, d (the transpose of a 4×4
// block, register moves only). The portable kernels' products take a word's 4 rows side by side, so
// that s[rr] = fma(q.x, K's x column, s[rr]) and so on: one fma a product, where dot() and an add
// took 5 operations for 4 (flash_fwd.wgsl scores, flash_bwd_tiles.wgsl blocks).
fn columns(a: vec4<f32>, b: vec4<f32>, c: vec4<f32>, d: vec4<f32>) -> array<vec4<f32>, 4> {
  return array<vec4<f32>, 4>(vec4<f32>(a.x, b.x, c.x, d.x), vec4<f32>(a.y, b.y, c.y, d.y), vec4<f32>(a.z, b.z, c.z, d.z), vec4<f32>(a.w, b.w, c.w, d.w));
}
const LOG2E: f32 = 1.4426950408889634;
const LN2: f32 = 0.6931471805599453;
// Masked scores hold NEG_BIG rather than -inf, so that no shader ever computes inf - inf (the
// tensor-core kernels: there finite scores at or below NEG_HALF count as masked; docs/numerics.md).
const NEG_BIG: f32 = -1.0e30;
const NEG_HALF: f32 = -5.0e29;
// The lowest finite f32: the portable forward's running max starts there, so that any finite score,
// however negative, becomes the max (−inf scores never do: P~ = 0 for them).
const F32_LOWEST: f32 = -3.40282346638528859812e+38f;

// struct Params: generated from the table in src/kernels/params.ts, which also packs it.
{{PARAMS}}

// The kernel's bindings: generated from its family's table (src/kernels/bindings.ts; the header's
// two are in every table: P, the uniform block, and cu, the documents: cu_seqlens_q (n_docs + 1
// entries) then cu_seqlens_k (n_docs + 1), read only when n_docs > 0, at indices below
// 2·n_docs + 2 (a 2-entry buffer is bound when there are none)).
{{BINDINGS}}

// What a workgroup of an attention grid (x blocks, y heads, z batch) owns: (k, head, batch), k
// counting blocks from the longest (the kernel maps k to its block: the forward and dq reverse
// it, dkdv's first key blocks are its longest). GPUs start workgroups in the order of
// x + nwg.x·(y + nwg.y·z). Under a causal mask, with P.head_group = G > 1, the (head, batch)
// pairs go in groups of G that take turns block by block — k = 0 of each head of the group, then
// k = 1, … — so no head's longest block starts behind the other heads' short ones (longest
// processing time first over heads, as FlashAttention-3's scheduler; G bounds the K/V heads in
// flight). The default is one group of all (src/kernels/params.ts headGroup: measured faster on
// the H200); G = 1 is the grid as it is, head by head. The outputs are the same bit for bit
// under any G (each workgroup's work does not depend on when it runs).
// The grid builtins of every attention entry point, as one parameter (`fn name(g: Grid,
// @builtin(local_invocation_index) tid: u32)`); both are uniform across the workgroup.
struct Grid { @builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32> }

fn launch_item(wg: vec3<u32>, nwg: vec3<u32>) -> vec3<u32> {
  let heads = nwg.y * nwg.z;                           // (head, batch) pairs
  let G = min(P.head_group, heads);
  if (P.causal == 0u || G <= 1u) { return wg; }
  let lin = wg.x + nwg.x * (wg.y + nwg.y * wg.z);
  let g = lin / (G * nwg.x);                           // the group, of G heads (the last may have fewer)
  let in_g = min(G, heads - g * G);
  let r = lin - g * G * nwg.x;
  let hb = g * G + r % in_g;
  return vec3<u32>(r / in_g, hb % nwg.y, hb / nwg.y);
}

// The query row block a workgroup owns (grid: x blocks of `rows` query rows from P.q_blk0 on, y
// query heads, z batch; launch_item), heavy-first under a causal mask (the last blocks see the
// most keys, so they start first, as FlashAttention-2 orders them), with the first row of its
// query head in Q/O/LSE and of its K/V head (grouped-query: Hq/Hkv query heads per K/V head).
struct RowBlock { i0: u32, q_row0: u32, kv_row0: u32 }
fn row_block(g: Grid, rows: u32) -> RowBlock {
  let wg = launch_item(g.wg, g.nwg);
  let b = wg.z;
  let hq = wg.y;
  let blk = P.q_blk0 + select(wg.x, g.nwg.x - 1u - wg.x, P.causal != 0u);
  let hk = hq / (P.Hq / P.Hkv);
  return RowBlock(blk * rows, (b * P.Hq + hq) * P.Nq, (b * P.Hkv + hk) * P.Nk);
}

// The key block a dK/dV workgroup owns (grid: x blocks of `rows` keys from P.k_blk0 on, y K/V
// heads, z batch; launch_item: under causal the first key blocks, seen by the most rows, start
// first), with the first row of its K/V head in K/V/dK/dV and of the first query head of its
// group (query head g of the group, g < Hq/Hkv, starts at q_row0 + g·Nq).
struct KeyBlock { j0: u32, kv_row0: u32, q_row0: u32 }
fn key_block(g: Grid, rows: u32) -> KeyBlock {
  let wg = launch_item(g.wg, g.nwg);
  let b = wg.z;
  let hk = wg.y;
  return KeyBlock((P.k_blk0 + wg.x) * rows, (b * P.Hkv + hk) * P.Nk, (b * P.Hq + hk * (P.Hq / P.Hkv)) * P.Nq);
}

// Which gradient a backward kernel's write-back writes (store_rows, write_block).
const GRAD_DQ = 0u;
const GRAD_DK = 1u;
const GRAD_DV = 2u;

fn pos_q(i: u32) -> i32 { return P.q_off + i32(i) * P.q_stride + select(0, P.q_jump, i >= P.q_split); }

// Keys of a run at offsets below d from its first key's position (stride k_stride): ceil(d /
// k_stride), none for d <= 0. Stride 1 (every call but a striped shard's) divides nothing: a
// division by a uniform value costs tens of instructions, and the kernels' loops once asked for
// key ranges per tile and per entry (bench/results/2026-12-03-mask-cost-h200: such mask work cost
// the tensor-core forward 10% at 0fbccf0; the loops now take what they need once per block).
fn run_keys_below(d: i32) -> u32 {
  if (d <= 0) { return 0u; }
  if (P.k_stride == 1) { return u32(d); }
  return u32((d + P.k_stride - 1) / P.k_stride);
}

// Keys (of Nk) at position x or later: the first such index; positions increase, one test per run.
fn keys_before(x: i32) -> u32 {
  var j = run_keys_below(x - P.k_off);
  if (P.k_jump > 0 && j >= P.k_split) { j = max(P.k_split, run_keys_below(x - P.k_off - P.k_jump)); }
  return min(P.Nk, j);
}

// Keys (of Nk) at position y or before: the index of the first key after y (positions are integers).
fn keys_through(y: i32) -> u32 { return keys_before(y + 1); }

const POS_MAX: i32 = 0x20000000;   // positions and window sizes stay below it (i32 arithmetic)
const TILE_SKIP: u32 = 0u;
const TILE_FULL: u32 = 1u;
const TILE_PARTIAL: u32 = 2u;

// Largest document d < n_docs of the cumulative lengths at cu[base..] with cu[base + d] <= p.
fn doc_of(base: u32, p: i32) -> u32 {
  var lo = 0u;
  var hi = P.n_docs - 1u;
  loop {
    if (lo >= hi) { break; }
    let mid = (lo + hi + 1u) / 2u;
    if (cu[base + mid] <= p) { lo = mid; } else { hi = mid - 1u; }
  }
  return lo;
}

// Key positions query i may see: [x, y] inclusive (x > y: none). The rules (src/mask.ts):
//   documents  keys of the query's document d only; pq' = pq + cuK[d+1] − cuQ[d+1] (bottom-right)
//   causal     pk <= pq'
//   window     pq' − left <= pk <= pq' + right   (−1: that side unbounded)
fn pos_bounds(i: u32) -> vec2<i32> {
  var pq = pos_q(i);
  var b = vec2<i32>(-POS_MAX, POS_MAX);
  if (P.n_docs > 0u) {
    let d = doc_of(0u, pq);
    let kb = P.n_docs + 1u;
    let k_end = cu[kb + d + 1u];
    pq += k_end - cu[d + 1u];
    b = vec2<i32>(cu[kb + d], k_end - 1);
  }
  if (P.causal != 0u) { b.y = min(b.y, pq); }
  if (P.win_left >= 0) { b.x = max(b.x, pq - P.win_left); }
  if (P.win_right >= 0) { b.y = min(b.y, pq + P.win_right); }
  return b;
}

// Keys query i sees: indices [lo, hi) (lo = hi: none; rows at or past Nq see none). Both ends
// never decrease as i grows, so a tile's first and last rows bound every row of it.
fn key_range(i: u32) -> vec2<u32> {
  if (i >= P.Nq) { return vec2<u32>(P.Nk); }
  let b = pos_bounds(i);
  let lo = keys_before(b.x);
  return vec2<u32>(lo, max(lo, keys_through(b.y)));
}

// Key j is among the keys r = key_range(i) of a row (kernels that test many keys of one row
// compute r once).
fn in_keys(r: vec2<u32>, j: u32) -> bool { return j >= r.x && j < r.y; }

// Key j is visible to query i: the per-entry form, which no kernel loop calls any more (they take a
// row's or a key's range once: in_keys); test/mask-helpers.test.ts checks theirs against it.
fn visible(i: u32, j: u32) -> bool { return in_keys(key_range(i), j); }

// The key ranges of the first and last rows of [i0, i1) below Nq (any = false: no such row):
// both ends of a row's keys never decrease as the row grows, so they bound every row between.
// What tile_class reads; a kernel that classifies many tiles against the same rows takes them
// once (row_keys) and classifies each tile with class_of.
struct RowKeys { first: vec2<u32>, last: vec2<u32>, any: bool }
fn row_keys(i0: u32, i1: u32) -> RowKeys {
  let last = min(i1, P.Nq);
  if (last <= i0) { return RowKeys(vec2<u32>(), vec2<u32>(), false); }
  return RowKeys(key_range(i0), key_range(last - 1u), true);
}

// Rows against keys [j0, j1): skip when no row's range meets the keys, full when every row
// (below Nq) sees every key (keys past Nk are never visible), else partial.
fn class_of(r: RowKeys, j0: u32, j1: u32) -> u32 {
  if (!r.any || r.last.y <= j0 || r.first.x >= j1) { return TILE_SKIP; }
  if (r.last.x <= j0 && r.first.y >= j1) { return TILE_FULL; }
  return TILE_PARTIAL;
}

// Rows [i0, i1) against keys [j0, j1) (class_of).
fn tile_class(i0: u32, i1: u32, j0: u32, j1: u32) -> u32 { return class_of(row_keys(i0, i1), j0, j1); }

// Keys every row of [i0, i1) below Nq sees: [x, y) = [the last row's first key, the first row's
// last key + 1); (Nk, 0) when no row is below Nq. Two registers where a loop keeps them.
fn shared_keys(i0: u32, i1: u32) -> vec2<u32> {
  let r = row_keys(i0, i1);
  return select(vec2<u32>(P.Nk, 0u), vec2<u32>(r.last.x, r.first.y), r.any);
}

// Every row of the block sees every key of [j0, j1) (class_of's TILE_FULL): s = shared_keys.
fn all_see(s: vec2<u32>, j0: u32, j1: u32) -> bool { return j0 >= s.x && j1 <= s.y; }

// The first row at or after `start` (of Nq; Nq if none) whose keys end at or after x
// (key_range(i).y >= x; `ends`) or whose first key is at or after x (key_range(i).x >= x): a binary
// search, both ends of a row's keys never decreasing as the row grows.
fn first_row(x: u32, start: u32, ends: bool) -> u32 {
  var a = start;
  var n = P.Nq;
  loop {
    if (a >= n) { break; }
    let mid = (a + n) / 2u;
    let r = key_range(mid);
    if (select(r.x, r.y, ends) >= x) { n = mid; } else { a = mid + 1u; }
  }
  return a;
}

// Rows that may see a key of [j0, j1): [first row with hi > j0, first row with lo >= j1).
fn query_span(j0: u32, j1: u32) -> vec2<u32> {
  let a = first_row(j0 + 1u, 0u, true);
  return vec2<u32>(a, first_row(j1, a, false));
}

// Rows that see every key of [j0, j1): [first row with hi >= j1, first row with lo > j0); a
// tile of rows (below Nq) inside it is full against these keys (tile_class).
fn rows_seeing_all(j0: u32, j1: u32) -> vec2<u32> {
  let a = first_row(j1, 0u, true);
  return vec2<u32>(a, max(a, first_row(j0 + 1u, a, false)));
}

fn neg_inf() -> f32 {
  var bits = 0xff800000u; // a runtime value: -inf is not a valid WGSL constant
  return bitcast<f32>(bits);
}

// nan_f32() and is_nan(): nonfinite.wgsl, appended to this header (src/kernels/shaders.ts).

// The exact merge of two partial results over disjoint key sets (the ring's update_out_and_lse),
// row by row, in f32: the forward of a ring step merges its rows into the accumulated (O, LSE)
// (P.accumulate, src/cp/schemes/chunks.ts):
//   LSE = log(exp(a) + exp(b)) = hi + log(1 + exp(lo − hi)),   O = σ(a − b)·O_a + σ(b − a)·O_b,
// written so that no exp overflows; a is the accumulated row's LSE, b the new one's. Returns the
// weights and the LSE, (w_a, w_b, LSE), which merged() applies to each element of O. Non-finite
// values follow the reference (IEEE arithmetic of the untiled softmax, src/reference/attention.ts):
//   - a NaN LSE on either side (a NaN or +inf score in that key set): the row's O and LSE are NaN;
//   - a side without mass adds nothing but its NaN elements (merged()): LSE = −inf, no visible key
//     (its O is 0), or LSE = +inf, visible keys whose scores are all −inf (P.partial: its O holds
//     the undivided sums, 0 · V: 0, or NaN where a V was NaN or ±inf, as the reference's). The
//     row keeps the other side's LSE and O; two such give LSE = max(a, b) (+inf where either had
//     visible keys) and O_a + O_b. A finite LSE always carries mass, however negative. After the
//     ring's last step a row still at +inf becomes NaN, as the untiled softmax's 0/0 (merge.wgsl
//     finalize).
fn lse_merge(a: f32, b: f32) -> vec3<f32> {
  if (is_nan(a) || is_nan(b)) {
    let n = nan_f32();
    return vec3<f32>(n, n, n);
  }
  if (is_inf(b)) {   // nothing new for this row
    if (is_inf(a)) { return vec3<f32>(1.0, 1.0, max(a, b)); }
    return vec3<f32>(1.0, 0.0, a);
  }
  if (is_inf(a)) { return vec3<f32>(0.0, 1.0, b); }   // nothing accumulated yet
  let hi = max(a, b);
  let e = exp(min(a, b) - hi);   // in (0, 1]
  let w_hi = 1.0 / (1.0 + e);    // σ(hi − lo)
  let w_lo = e * w_hi;           // σ(lo − hi)
  let lse = hi + log(1.0 + e);
  if (a >= b) { return vec3<f32>(w_hi, w_lo, lse); }
  return vec3<f32>(w_lo, w_hi, lse);
}

// A row whose visible scores are all −inf (ℓ = 0): its LSE and what O's sums are multiplied by.
// A whole call gives what the untiled softmax does, 0/0: LSE = NaN and O = NaN. A ring step
// (P.partial) gives a partial without mass: LSE = +inf and O = the undivided sums (0 · V: 0, or NaN
// where a V is NaN or ±inf), which lse_merge folds in and merge.wgsl finalize turns into NaN if no
// other step of the ring gives the row mass.
fn no_mass_lse() -> f32 { return select(nan_f32(), pos_inf(), P.partial != 0u); }

// 1/ℓ for O = acc/ℓ, and for ℓ = 0 (above) NaN or, in a ring step, 1.
fn inv_l(l: f32) -> f32 {
  if (l == 0.0) { return select(nan_f32(), 1.0, P.partial != 0u); }
  return 1.0 / l;
}

// An element of the merged O: w_a·x_a + w_b·x_b, NaN where either element is (kept even where
// its weight is 0) or the row is (NaN weights; by bits, as everywhere here, not left to the
// arithmetic alone).
fn merged(w: vec3<f32>, xa: f32, xb: f32) -> f32 {
  return select(w.x * xa + w.y * xb, nan_f32(), is_nan(xa) || is_nan(xb) || is_nan(w.x));
}

fn merged4(w: vec3<f32>, xa: vec4<f32>, xb: vec4<f32>) -> vec4<f32> {
  return vec4<f32>(merged(w, xa.x, xb.x), merged(w, xa.y, xb.y), merged(w, xa.z, xb.z), merged(w, xa.w, xb.w));
}

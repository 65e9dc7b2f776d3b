// FlashAttention-2 forward on subgroup matrices (tensor cores through
// chromium_experimental_subgroup_matrix): f16 Q, K, V; f32 accumulation and softmax.
//
// Work split (FlashAttention-2): a workgroup of SG = WG/32 subgroups owns Br = 16·SG query rows;
// subgroup s owns rows 16s..16s+15 and keeps them in registers for the whole kernel: its Q block
// as left matrices and its O accumulator as result matrices. The SG subgroups share each K/V
// tile of Bc rows in workgroup memory; the next tile is fetched into registers (16-byte loads)
// while the current one is used. Matrix offsets differ per subgroup (uniform within it), so the
// module turns off Chromium's workgroup-uniformity check for subgroup matrices; the adapter must
// run subgroups of exactly 32 (checked by the host).
//
// Operand and accumulator blocks are separate variables (q0…, o0…, unrolled by the specializer),
// so each stays in registers whatever the driver does with arrays of matrices.
// Per K/V tile, for each subgroup's 16 rows:
//   S = Q Kᵀ                           (f32, to the subgroup's 16×Bc block of workgroup memory)
//   two lanes per row read it back (skewed columns: no bank conflicts) and compute
//   m_tile = rowmax(S·scale·log2 e);   m is only raised when m_tile > m + TH (TH = 8, i.e. ×256):
//   otherwise the stale m is kept, P ≤ 2^8 stays exact in f16, and O needs no rescaling.
//   When some row of the workgroup does raise m, all subgroups spill O to workgroup memory,
//   scale the raised rows by α = exp2(m_old − m_new) and reload (rare after the first tiles).
//   P = exp2(S·scale·log2 e − m)  (f16),   ℓ = α·ℓ + rowsum(P)
//   O += P V                           (matrix multiply-accumulate into the register accumulator)
// Finally O /= ℓ and LSE = (m + log2 ℓ)·ln 2. Masked entries get P = 0; a row with no visible
// key keeps ℓ = 0 and gets O = 0, LSE = −inf.
// Dispatch: (ceil(Nq / Br), Hq, B); workgroup size WG = 32·SG.

@group(0) @binding(1) var<storage, read> q: array<vec4<u32>>;   // f16 data, 8 halves per element
@group(0) @binding(2) var<storage, read> k: array<vec4<u32>>;
@group(0) @binding(3) var<storage, read> v: array<vec4<u32>>;
@group(0) @binding(4) var<storage, read_write> o: array<OT>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

alias LM = subgroup_matrix_left<f16, 16, 16>;
alias RM = subgroup_matrix_right<f16, 16, 16>;
alias AM = subgroup_matrix_result<f32, 16, 16>;
const SG: u32 = WG / 32u;      // subgroups per workgroup (BR = 16·SG)
const CB: u32 = BC / 16u;      // 16-wide blocks of the key tile
const HALF: u32 = BC / 2u;     // score columns per lane (two lanes per row)
const D8: u32 = D / 8u;        // 16-byte words per row
const KROWS: u32 = max(BC, BR);  // Ks also stages the Q tile
const TH: f32 = 8.0;

var<workgroup> Ks: array<f16, KROWS * D>;
var<workgroup> Vs: array<f16, BC * D>;
var<workgroup> S: array<f32, BR * BC>;     // per subgroup a 16×Bc block: scores, O spills
var<workgroup> Pm: array<f16, BR * BC>;    // per subgroup a 16×Bc block: P
var<workgroup> l_s: array<f32, BR>;
// Every workgroup variable is a multiple of 16 bytes: on the NVIDIA Vulkan driver a matrix
// load or store from an array that is not 16-byte aligned reads or writes the wrong elements
// (a 4-byte atomic here once shifted Ks by a row). Only element 0 of these two is used.
var<workgroup> vote: array<atomic<u32>, 4>;
var<workgroup> vote_u: vec4<u32>;

const KV8: u32 = BC * D8;                  // 16-byte words of a K (or V) tile
const LPT: u32 = (KV8 + WG - 1u) / WG;     // of them per invocation
var<private> kr: array<vec4<u32>, LPT>;
var<private> vr: array<vec4<u32>, LPT>;

fn put8(e: u32, w: vec4<u32>, into_v: bool) {
  let a = bitcast<vec2<f16>>(w.x);
  let b = bitcast<vec2<f16>>(w.y);
  let c = bitcast<vec2<f16>>(w.z);
  let d = bitcast<vec2<f16>>(w.w);
  let at = e * 8u;
  if (into_v) {
    Vs[at] = a.x; Vs[at + 1u] = a.y; Vs[at + 2u] = b.x; Vs[at + 3u] = b.y;
    Vs[at + 4u] = c.x; Vs[at + 5u] = c.y; Vs[at + 6u] = d.x; Vs[at + 7u] = d.y;
  } else {
    Ks[at] = a.x; Ks[at + 1u] = a.y; Ks[at + 2u] = b.x; Ks[at + 3u] = b.y;
    Ks[at + 4u] = c.x; Ks[at + 5u] = c.y; Ks[at + 6u] = d.x; Ks[at + 7u] = d.y;
  }
}

// Global → registers: the K/V tile starting at key j0 (zeros past Nk).
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

// Registers → workgroup memory.
fn stash_kv(tid: u32) {
  for (var t = 0u; t < LPT; t++) {
    let e = tid + t * WG;
    if (e < KV8) {
      put8(e, kr[t], false);
      put8(e, vr[t], true);
    }
  }
}

// Lane (r, h) scales half a row (8 of 16 columns) of a spilled 16×16 block: O·α.
fn scale_block_row(at: u32, a: f32) {
  for (var c = 0u; c < 8u; c++) { S[at + c] *= a; }
}

// Writes block `db` (columns 16·db…) of O/ℓ for rows i_first… from the 16×16 spill at `blk`.
fn write_o_block(q_row0: u32, i_first: u32, l_first: u32, blk: u32, lane: u32, db: u32) {
  for (var e = lane; e < 256u; e += 32u) {
    let rr = e / 16u;
    let cc = e % 16u;
    let ii = i_first + rr;
    if (ii < P.Nq) {
      let ll = l_s[l_first + rr];
      var inv = 0.0;
      if (ll > 0.0) { inv = 1.0 / ll; }
      o[(q_row0 + ii) * D + db * 16u + cc] = OT(S[blk + rr * BC + cc] * inv);
    }
  }
}

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
        @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hq = wg.y;
  // Last row block first: under causal masking it has the most keys, and starting the longest
  // workgroups first shortens the tail (FlashAttention-2 orders its blocks the same way).
  let i0 = (nwg.x - 1u - wg.x) * BR;
  let hk = hq / (P.Hq / P.Hkv);
  let q_row0 = (b * P.Hq + hq) * P.Nq;
  let kv8 = (b * P.Hkv + hk) * P.Nk * D8;
  let sg = tid / 32u;
  let lane = tid % 32u;
  let r = lane / 2u;                  // this lane's row within the subgroup's 16
  let h = lane % 2u;                  // and which half of the tile's columns it reads
  let blk = sg * 16u * BC;            // the subgroup's block in S and Pm
  let i = i0 + sg * 16u + r;          // this lane's query row

  // Q tile through Ks (zeros past Nq), then each subgroup's 16 rows into registers.
  for (var e = tid; e < BR * D8; e += WG) {
    var w = vec4<u32>();
    if (i0 + e / D8 < P.Nq) { w = q[(q_row0 + i0) * D8 + e]; }
    put8(e, w, false);
  }
  if (tid == 0u) { atomicStore(&vote[0], 0u); }
  workgroupBarrier();
  // Registers (one variable per 16×16 block, unrolled by the specializer): the Q block
  // q0…, and the O accumulator o0… of the subgroup's 16 rows.
  let qa = sg * 16u * D;
  {{#for kk < D/16}}let q{{kk}} = subgroupMatrixLoad<LM, row_major>(&Ks, qa + {{kk}}u * 16u, D);
  {{/for}}
  {{#for db < D/16}}var o{{db}} = AM();
  {{/for}}
  var m = NEG_BIG;                    // running max (exp2 domain) of this lane's row
  var l = 0.0;                        // ℓ: running sum of P
  var alpha = 1.0;

  let n_end = key_end(min(i0 + BR, P.Nq) - 1u);
  fetch_kv(kv8, 0u, tid);
  for (var j0 = 0u; j0 < n_end; j0 += BC) {
    workgroupBarrier();               // everyone is done with the previous tile (and with Q)
    stash_kv(tid);
    workgroupBarrier();
    if (j0 + BC < n_end) { fetch_kv(kv8, j0 + BC, tid); }

    // S = Q Kᵀ for the subgroup's 16 rows.
    for (var cb = 0u; cb < CB; cb++) {
      let kb = cb * 16u * D;
      var acc = AM();
      {{#for kk < D/16}}acc = subgroupMatrixMultiplyAccumulate(q{{kk}}, subgroupMatrixLoad<RM, col_major>(&Ks, kb + {{kk}}u * 16u, D), acc);
      {{/for}}
      subgroupMatrixStore<row_major>(&S, blk + cb * 16u, acc, BC);
    }
    workgroupBarrier();

    // Online softmax: lane (r, h) reads columns h·Bc/2 + (c + lane) mod Bc/2.
    let full = j0 + BC <= P.Nk && (P.causal == 0u || pos_k(j0 + BC - 1u) <= pos_q(i0));
    let row_at = blk + r * BC + h * HALF;
    var mt = NEG_BIG;
    for (var c = 0u; c < HALF; c++) {
      let col = (c + lane) % HALF;
      let jc = j0 + h * HALF + col;
      if (full || visible(i, jc)) { mt = max(mt, S[row_at + col] * P.scale_log2); }
    }
    mt = max(mt, subgroupShuffleXor(mt, 1u));
    alpha = 1.0;
    if (mt > m + TH) {
      if (m > NEG_HALF) {
        alpha = exp2(m - mt);
        atomicStore(&vote[0], 1u);
      }
      m = mt;
    }
    var sum = 0.0;
    for (var c = 0u; c < HALF; c++) {
      let col = (c + lane) % HALF;
      let jc = j0 + h * HALF + col;
      var p = 0.0;
      if (full || visible(i, jc)) { p = exp2(S[row_at + col] * P.scale_log2 - m); }
      Pm[row_at + col] = f16(p);
      sum += p;
    }
    sum += subgroupShuffleXor(sum, 1u);
    l = alpha * l + sum;
    workgroupBarrier();
    if (tid == 0u) { vote_u = vec4<u32>(atomicLoad(&vote[0])); atomicStore(&vote[0], 0u); }
    if (workgroupUniformLoad(&vote_u).x != 0u) {
      // Some row raised its max: rescale O one 16×16 block at a time, spilled through S.
      {{#for db < D/16}}subgroupMatrixStore<row_major>(&S, blk, o{{db}}, BC);
      workgroupBarrier();
      scale_block_row(blk + r * BC + h * 8u, alpha);
      workgroupBarrier();
      o{{db}} = subgroupMatrixLoad<AM, row_major>(&S, blk, BC);
      workgroupBarrier();
      {{/for}}
    }

    // O += P V
    for (var cb = 0u; cb < CB; cb++) {
      let pm = subgroupMatrixLoad<LM, row_major>(&Pm, blk + cb * 16u, BC);
      let vb = cb * 16u * D;
      {{#for db < D/16}}o{{db}} = subgroupMatrixMultiplyAccumulate(pm, subgroupMatrixLoad<RM, row_major>(&Vs, vb + {{db}}u * 16u, D), o{{db}});
      {{/for}}
    }
  }

  // O / ℓ, one 16×16 block at a time through S; rows past Nq are not written.
  if (h == 0u) { l_s[sg * 16u + r] = l; }
  {{#for db < D/16}}workgroupBarrier();
  subgroupMatrixStore<row_major>(&S, blk, o{{db}}, BC);
  workgroupBarrier();
  write_o_block(q_row0, i0 + sg * 16u, sg * 16u, blk, lane, {{db}}u);
  {{/for}}
  if (h == 0u && i < P.Nq) {
    var out = neg_inf();
    if (l > 0.0) { out = (m + log2(l)) * LN2; }
    lse[q_row0 + i] = out;
  }
}

// FlashAttention-2 forward on subgroup matrices (tensor cores through
// chromium_experimental_subgroup_matrix): f16 Q, K, V; f32 accumulation and softmax.
// One subgroup (32 invocations) per workgroup, looping over the Br/16 row blocks of its tile:
// matrix offsets must be uniform across the workgroup, so they may not depend on a subgroup
// index. Per K/V tile of Bc rows:
//   S = Q Kᵀ                    16×16×16 f16 → f32 matrix multiply-accumulate, into workgroup memory
//   m_new = max(m, rowmax(S·scale·log2 e)),  P = exp2(S·scale·log2 e − m_new)  (f16, elementwise)
//   O = exp2(m − m_new) · O      (elementwise on the f32 accumulator in workgroup memory)
//   O += P V                     matrix multiply-accumulate on the accumulator tiles
// Finally O /= ℓ and LSE = (m + log2 ℓ)·ln 2. Masked entries and rows as in flash_fwd.wgsl.
// Dispatch: (ceil(Nq / Br), Hq, B); workgroup size 32.

@group(0) @binding(1) var<storage, read> q: array<ST>;
@group(0) @binding(2) var<storage, read> k: array<ST>;
@group(0) @binding(3) var<storage, read> v: array<ST>;
@group(0) @binding(4) var<storage, read_write> o: array<OT>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

alias LM = subgroup_matrix_left<f16, 16, 16>;
alias RM = subgroup_matrix_right<f16, 16, 16>;
alias AM = subgroup_matrix_result<f32, 16, 16>;
const RB: u32 = BR / 16u;    // 16-row blocks of the query tile
const DB: u32 = D / 16u;     // 16-wide blocks of the head dim
const CB: u32 = BC / 16u;    // 16-wide blocks of the key tile

var<workgroup> Qs: array<f16, BR * D>;
var<workgroup> Ks: array<f16, BC * D>;
var<workgroup> Vs: array<f16, BC * D>;
var<workgroup> S: array<f32, BR * BC>;     // scores of the tile
var<workgroup> Pm: array<f16, BR * BC>;    // probabilities P (f16 operand of P V)
var<workgroup> Os: array<f32, BR * D>;     // O accumulator
var<workgroup> m_s: array<f32, BR>;
var<workgroup> l_s: array<f32, BR>;
var<workgroup> alpha_s: array<f32, BR>;

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hq = wg.y;
  let i0 = wg.x * BR;
  let hk = hq / (P.Hq / P.Hkv);
  let q_base = (b * P.Hq + hq) * P.Nq * D;
  let kv_base = (b * P.Hkv + hk) * P.Nk * D;
  for (var e = tid; e < BR * D; e += WG) {
    var x = f16(0.0);
    if (i0 + e / D < P.Nq) { x = f16(q[q_base + i0 * D + e]); }
    Qs[e] = x;
    Os[e] = 0.0;
  }
  for (var r = tid; r < BR; r += WG) {
    m_s[r] = NEG_BIG;
    l_s[r] = 0.0;
  }
  workgroupBarrier();
  let n_end = key_end(min(i0 + BR, P.Nq) - 1u);

  for (var j0 = 0u; j0 < n_end; j0 += BC) {
    for (var e = tid; e < BC * D; e += WG) {
      var kx = f16(0.0);
      var vx = f16(0.0);
      if (j0 + e / D < P.Nk) {
        kx = f16(k[kv_base + j0 * D + e]);
        vx = f16(v[kv_base + j0 * D + e]);
      }
      Ks[e] = kx;
      Vs[e] = vx;
    }
    workgroupBarrier();

    // S = Q Kᵀ, one 16×16 block at a time.
    for (var rb = 0u; rb < RB; rb++) {
      for (var cb = 0u; cb < CB; cb++) {
        var acc = AM();
        for (var kk = 0u; kk < DB; kk++) {
          let qm = subgroupMatrixLoad<LM, row_major>(&Qs, rb * 16u * D + kk * 16u, D);
          let km = subgroupMatrixLoad<RM, col_major>(&Ks, cb * 16u * D + kk * 16u, D);
          acc = subgroupMatrixMultiplyAccumulate(qm, km, acc);
        }
        subgroupMatrixStore<row_major>(&S, rb * 16u * BC + cb * 16u, acc, BC);
      }
    }
    workgroupBarrier();

    // Online softmax, one invocation per row.
    for (var r = tid; r < BR; r += WG) {
      let m_old = m_s[r];
      var m_new = m_old;
      for (var c = 0u; c < BC; c++) {
        if (visible(i0 + r, j0 + c)) { m_new = max(m_new, S[r * BC + c] * P.scale_log2); }
      }
      let live = m_new > NEG_HALF;
      var sum = 0.0;
      for (var c = 0u; c < BC; c++) {
        var p = 0.0;
        if (live && visible(i0 + r, j0 + c)) { p = exp2(S[r * BC + c] * P.scale_log2 - m_new); }
        Pm[r * BC + c] = f16(p);
        sum += p;
      }
      var alpha = 1.0;
      if (live) { alpha = exp2(m_old - m_new); }
      alpha_s[r] = alpha;
      l_s[r] = alpha * l_s[r] + sum;
      m_s[r] = m_new;
    }
    workgroupBarrier();
    for (var e = tid; e < BR * D; e += WG) { Os[e] *= alpha_s[e / D]; }
    workgroupBarrier();

    // O += P V
    for (var rb = 0u; rb < RB; rb++) {
      for (var db = 0u; db < DB; db++) {
        var acc = subgroupMatrixLoad<AM, row_major>(&Os, rb * 16u * D + db * 16u, D);
        for (var cb = 0u; cb < CB; cb++) {
          let pm = subgroupMatrixLoad<LM, row_major>(&Pm, rb * 16u * BC + cb * 16u, BC);
          let vm = subgroupMatrixLoad<RM, row_major>(&Vs, cb * 16u * D + db * 16u, D);
          acc = subgroupMatrixMultiplyAccumulate(pm, vm, acc);
        }
        subgroupMatrixStore<row_major>(&Os, rb * 16u * D + db * 16u, acc, D);
      }
    }
    workgroupBarrier();
  }

  for (var e = tid; e < BR * D; e += WG) {
    let r = e / D;
    let i = i0 + r;
    if (i < P.Nq) {
      let l = l_s[r];
      var inv = 0.0;
      if (l > 0.0) { inv = 1.0 / l; }
      o[q_base + i0 * D + e] = OT(Os[e] * inv);
    }
  }
  for (var r = tid; r < BR && i0 + r < P.Nq; r += WG) {
    let l = l_s[r];
    var out = neg_inf();
    if (l > 0.0) { out = (m_s[r] + log2(l)) * LN2; }
    lse[(b * P.Hq + hq) * P.Nq + i0 + r] = out;
  }
}

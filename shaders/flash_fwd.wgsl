// FlashAttention-2 forward (portable path: scalar f32 math, f32 or f16 storage).
// One workgroup owns Br query rows of one (batch, head) and streams K/V tiles of Bc rows
// through workgroup memory, keeping per row the running max m and sum ℓ (exp2 domain):
//   S = scale·log2(e) · Q Kᵀ              (masked: NEG_BIG)
//   m_new = max(m, rowmax(S)),  P~ = exp2(S − m_new)
//   ℓ = exp2(m − m_new)·ℓ + rowsum(P~),  acc = exp2(m − m_new)·acc + P~ V
// and finally O = acc / ℓ, LSE = (m + log2 ℓ)·ln 2 (natural log). No visible key: O = 0, LSE = −inf.
// Dispatch: (ceil(Nq / Br), Hq, B).

@group(0) @binding(1) var<storage, read> q: array<ST>;
@group(0) @binding(2) var<storage, read> k: array<ST>;
@group(0) @binding(3) var<storage, read> v: array<ST>;
@group(0) @binding(4) var<storage, read_write> o: array<OT>;
@group(0) @binding(5) var<storage, read_write> lse: array<f32>;

const TPR: u32 = WG / BR;               // invocations per query row in the P~V product
const DPT: u32 = (D + TPR - 1u) / TPR;  // head-dim columns accumulated by each invocation

var<workgroup> Qs: array<ST, BR * D>;
var<workgroup> Ks: array<ST, BC * D>;
var<workgroup> Vs: array<ST, BC * D>;
var<workgroup> S: array<f32, BR * BC>;    // scores, then P~
var<workgroup> m_s: array<f32, BR>;       // m: running row max (exp2 domain)
var<workgroup> l_s: array<f32, BR>;       // ℓ: running row sum
var<workgroup> alpha_s: array<f32, BR>;   // exp2(m_old − m_new)

@compute @workgroup_size(WG)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) tid: u32) {
  let b = wg.z;
  let hq = wg.y;
  let i0 = wg.x * BR;
  let hk = hq / (P.Hq / P.Hkv);
  let q_base = (b * P.Hq + hq) * P.Nq * D;
  let kv_base = (b * P.Hkv + hk) * P.Nk * D;

  for (var e = tid; e < rt(BR * D); e += WG) {
    let i = i0 + e / D;
    var x = ST(0.0);
    if (i < P.Nq) { x = q[q_base + i0 * D + e]; }
    Qs[e] = x;
  }
  if (tid < BR) {
    m_s[tid] = NEG_BIG;
    l_s[tid] = 0.0;
  }
  let r_own = tid / TPR;
  let t_own = tid % TPR;
  var acc = array<f32, DPT>();
  let n_end = key_end(min(i0 + BR, P.Nq) - 1u);
  workgroupBarrier();

  for (var j0 = 0u; j0 < n_end; j0 += BC) {
    for (var e = tid; e < rt(BC * D); e += WG) {
      let j = j0 + e / D;
      var kx = ST(0.0);
      var vx = ST(0.0);
      if (j < P.Nk) {
        kx = k[kv_base + j0 * D + e];
        vx = v[kv_base + j0 * D + e];
      }
      Ks[e] = kx;
      Vs[e] = vx;
    }
    workgroupBarrier();

    // S = scale·log2(e) · Q Kᵀ on this tile, masked entries NEG_BIG.
    for (var e = tid; e < rt(BR * BC); e += WG) {
      let r = e / BC;
      let c = e % BC;
      var s = NEG_BIG;
      if (visible(i0 + r, j0 + c)) {
        var dot = 0.0;
        for (var d = 0u; d < rt(D); d++) { dot += f32(Qs[r * D + d]) * f32(Ks[c * D + d]); }
        s = dot * P.scale_log2;
      }
      S[e] = s;
    }
    workgroupBarrier();

    // Online softmax, one invocation per row.
    if (tid < BR) {
      let m_old = m_s[tid];
      var m_new = m_old;
      for (var c = 0u; c < rt(BC); c++) { m_new = max(m_new, S[tid * BC + c]); }
      let live = m_new > NEG_HALF;   // at least one visible key so far
      var sum = 0.0;
      for (var c = 0u; c < rt(BC); c++) {
        let s = S[tid * BC + c];
        var p = 0.0;
        if (live && s > NEG_HALF) { p = exp2(s - m_new); }
        S[tid * BC + c] = p;
        sum += p;
      }
      var alpha = 1.0;
      if (live) { alpha = exp2(m_old - m_new); }
      alpha_s[tid] = alpha;
      l_s[tid] = alpha * l_s[tid] + sum;
      m_s[tid] = m_new;
    }
    workgroupBarrier();

    // acc = alpha·acc + P~ V
    let alpha = alpha_s[r_own];
    for (var u = 0u; u < rt(DPT); u++) {
      let d = t_own + u * TPR;
      if (d < D) {
        var x = acc[u] * alpha;
        for (var c = 0u; c < rt(BC); c++) { x += S[r_own * BC + c] * f32(Vs[c * D + d]); }
        acc[u] = x;
      }
    }
    workgroupBarrier();
  }

  let i = i0 + r_own;
  if (i < P.Nq) {
    let l = l_s[r_own];
    var inv = 0.0;
    if (l > 0.0) { inv = 1.0 / l; }
    for (var u = 0u; u < rt(DPT); u++) {
      let d = t_own + u * TPR;
      if (d < D) { o[q_base + i * D + d] = OT(acc[u] * inv); }
    }
    if (t_own == 0u) {
      var out = neg_inf();
      if (l > 0.0) { out = (m_s[r_own] + log2(l)) * LN2; }
      lse[(b * P.Hq + hq) * P.Nq + i] = out;
    }
  }
}

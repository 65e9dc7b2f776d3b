"""Writes edits.json (text replacements; bench/apply-edits.py applies one variant) from the unified diffs here, each
git diff -U4 of the tree with the variant in it (ranges.patch, lanes.patch, ...): ranges, lanes, lanes2, nobar and noq
against 3f7baf3, abar and qearly against 4cd4140 (the same shaders), qg against 8a885bc (tiles.ts with f16's prefetch 1).
apply-edits.py stops where a hunk's old text no longer occurs exactly once.
  ranges  the rows' visible key ranges (klo, khi: 8 registers held through every tile) taken only where a tile is masked
          and at the end (row_ranges); full tiles skip the score mask (every key visible to every row below Nq).
          Bitwise the same O and LSE as the tree. Measured: 5.7–6.4% slower (../2026-12-07-lanes-h100).
  lanes   S in four lanes, forward (scores) and backward (blocks: S or Sᵀ; dP keeps its dot): a vec4 fma a word into
          sl[rr·4 + cc] (lane e the chain of the words' components e, in word order whatever the chunk), the lanes summed
          (l.x + l.y) + (l.z + l.w) once a tile, so that the backward's S is bitwise the forward's. 4 fma a word and
          score where dot() and an add took 5 issue slots; 48 more registers for the lanes. Not bitwise the tree: on
          lavapipe, test/backward.test.ts's inputs ×30 kernel / plain-f32 error 0.65–0.77 (worst 9.5e-1) against the tree's 0.75–0.79 (worst 1.02e+1); forward,
          backward, mask, NaN, extremes, f16 and f16-products tests pass (122 of 122 run).
  lanes2  as lanes with two lanes of vec2 fma (xy, then zw, a word; summed l.x + l.y), forward and backward: the same
          4 operations a word and score for 16 more registers instead of 48 (lanes, measured on an H100: the forward
          +8% at D = 64, flat at D = 128, the backward 3–5% slower with 255 registers and a spill at D = 128). On
          lavapipe the inputs ×30 ratio 0.83 (tree 0.75–0.79); forward, backward, extremes, mask, NaN, f16, f16-products, robust-spirv and shaders tests pass (130 of 130 run).
Two ablations, for timing only (their O and LSE are wrong: the bench's checkErr says so, and their copy of
src/bench/run.ts times them anyway: timed-anyway.patch): what the forward's latency between barriers costs at D = 128, where fewer registers and fewer operations did not help (lanes-h100):
  nobar   the forward's tile loop without its workgroup barriers (two a staging point, one before P~ where it shares
          Q's array): every invocation runs on without waiting for the others;
  noq     Q's chunks never staged in the tile loop where they are staged per tile with prefetch 2 (S reads whatever
          Q's array holds): the cost of loading Q's chunks again every tile.
Measured (../2026-12-07-ablate-h100): lanes2 within ±1% of the tree forward, backward 0.2–1.6% slower; nobar +8.8–9.8%,
noq +4.0–4.3% at D = 128. So two edits of the barriers and Q's loads, exact (bitwise the tree's O and LSE):
  abar    where P~ shares Q's array (QP), A(0) without its first barrier: the barrier before P~'s writes already saw
          every read of S's last chunk (K's included), so V's chunk 0 may be stashed and P~ written behind it, and
          A(0)'s second barrier makes both visible (one barrier of nine a tile at D = 128 f32);
  qearly  prefetch 2: Q's chunk c loaded into registers just before S(c)'s first barrier and stored after it, where it
          was loaded between the two barriers, so that its loads pass while the workgroup gathers (held only there,
          not through the products);
  bq      both.
Measured (../2026-12-07-bar-h100, one run each against the tree): abar −1.3% / −1.6%, qearly 0.0% / −0.1%, bq −0.1% /
−0.4% (within the run's spread); bq's forward tests passed on the GPU (29 of 29). None shipped. So the staging itself:
  qg      a pin, FLASHRING_PORTABLE_FWD_QG=1 (tuning forwardQGlobal, plan qGlobal, shader QG): Q never staged; S's loop
          reads each invocation's RR rows from global memory (the same rows every tile: L1 serves them; rows past Nq
          read as row Nq − 1, whose scores no one keeps). Workgroup memory holds only K/V and P~ (35,328 bytes at
          D = 128 in f32), so K/V in whole rows there: 4 barriers a tile where Q's 64-column chunks take 9, and no Q
          restaged (noq's +4.0–4.3%). Bitwise the tree's O and LSE (Q's and K's words reach S in the same order):
          test/forward.test.ts's new case on lavapipe, 6 cases (masks, windows, documents, GQA, Nq != Nk, prefetch
          0/1/2, f16 storage), passes. Not with f16 products (their scores_f16 stages Q; the pin is ignored there).
Measured (../2026-12-07-qg-h100, twice against the tree): qg −7.8% to −8.6% at D = 128, −3.8% to −5.7% at D = 64, the
same with robustness off; its forward tests passed on the GPU (30 of 30). Not shipped: each of S's products then waits
on an L1 load where workgroup memory served it."""
import json, pathlib, re

here = pathlib.Path(__file__).parent
# Each variant and the patches it applies, in order.
PATCHES = {'ranges': ['ranges'], 'lanes': ['lanes'], 'lanes2': ['lanes2'], 'nobar': ['nobar', 'timed-anyway'], 'noq': ['noq', 'timed-anyway'],
           'abar': ['abar'], 'qearly': ['qearly'], 'bq': ['abar', 'qearly'], 'qg': ['qg']}


def from_patch(patch):
    """Edits from a unified diff against HEAD's files: each hunk's old text (context and removed lines) and new text."""
    out = []
    for part in re.split(r'^diff --git ', patch, flags=re.M)[1:]:
        name = re.search(r'^\+\+\+ b/(.*)$', part, re.M).group(1)
        for hunk in re.split(r'^@@.*@@.*\n', part, flags=re.M)[1:]:
            old, new = [], []
            for line in hunk.splitlines(keepends=True):
                if line.startswith('\\'): continue
                if line[0] in ' -': old.append(line[1:])
                if line[0] in ' +': new.append(line[1:])
            out.append({'file': name, 'old': ''.join(old), 'new': ''.join(new)})
    return out


variants = {v: [e for name in names for e in from_patch((here / f'{name}.patch').read_text(encoding='utf-8'))] for v, names in PATCHES.items()}
(here / 'edits.json').write_text(json.dumps(variants, indent=1), encoding='utf-8')

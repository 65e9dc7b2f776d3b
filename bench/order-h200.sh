#!/usr/bin/env bash
# The launch order of causal grids (FLASHRING_HEAD_GROUP; launch_item in shaders/common.wgsl) on the
# GPU host, one call (215 s for two rounds on 2026-12-01: bench/results/order-h200-2026-12-01):
#   bash .gpu/enter.sh bash bench/order-h200.sh
# Each head group in HEAD_GROUPS ("1": head by head; "all", the default since 2026-12-01: every head's longest blocks
# first) runs, in ROUNDS rounds that alternate the groups' order (A B, B A, …: neither group always
# runs first), REPS timed repeats each:
#   1. the single-device kernels, causal, B1 H16, N in NS, D in DS, precision PREC (default f16;
#      node bin/flashring.mjs bench, which spot-checks each D against the float64 reference on a
#      small shape: the checkErr column);
#   2. the ring's zigzag steps beside plain calls of the same work, N = STEPS_N, R = 2, 4, 8
#      (node bench/cp-run.mjs steps; f16 whatever PREC says).
# The outputs are the same bit for bit under every group (test/launch-order.test.ts); only time
# changes. Logs and results under $OUT/order (or bench/out/order), emptied first; each run's
# folder holds head-group.txt. The table last: each group's fastest round, and in the kernels'
# table the ratio of its time to the first group's.
# KPATH=scalar runs the same on the portable kernels (and a dry run on a CPU adapter with small NS,
# DS, STEPS_N, e.g. NS=256 DS=16 STEPS_N=256 STEPS_ARGS="--H 2 --D 16 --reps 2").
set -uo pipefail
GROUPS_=${HEAD_GROUPS:-"1 all"}; ROUNDS=${ROUNDS:-2}; NS=${NS:-"4096 8192 16384"}; DS=${DS:-"64 128"}; REPS=${REPS:-5}
STEPS_N=${STEPS_N:-16384}; STEPS_ARGS=${STEPS_ARGS:-"--H 16 --D 128 --reps 10"}
PREC=${PREC:-f16}
out=${OUT:-bench/out}/order; rm -rf "$out"; mkdir -p "$out"   # no earlier run's files in the tables
export MESA_SHADER_CACHE_DISABLE=false
[ -n "${KPATH:-}" ] && export FLASHRING_PATH=$KPATH
for round in $(seq 1 "$ROUNDS"); do
  order=$GROUPS_; [ $((round % 2)) = 0 ] && order=$(echo $GROUPS_ | tr ' ' '\n' | tac | tr '\n' ' ')
  for g in $order; do
    for D in $DS; do
      tag="G$g-D$D-r$round"
      FLASHRING_HEAD_GROUP=$g node bin/flashring.mjs bench --N "${NS// /,}" --D "$D" --heads 16 --batch 1 --causal true \
        --precision "$PREC" --reps "$REPS" --no-ring --no-memory --out "$out/$tag" 2>&1 | grep -v '^Warning' > "$out/$tag.log"
      echo "FLASHRING_HEAD_GROUP=$g" > "$out/$tag/head-group.txt"
    done
    # shellcheck disable=SC2086
    FLASHRING_HEAD_GROUP=$g node bench/cp-run.mjs steps --N "$STEPS_N" $STEPS_ARGS --R 2,4,8 --out "$out/steps-G$g-r$round" 2>&1 \
      | grep -v '^Warning' > "$out/steps-G$g-r$round.log"
    echo "FLASHRING_HEAD_GROUP=$g" > "$out/steps-G$g-r$round/head-group.txt"
  done
done
python3 - "$out" "$GROUPS_" "$ROUNDS" "$NS" "$DS" <<'PY' | tee "$out/table.txt"
import csv, glob, json, os, sys
out, groups, rounds, ns, ds = sys.argv[1], sys.argv[2].split(), int(sys.argv[3]), sys.argv[4].split(), sys.argv[5].split()
def kernels(g, d, r):
    rows = {}
    for f in glob.glob(os.path.join(out, f'G{g}-D{d}-r{r}', '*-kernels.csv')):
        for x in csv.DictReader(open(f)): rows[(x['N'], x['pass'])] = (float(x['ms']), float(x['tflops']), x['checkErr'])
    return rows
print('single-device kernels, causal, B1 H16: fastest round, ms (TFLOP/s); ratio = time vs group ' + groups[0])
print(f"{'N':>6} {'D':>4} {'pass':8} " + ' '.join(f"{'G=' + g:>22}" for g in groups) + '  checkErr')
for d in ds:
    runs = {g: [kernels(g, d, r) for r in range(1, rounds + 1)] for g in groups}
    for n in ns:
        for p in ('fwd', 'bwd', 'fwd+bwd'):
            best = {g: min((x[(n, p)] for x in runs[g] if (n, p) in x), default=None) for g in groups}
            if best[groups[0]] is None: print(f"{n:>6} {d:>4} {p:8} (no result: see the logs)"); continue
            cells = [f"{b[0]:8.3f} ({b[1]:6.1f}) {b[0] / best[groups[0]][0]:4.2f}" if b else f"{'-':>22}" for b in best.values()]
            print(f"{n:>6} {d:>4} {p:8} " + ' '.join(cells) + '  ' + max((b[2] for b in best.values() if b), key=lambda e: float(e or 0)))
print()
def steps(g, r):
    f = glob.glob(os.path.join(out, f'steps-G{g}-r{r}', '*.json'))
    return json.load(open(f[0])) if f else None
print('ring steps (p2p zigzag): summed ms, fastest round; ring/R=1 is the issue\'s one-device ratio')
print(f"{'R':>2} " + ' '.join(f"{'G=' + g + ' ring':>12} {'plain':>8} {'R=1':>8} {'ring/R=1':>8}" for g in groups))
for R in (2, 4, 8):
    cells = []
    for g in groups:
        best = None
        for r in range(1, rounds + 1):
            j = steps(g, r)
            s = j and next((x for x in j.get('totals', []) if x.get('R') == R), None)
            if s and (best is None or s['ringMs'] < best['ringMs']): best = s
        cells.append(f"{best['ringMs']:12.2f} {best['plainMs']:8.2f} {best['r1Ms']:8.2f} {best['ringMs'] / best['r1Ms']:8.2f}" if best else f"{'(no result: see the logs)':>39}")
    print(f"{R:>2} " + ' '.join(cells))
PY

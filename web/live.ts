/**
 * The page's live run: the FlashAttention kernels and the CP ring (each rank its own WebGPU
 * device) in this tab, checked against float64 attention on the CPU when the size allows, and
 * ring timelines (from a run, or a dropped JSON file) drawn per rank.
 *
 * Devices are acquired once and reused by later runs (a fresh device per click costs seconds and
 * memory); a lost device is replaced. Cancel answers at once: the page is free again, and the run
 * in flight stops at its next ring step (a new run waits for that). Results of an earlier run are
 * cleared when a run starts and when it fails. Every message speaks of the form's fields.
 */
import { acquireDevices, adapterName, FlashDevice } from '../src/gpu/device.js';
import { ringAttention, RingTimeline } from '../src/ring/ringAttention.js';
import { Layout, LAYOUTS } from '../src/ring/schedule.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { randn, referenceInput, relErr, TOL } from '../src/reference/compare.js';
import { attentionFlops, AttentionShape, MAX_HEAD_DIM, numel } from '../src/shape.js';
import { toF32 } from '../src/kernels/attention.js';
import { Precision } from '../src/kernels/common.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

class Cancelled extends Error {}

/** A field of the live form that is not what the page can run, said in the form's words. */
class FormError extends Error {}

interface LiveConfig { N: number; D: number; H: number; R: number; layout: Layout; precision: Precision; causal: boolean; backward: boolean }

const MAX_N = 65536, MAX_HEADS = 64, MAX_RANKS = 8;

/** Reads and checks the form. */
export function readLiveForm(form: HTMLFormElement): LiveConfig {
  const field = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
  const whole = (n: string, label: string, lo: number, hi: number) => {
    const raw = field(n).value.trim();
    const v = Number(raw);
    if (raw === '' || !/^\d+$/.test(raw) || v < lo || v > hi) throw new FormError(`${label} must be a whole number from ${lo} to ${hi}${raw === '' ? '' : ` (it is ${raw})`}.`);
    return v;
  };
  const N = whole('N', 'Sequence length N', 1, MAX_N);
  const D = whole('D', 'Head size D', 8, MAX_HEAD_DIM);
  if (D % 8) throw new FormError(`Head size D must be a multiple of 8 (it is ${D}).`);
  const H = whole('H', 'Heads', 1, MAX_HEADS);
  const R = whole('R', 'Ranks R', 1, MAX_RANKS);
  if (R > N) throw new FormError(`Ranks R (${R}) cannot exceed the sequence length N (${N}): every rank needs at least one token.`);
  const layout = field('layout').value as Layout;
  if (!LAYOUTS.includes(layout)) throw new FormError(`Layout must be one of ${LAYOUTS.join(', ')}.`);
  const precision = field('precision').value as Precision;
  if (precision !== 'f32' && precision !== 'f16') throw new FormError('Precision must be f32 or f16.');
  return { N, D, H, R, layout, precision, causal: field('causal').checked, backward: field('backward').checked };
}

/** Checks that a parsed JSON file is a ring timeline the page can draw; throws a readable Error. */
export function checkTimeline(tl: unknown): asserts tl is RingTimeline {
  const t = tl as Record<string, unknown>;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  if (!t || typeof t !== 'object' || Array.isArray(t)) throw new Error('it is not a JSON object');
  if (t.kind !== 'flashring.timeline') throw new Error('not a flashring timeline (kind "flashring.timeline" missing)');
  if (!Number.isInteger(t.R) || (t.R as number) < 1 || (t.R as number) > 1024) throw new Error('its number of ranks R is missing or not a whole number');
  if (!Array.isArray(t.phases) || !t.phases.length) throw new Error('it has no phases to draw (the "phases" list is missing or empty)');
  t.phases.forEach((ph: Record<string, unknown>, i: number) => {
    if (!ph || typeof ph.phase !== 'string' || !num(ph.wallMs) || !Array.isArray(ph.steps)) throw new Error(`phase ${i + 1} lacks its name, wall time or steps`);
    ph.steps.forEach((st: Record<string, unknown>, j: number) => {
      const fields = ['start', 'computeEnd', 'transferEnd', 'end', 'transferMs', 'idleMs'];
      if (!st || !Number.isInteger(st.rank) || (st.rank as number) < 0 || (st.rank as number) >= (t.R as number) || fields.some((f) => !num(st[f])))
        throw new Error(`step ${j + 1} of phase ${i + 1} lacks a valid rank or one of ${fields.join(', ')}`);
    });
  });
  const sm = t.summary as Record<string, unknown> | undefined;
  if (!sm || !num(sm.overlapEfficiency)) throw new Error('its summary (overlap efficiency) is missing');
  if (t.adapters !== undefined && !Array.isArray(t.adapters)) throw new Error('its adapter list is not a list');
}

/** FLOP/s in the unit that keeps 3 significant digits readable. */
function rate(flopsPerSecond: number): string {
  const units: [number, string][] = [[1e12, 'TFLOP/s'], [1e9, 'GFLOP/s'], [1e6, 'MFLOP/s']];
  const [div, unit] = units.find(([d]) => flopsPerSecond >= d) ?? [1e6, 'MFLOP/s'];
  return `${(flopsPerSecond / div).toPrecision(3)} ${unit}`;
}

function showResults(rows: [string, string][]): void {
  $('live-results').replaceChildren(...rows.map(([k, v]) => {
    const tr = document.createElement('tr');
    tr.innerHTML = '<th></th><td></td>';
    tr.cells[0].textContent = k;
    (tr.children[1] as HTMLElement).textContent = v;
    return tr;
  }));
}

function clearTimeline(): void {
  const c = $<HTMLCanvasElement>('timeline');
  c.getContext('2d')!.clearRect(0, 0, c.width, c.height);
}

/** One row per rank: compute (blue), transfer (orange, lower half), idle (grey), phases in sequence. */
function drawTimeline(tl: RingTimeline): void {
  const c = $<HTMLCanvasElement>('timeline');
  const g = c.getContext('2d')!;
  g.clearRect(0, 0, c.width, c.height);
  const total = tl.phases.reduce((a, p) => a + p.wallMs, 0) || 1;
  const left = 70, w = c.width - left - 10, rowH = Math.min(40, (c.height - 30) / tl.R);
  const X = (ms: number) => left + (ms / total) * w;
  g.font = '12px system-ui';
  let offset = 0;
  for (const ph of tl.phases) {
    g.fillStyle = '#333';
    g.fillText(ph.phase, X(offset) + 2, 12);
    for (const st of ph.steps) {
      const y = 18 + st.rank * rowH;
      g.fillStyle = '#1f77b4';
      g.fillRect(X(offset + st.start), y, Math.max(1, X(offset + st.computeEnd) - X(offset + st.start)), rowH * 0.5 - 2);
      if (st.transferMs > 0) {
        g.fillStyle = '#ff7f0e';
        g.fillRect(X(offset + st.transferEnd - st.transferMs), y + rowH * 0.5, Math.max(1, X(st.transferMs) - left), rowH * 0.5 - 4);
      }
      if (st.idleMs > 0) {
        g.fillStyle = '#ccc';
        g.fillRect(X(offset + st.end), y, Math.max(1, X(st.idleMs) - left), rowH - 4);
      }
    }
    offset += ph.wallMs;
  }
  g.fillStyle = '#333';
  for (let r = 0; r < tl.R; r++) g.fillText(`rank ${r}`, 4, 18 + r * rowH + rowH / 2);
  g.fillText(`${total.toFixed(1)} ms · blue compute · orange transfer · grey idle · overlap ${(100 * tl.summary.overlapEfficiency).toFixed(0)}%`, left, c.height - 4);
}

/** The errors of a finished run against float64 attention on the CPU (rows and hook values). */
function checkRun(s: AttentionShape, cfg: LiveConfig, x: Record<string, Float32Array>, res: Awaited<ReturnType<typeof ringAttention>>) {
  if (cfg.H * cfg.N * cfg.N * cfg.D > 4e7)
    return { row: 'not computed at this size (H·N²·D > 4·10⁷): the CPU reference would take too long', errors: null, ok: undefined };
  const f = (a: Float32Array) => referenceInput(a, res.precision);
  const errs: Record<string, number> = {};
  const rf = referenceForward(s, f(x.q), f(x.k), f(x.v), { causal: cfg.causal });
  errs.O = relErr(toF32(res.o), rf.o);
  errs.LSE = relErr(res.lse, rf.lse);
  if (cfg.backward) {
    const rb = referenceBackward(s, f(x.q), f(x.k), f(x.v), f(x.dout), { causal: cfg.causal });
    errs.dQ = relErr(toF32(res.dq!), rb.dq);
    errs.dK = relErr(toF32(res.dk!), rb.dk);
    errs.dV = relErr(toF32(res.dv!), rb.dv);
  }
  const tol = TOL[res.precision];
  const ok = Object.entries(errs).every(([k, e]) => e <= (k.startsWith('d') ? tol.grad : tol.out));
  return { row: `${Object.entries(errs).map(([k, e]) => `${k} ${e.toExponential(2)}`).join(', ')} — ${ok ? 'within' : 'OVER'} tolerance`, errors: errs, ok };
}

function resultRows(s: AttentionShape, cfg: LiveConfig, res: Awaited<ReturnType<typeof ringAttention>>, adapter: string): [string, string][] {
  const tl = res.timeline;
  const wall = tl.phases.reduce((a, p) => a + p.wallMs, 0);
  const flops = attentionFlops(s, cfg.causal, cfg.backward ? 'fwd+bwd' : 'fwd');
  return [
    ['adapter', `${adapter} (${res.precision})`],
    ['achieved', `${rate(flops / (wall * 1e-3))} over ${wall.toFixed(1)} ms (ring wall time; FLOPs 4·H·N²·D${cfg.causal ? ' ×0.5' : ''}${cfg.backward ? ' ×3.5' : ''})`],
    ['overlap efficiency', `${(100 * tl.summary.overlapEfficiency).toFixed(1)}% (unhidden transfer ${(100 * tl.summary.unhiddenFraction).toFixed(1)}% of step time)`],
    ['peak bytes per rank', tl.ranks.map((r) => `${(r.peakBytes / 1024 / 1024).toFixed(2)} MiB`).join(', ')],
  ];
}

/** Devices kept between runs: only what is missing is acquired; a lost device renews the pool. */
class DevicePool {
  private devices: FlashDevice[] = [];
  constructor(private gpu: GPU | undefined, private hooks: Record<string, unknown>) {
    hooks.liveDevicesAcquired = 0;
  }

  async first(R: number): Promise<FlashDevice[]> {
    if (this.devices.some((d) => d.lostReason)) {
      for (const d of this.devices) d.destroy();
      this.devices = [];
    }
    while (this.devices.length < R) {
      const [d] = await acquireDevices(this.gpu!, 1);
      d.index = this.devices.length;
      this.devices.push(d);
      this.hooks.liveDevicesAcquired = (this.hooks.liveDevicesAcquired as number) + 1;
    }
    return this.devices.slice(0, R);
  }
}

/** Wires the live panel (form, Run, Cancel, timeline drop) and reports through `hooks.live`. */
export function setupLive(hooks: Record<string, unknown>): void {
  const form = $<HTMLFormElement>('live-form');
  const runBtn = $<HTMLButtonElement>('live-run'), cancelBtn = $<HTMLButtonElement>('live-cancel');
  const status = $('live-status'), progress = $<HTMLProgressElement>('live-progress');
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  if (!gpu) {
    $('live-support').textContent = 'WebGPU is not available in this browser, so the live run cannot start (the planner and replay work without it). ' +
      'Use Chrome or Edge 113+ (on Linux start it with --enable-unsafe-webgpu), or Safari 26+.';
    runBtn.disabled = true;
  } else $('live-support').textContent = 'Runs the FlashAttention kernels and the CP ring (each rank its own WebGPU device) in this tab, checked against float64 attention on the CPU when the size allows.';

  const pool = new DevicePool(gpu, hooks);
  let inFlight: Promise<unknown> = Promise.resolve();
  let runId = 0;
  let cancelRequested = false;

  const finish = (id: number, text: string, live: Record<string, unknown>) => {
    if (id !== runId) return; // a cancelled run ending later says nothing
    status.textContent = text;
    hooks.live = { done: true, ...live };
    runBtn.disabled = false;
    cancelBtn.disabled = true;
  };

  const run = async (id: number): Promise<void> => {
    showResults([]);
    clearTimeline();
    progress.value = 0;
    let cfg: LiveConfig;
    try {
      cfg = readLiveForm(form);
    } catch (e) {
      return finish(id, (e as Error).message, { failed: (e as Error).message });
    }
    status.textContent = 'starting…';
    await inFlight.catch(() => {}); // the cancelled run before this one lets go of the devices
    if (id !== runId) return;
    cancelRequested = false;
    const s: AttentionShape = { B: 1, Hq: cfg.H, Hkv: cfg.H, Nq: cfg.N, Nk: cfg.N, D: cfg.D };
    try {
      status.textContent = `preparing ${cfg.R} device(s)…`;
      const devs = await pool.first(cfg.R);
      if (cfg.precision === 'f16' && !devs[0].hasF16) throw new FormError('This GPU does not offer 16-bit floats to WebGPU (shader-f16): choose precision f32.');
      const x = { q: randn(numel(s, 'q'), 1), k: randn(numel(s, 'kv'), 2), v: randn(numel(s, 'kv'), 3), ...(cfg.backward ? { dout: randn(numel(s, 'q'), 4) } : {}) };
      status.textContent = `running on ${adapterName(devs[0].adapter)}…`;
      const res = await ringAttention(devs, s, x, {
        causal: cfg.causal, layout: cfg.layout, precision: cfg.precision,
        onStep: ({ phase, step, steps }) => {
          if (cancelRequested || id !== runId) throw new Cancelled('cancelled');
          progress.value = ((phase === 'backward' ? steps : 0) + step + 1) / ((cfg.backward ? 2 : 1) * steps);
        },
      });
      if (id !== runId) return;
      const check = checkRun(s, cfg, x as Record<string, Float32Array>, res);
      showResults([...resultRows(s, cfg, res, adapterName(devs[0].adapter)), ['error vs float64', check.row]]);
      drawTimeline(res.timeline);
      finish(id, 'done', { errors: check.errors, ok: check.ok, precision: res.precision });
    } catch (e) {
      if (e instanceof Cancelled) return;
      showResults([]);
      clearTimeline();
      const msg = e instanceof FormError ? e.message : `The run failed: ${(e as Error).message}`;
      finish(id, msg, { failed: msg });
    }
  };

  runBtn.addEventListener('click', () => {
    const id = ++runId;
    runBtn.disabled = true;
    cancelBtn.disabled = false;
    hooks.live = { done: false };
    const p = run(id);
    inFlight = p;
  });
  cancelBtn.addEventListener('click', () => {
    cancelRequested = true;
    const id = ++runId; // the run in flight no longer speaks for the page
    progress.value = 0;
    showResults([]);
    clearTimeline();
    finish(id, 'cancelled', { cancelled: true });
  });
  wireFileDrop($('timeline-drop'), $<HTMLInputElement>('timeline-file'), (f) => void showTimelineFile(f, status));
}

async function showTimelineFile(f: File, status: HTMLElement): Promise<void> {
  try {
    let tl: unknown;
    try {
      tl = JSON.parse(await f.text());
    } catch {
      throw new Error('it is not JSON');
    }
    checkTimeline(tl);
    drawTimeline(tl);
    status.textContent = `showing ${f.name}: R=${tl.R} ${tl.layout ?? ''}, ${tl.adapters?.[0] ?? ''}`;
  } catch (e) {
    status.textContent = `${f.name} could not be read — ${(e as Error).message}`;
  }
}

function wireFileDrop(zone: HTMLElement, input: HTMLInputElement, onFile: (f: File) => void): void {
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    const f = e.dataTransfer?.files[0];
    if (f) onFile(f);
  });
  input.addEventListener('change', () => {
    const f = input.files?.[0];
    if (f) onFile(f);
    input.value = '';
  });
}

/**
 * The page. Everything it computes comes from src/ (the memory model, the log parser, the
 * kernels and the ring); this file only reads the controls, draws and keeps the URL in step.
 */
import Chart from 'chart.js/auto';
import {
  DEFAULT_PARALLEL, DEFAULT_SEQ_LENGTHS, GIB, ModelConfig, PRESETS, ParallelConfig, SweepPoint, oomPoints, parseLines, sweep,
} from '../src/memory/model.js';
import { MemoryChartConfig, coincidentNote, formatTokens, memoryChartConfig } from '../src/memory/chart.js';
import { CsvRow, measuredRow, parseCsv, sweepRows, toCsv } from '../src/memory/csv.js';
import { parseMegatronLog } from '../src/memory/megatron.js';
import { acquireDevices, adapterName, FlashDevice } from '../src/gpu/device.js';
import { ringAttention, RingTimeline } from '../src/ring/ringAttention.js';
import { Layout } from '../src/ring/schedule.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { randn, referenceInput, relErr, TOL } from '../src/reference/compare.js';
import { attentionFlops, AttentionShape, numel } from '../src/shape.js';
import { toF32 } from '../src/kernels/attention.js';
import { PrecisionRequest } from '../src/kernels/common.js';
import measuredCsv from '../bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv?raw';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const hooks: Record<string, unknown> = {};
(window as unknown as { __flashring: unknown }).__flashring = hooks;

// ---------- shared chart helpers ----------

type Breakdowns = Map<string, SweepPoint>;

function drawMemoryChart(canvas: HTMLCanvasElement, old: Chart | null, cfg: MemoryChartConfig, details: Breakdowns): Chart {
  old?.destroy();
  const opts = cfg.options as { scales: { x: Record<string, unknown> }; plugins: Record<string, unknown> };
  opts.scales.x.ticks = { callback: (v: number | string) => formatTokens(Number(v)), autoSkip: false };
  opts.scales.x.afterBuildTicks = (axis: { min: number; max: number; ticks: { value: number }[] }) => {
    const t = [];
    for (let v = axis.min; v <= axis.max; v *= 2) t.push({ value: v });
    axis.ticks = t;
  };
  opts.plugins.tooltip = {
    callbacks: {
      label: (ctx: { dataset: { label: string }; raw: { x: number; y: number; source: string; fits: boolean | null } }) => {
        const r = ctx.raw;
        const lines = [`${ctx.dataset.label}, ${formatTokens(r.x)} tokens: ${Number.isFinite(r.y) ? r.y.toFixed(1) : '?'} GiB${r.fits === false ? ' — does not fit' : ''}`];
        const p = details.get(`${ctx.dataset.label}|${r.x}`);
        if (p) {
          const b = p.breakdown;
          const part = (n: string) => b.perLayer.filter((t) => t.part === n).reduce((a, t) => a + t.bytes, 0) * b.layersHeld / GIB;
          lines.push(`weights ${(b.weightBytes / GIB).toFixed(1)}, gradients ${(b.gradientBytes / GIB).toFixed(1)}, optimizer ${(b.optimizerBytes / GIB).toFixed(1)} GiB`);
          lines.push(`activations ${(b.activationBytes / GIB).toFixed(1)} GiB: attention ${part('attention').toFixed(1)}, MLP ${part('mlp').toFixed(1)}, LayerNorm ${part('layernorm').toFixed(1)}`);
          if (b.ringBufferBytes) lines.push(`ring K/V buffers ${(b.ringBufferBytes / GIB).toFixed(2)} GiB`);
        } else if (r.source && r.source !== 'limit') lines.push(r.source);
        return lines;
      },
    },
  };
  return new Chart(canvas, cfg as never);
}

// ---------- memory planner ----------

const form = $<HTMLFormElement>('planner-form');
const field = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
const presetSelect = field('preset') as unknown as HTMLSelectElement;
for (const [k, p] of Object.entries(PRESETS)) presetSelect.add(new Option(`${k} — ${p.note}`, k));

const DEFAULT_VIEW: Record<string, string> = { preset: 'seed-32L-4096h', mb: '1', tp: '8', sp: '1', pp: '1', flash: '1', fp32: '0', hbm: '80', lines: '1,1:selective,2,4,4:selective' };

function setModelFields(m: ModelConfig): void {
  field('layers').value = String(m.numLayers);
  field('hidden').value = String(m.hiddenSize);
  field('heads').value = String(m.numAttentionHeads);
  field('groups').value = String(m.numQueryGroups ?? m.numAttentionHeads);
  field('ffn').value = String(m.ffnHiddenSize ?? 4 * m.hiddenSize);
  field('vocab').value = String(m.vocabSize ?? 50257);
  field('swiglu').checked = !!m.swiglu;
  field('fp32').checked = m.paramPrecision === 'amp';
}

function loadView(): void {
  const q = new URLSearchParams(location.hash.slice(1));
  const v = (k: string) => q.get(k) ?? DEFAULT_VIEW[k];
  presetSelect.value = PRESETS[v('preset')] ? v('preset') : DEFAULT_VIEW.preset;
  setModelFields(PRESETS[presetSelect.value].model);
  for (const k of ['layers', 'hidden', 'heads', 'groups', 'ffn', 'vocab']) if (q.has(k)) field(k).value = q.get(k)!;
  if (q.has('swiglu')) field('swiglu').checked = q.get('swiglu') === '1';
  for (const k of ['mb', 'tp', 'pp', 'hbm', 'lines']) field(k).value = v(k);
  for (const k of ['sp', 'flash', 'fp32']) if (q.has(k) || k !== 'fp32') field(k).checked = v(k) === '1';
}

function saveView(): void {
  const q = new URLSearchParams();
  q.set('preset', presetSelect.value);
  for (const k of ['layers', 'hidden', 'heads', 'groups', 'ffn', 'vocab', 'mb', 'tp', 'pp', 'hbm', 'lines']) q.set(k, field(k).value);
  for (const k of ['swiglu', 'sp', 'flash', 'fp32']) q.set(k, field(k).checked ? '1' : '0');
  history.replaceState(null, '', `#${q}`);
}

function plannerConfig(): { model: ModelConfig; par: ParallelConfig; hbm: number } {
  const n = (k: string) => Number(field(k).value);
  const model: ModelConfig = {
    ...PRESETS[presetSelect.value].model,
    numLayers: n('layers'), hiddenSize: n('hidden'), numAttentionHeads: n('heads'), numQueryGroups: n('groups'),
    ffnHiddenSize: n('ffn'), vocabSize: n('vocab'), swiglu: field('swiglu').checked,
    paramPrecision: field('fp32').checked ? 'amp' : 'megatron',
  };
  const par: ParallelConfig = {
    ...DEFAULT_PARALLEL, microBatchSize: n('mb'), tensorParallel: n('tp'), pipelineParallel: n('pp'),
    sequenceParallel: field('sp').checked, flashAttention: field('flash').checked,
  };
  return { model, par, hbm: n('hbm') };
}

let plannerChart: Chart | null = null;
let plannerRows: CsvRow[] = [];

function renderPlanner(): void {
  const err = $('planner-error');
  try {
    const { model, par, hbm } = plannerConfig();
    if (!(hbm > 0)) throw new Error('HBM must be a positive number of GiB');
    const lines = parseLines(field('lines').value);
    const pts = sweep(model, par, DEFAULT_SEQ_LENGTHS, lines, hbm);
    plannerRows = sweepRows(pts, hbm);
    const details: Breakdowns = new Map(pts.map((p) => [`${p.line}|${p.config.seqLength}`, p]));
    const title = `${presetSelect.value}: ${model.numLayers} layers, h=${model.hiddenSize}, ${model.numAttentionHeads} heads, TP=${par.tensorParallel}${par.sequenceParallel ? ' + SP' : ''}, PP=${par.pipelineParallel}, micro batch ${par.microBatchSize}, ${par.flashAttention ? 'FlashAttention' : 'no FlashAttention'}`;
    plannerChart = drawMemoryChart($<HTMLCanvasElement>('planner-chart'), plannerChart, memoryChartConfig(plannerRows, [], hbm, title, coincidentNote(pts, lines)), details);
    const oom = oomPoints(pts);
    $('planner-oom').textContent = `Longest sequence that fits in ${hbm} GiB: ` + Object.entries(oom).map(([k, v]) => `${k} ${v === null ? 'none' : formatTokens(v)}`).join(' · ');
    err.textContent = '';
    saveView();
    hooks.planner = {
      lines: plannerChart.data.datasets.map((d) => d.label),
      oomMarkers: plannerChart.data.datasets.reduce((a, d) => {
        const ps = (d as { pointStyle?: unknown }).pointStyle;
        return a + (Array.isArray(ps) ? ps.filter((x) => x === 'crossRot').length : 0);
      }, 0),
      oom,
    };
  } catch (e) {
    err.textContent = (e as Error).message;
  }
}

presetSelect.addEventListener('change', () => {
  setModelFields(PRESETS[presetSelect.value].model);
  renderPlanner();
});
form.addEventListener('input', (e) => {
  if (e.target !== presetSelect) renderPlanner();
});
$('export-csv').addEventListener('click', () => download('activation_memory.csv', new Blob([toCsv(plannerRows)], { type: 'text/csv' })));
$('export-png').addEventListener('click', () => {
  if (plannerChart) download('activation_memory.png', dataUrlBlob(plannerChart.toBase64Image('image/png', 1)));
});
$('copy-link').addEventListener('click', () => void navigator.clipboard?.writeText(location.href));

function download(name: string, blob: Blob): void {
  const a = document.createElement('a');
  a.href = URL.createObjectURL(blob);
  a.download = name;
  a.click();
  setTimeout(() => URL.revokeObjectURL(a.href), 1000);
}

function dataUrlBlob(url: string): Blob {
  const [head, data] = url.split(',');
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  return new Blob([bytes], { type: head.slice(5, head.indexOf(';')) });
}

// ---------- replay ----------

const shipped = parseCsv(measuredCsv, 'bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv');
const REPLAY = { preset: 'torchcp-8L-4096h', lines: '1,1:selective,2,2:selective', hbm: shipped.find((r) => r.hbm_gib)?.hbm_gib ?? 139.8 };
let replayChart: Chart | null = null;
const dropped: CsvRow[] = [];

function renderReplay(): void {
  const model = PRESETS[REPLAY.preset].model;
  const pts = sweep(model, { ...DEFAULT_PARALLEL }, [4096, 8192, 16384, 32768, 65536, 131072, 262144], parseLines(REPLAY.lines), REPLAY.hbm);
  const details: Breakdowns = new Map(pts.map((p) => [`${p.line}|${p.config.seqLength}`, p]));
  const measured = [...shipped, ...dropped];
  const cfg = memoryChartConfig(sweepRows(pts, REPLAY.hbm), measured, REPLAY.hbm,
    'Measured: PyTorch context_parallel on 2×H200 (triangles) over the model for the same GPT (lines)',
    'Model low by 12–27% here: fp32 residual stream, fp32 logits and DDP buckets are outside its accounting (bench/results/torchcp-2xh200-2026-11-30)');
  replayChart = drawMemoryChart($<HTMLCanvasElement>('replay-chart'), replayChart, cfg, details);
  hooks.replay = { measuredPoints: measured.filter((r) => r.total_gib !== null).length, datasets: replayChart.data.datasets.map((d) => d.label) };
}
$('replay-about').textContent = `Shipped dataset: ${shipped.length} points (${shipped.filter((r) => r.fits === false).length} out of memory) measured on ${shipped[0]?.source.replace(/^measured: /, '') ?? '?'}.`;

async function addReplayFiles(files: FileList | File[]): Promise<void> {
  const list = $('replay-messages');
  for (const f of Array.from(files)) {
    const li = document.createElement('li');
    try {
      const text = await f.text();
      let rows: CsvRow[];
      if (/\.csv$/i.test(f.name)) rows = parseCsv(text, f.name);
      else {
        const r = parseMegatronLog(text, f.name);
        const row = measuredRow(r.point);
        if (!row) throw new Error(`no point: ${r.warnings.join('; ')}`);
        rows = [row];
        if (r.warnings.length) li.title = r.warnings.join('\n');
      }
      dropped.push(...rows);
      li.textContent = `${f.name}: ${rows.length} point(s) added`;
    } catch (e) {
      li.className = 'bad';
      li.textContent = `${f.name}: could not be read — ${(e as Error).message}`;
    }
    list.append(li);
  }
  renderReplay();
}
wireDrop($('replay-drop'), $<HTMLInputElement>('replay-files'), (files) => void addReplayFiles(files));

function wireDrop(zone: HTMLElement, input: HTMLInputElement, onFiles: (f: File[]) => void): void {
  zone.addEventListener('dragover', (e) => { e.preventDefault(); zone.classList.add('over'); });
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (e) => {
    e.preventDefault();
    zone.classList.remove('over');
    if (e.dataTransfer?.files.length) onFiles(Array.from(e.dataTransfer.files));
  });
  input.addEventListener('change', () => {
    if (input.files?.length) onFiles(Array.from(input.files));
    input.value = '';
  });
}

// ---------- live run ----------

const live = $<HTMLFormElement>('live-form');
const lf = (n: string) => live.elements.namedItem(n) as HTMLInputElement;
const runBtn = $<HTMLButtonElement>('live-run'), cancelBtn = $<HTMLButtonElement>('live-cancel');
const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
let cancelled = false;

if (!gpu) {
  $('live-support').textContent = 'WebGPU is not available in this browser, so the live run cannot start (the planner and replay work without it). ' +
    'Use Chrome or Edge 113+ (on Linux start it with --enable-unsafe-webgpu), or Safari 26+.';
  runBtn.disabled = true;
} else $('live-support').textContent = 'Runs the FlashAttention kernels and the CP ring (each rank its own WebGPU device) in this tab, checked against float64 attention on the CPU when the size allows.';

class Cancelled extends Error {}

async function liveRun(): Promise<void> {
  const N = Number(lf('N').value), D = Number(lf('D').value), H = Number(lf('H').value), R = Number(lf('R').value);
  const layout = lf('layout').value as Layout, precision = lf('precision').value as PrecisionRequest;
  const causal = lf('causal').checked, backward = lf('backward').checked;
  const status = $('live-status'), progress = $<HTMLProgressElement>('live-progress');
  const s: AttentionShape = { B: 1, Hq: H, Hkv: H, Nq: N, Nk: N, D };
  runBtn.disabled = true;
  cancelBtn.disabled = false;
  cancelled = false;
  progress.value = 0;
  let devs: FlashDevice[] = [];
  hooks.live = { done: false };
  try {
    status.textContent = `acquiring ${R} device(s)…`;
    devs = await acquireDevices(gpu!, R);
    const x = { q: randn(numel(s, 'q'), 1), k: randn(numel(s, 'kv'), 2), v: randn(numel(s, 'kv'), 3), ...(backward ? { dout: randn(numel(s, 'q'), 4) } : {}) };
    const phases = backward ? 2 : 1;
    status.textContent = `running on ${adapterName(devs[0].adapter)}…`;
    const res = await ringAttention(devs, s, x, {
      causal, layout, precision,
      onStep: ({ phase, step, steps }) => {
        if (cancelled) throw new Cancelled('cancelled');
        progress.value = ((phase === 'backward' ? steps : 0) + step + 1) / (phases * steps);
      },
    });
    const tl = res.timeline;
    const wall = tl.phases.reduce((a, p) => a + p.wallMs, 0);
    const flops = attentionFlops(s, causal, backward ? 'fwd+bwd' : 'fwd');
    const rows: [string, string][] = [
      ['adapter', `${adapterName(devs[0].adapter)} (${res.precision})`],
      ['achieved', `${rate(flops / (wall * 1e-3))} over ${wall.toFixed(1)} ms (ring wall time; FLOPs 4·H·N²·D${causal ? ' ×0.5' : ''}${backward ? ' ×3.5' : ''})`],
      ['overlap efficiency', `${(100 * tl.summary.overlapEfficiency).toFixed(1)}% (unhidden transfer ${(100 * tl.summary.unhiddenFraction).toFixed(1)}% of step time)`],
      ['peak bytes per rank', tl.ranks.map((r) => `${(r.peakBytes / 1024 / 1024).toFixed(2)} MiB`).join(', ')],
    ];
    const errs: Record<string, number> = {};
    if (H * N * N * D <= 4e7) {
      const f = (a: Float32Array) => referenceInput(a, res.precision);
      const rf = referenceForward(s, f(x.q), f(x.k), f(x.v), { causal });
      errs.O = relErr(toF32(res.o), rf.o);
      errs.LSE = relErr(res.lse, rf.lse);
      if (backward) {
        const rb = referenceBackward(s, f(x.q), f(x.k), f(x.v), f(x.dout!), { causal });
        errs.dQ = relErr(toF32(res.dq!), rb.dq);
        errs.dK = relErr(toF32(res.dk!), rb.dk);
        errs.dV = relErr(toF32(res.dv!), rb.dv);
      }
      const tol = TOL[res.precision];
      const ok = Object.entries(errs).every(([k, e]) => e <= (k.startsWith('d') ? tol.grad : tol.out));
      rows.push(['error vs float64', `${Object.entries(errs).map(([k, e]) => `${k} ${e.toExponential(2)}`).join(', ')} — ${ok ? 'within' : 'OVER'} tolerance`]);
      hooks.live = { done: true, errors: errs, ok, precision: res.precision };
    } else {
      rows.push(['error vs float64', 'not computed at this size (H·N²·D > 4·10⁷): the CPU reference would take too long']);
      hooks.live = { done: true, errors: null, precision: res.precision };
    }
    showResults(rows);
    drawTimeline(tl);
    status.textContent = 'done';
  } catch (e) {
    status.textContent = e instanceof Cancelled ? 'cancelled' : `failed: ${(e as Error).message}`;
    hooks.live = { done: true, failed: (e as Error).message };
  } finally {
    for (const d of devs) d.destroy();
    runBtn.disabled = !gpu;
    cancelBtn.disabled = true;
  }
}

/** FLOP/s in the unit that keeps 3 significant digits readable. */
function rate(flopsPerSecond: number): string {
  const units: [number, string][] = [[1e12, 'TFLOP/s'], [1e9, 'GFLOP/s'], [1e6, 'MFLOP/s']];
  const [div, unit] = units.find(([d]) => flopsPerSecond >= d) ?? [1e6, 'MFLOP/s'];
  return `${(flopsPerSecond / div).toPrecision(3)} ${unit}`;
}

function showResults(rows: [string, string][]): void {
  const t = $('live-results');
  t.replaceChildren(...rows.map(([k, v]) => {
    const tr = document.createElement('tr');
    tr.innerHTML = '<th></th><td></td>';
    tr.cells[0].textContent = k;
    (tr.children[1] as HTMLElement).textContent = v;
    return tr;
  }));
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

runBtn.addEventListener('click', () => void liveRun());
cancelBtn.addEventListener('click', () => { cancelled = true; });
wireDrop($('timeline-drop'), $<HTMLInputElement>('timeline-file'), async (files) => {
  const f = files[0];
  try {
    const tl = JSON.parse(await f.text()) as RingTimeline;
    if (tl.kind !== 'flashring.timeline') throw new Error('not a flashring timeline (kind "flashring.timeline" missing)');
    drawTimeline(tl);
    $('live-status').textContent = `showing ${f.name}: R=${tl.R} ${tl.layout}, ${tl.adapters[0] ?? ''}`;
  } catch (e) {
    $('live-status').textContent = `${f.name} could not be read — ${(e as Error).message}`;
  }
});

loadView();
renderPlanner();
renderReplay();
hooks.ready = true;

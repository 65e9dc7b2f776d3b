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
import { setupLive } from './live.js';
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

// ---------- live run (web/live.ts) ----------

setupLive(hooks);

loadView();
renderPlanner();
renderReplay();
hooks.ready = true;

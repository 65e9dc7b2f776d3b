/**
 * The page. Everything it computes comes from src/ (the memory model, the comparison with
 * measurements, the log parser, the kernels and the ring); this file only reads the controls,
 * checks them in the page's own words, draws and keeps the URL in step (and follows it).
 */
import Chart, { type FontSpec, type LegendItem } from 'chart.js/auto';
import { drawPoint, toFont } from 'chart.js/helpers';
import {
  CP_COMM_TYPES, CpCommType, DEFAULT_LINES_SPEC, NoLengthError, DEFAULT_PARALLEL, defaultRecompute, DEFAULT_SEQ_LENGTHS, DEFAULT_VOCAB_SIZE, GIB, ffnWidth, ModelConfig, SELECTIVE_RECOMPUTE, MOE_DISPATCHERS, MOE_SCORE_FUNCTIONS, MoeConfig, MoeDispatcher, MoeScoreFunction, PRESETS, ParallelConfig, RECOMPUTE_MODULES,
  STACKS, a2aUnsplit, lineParts, seqSplitProblem, megatronSequenceParallel, normName, Stack, SweepGap, SweepLine, SweepPoint, oomPoints, parseLines, parseRecomputeSpec, positionTableRefusal, recomputeSpec, sweep, sweepGaps, virtualStagesOf,
} from '../src/memory/model.js';
import { ChartDataset, LegendChart, MemoryChartConfig, breakdownRows, chartNotes, drawLegendMarks, formatTokens, legendSwatch, memoryChartConfig } from '../src/memory/chart.js';
import { CsvRow, measuredRow, measuredRows, parseCsv, sweepRows, toCsv } from '../src/memory/csv.js';
import { DEFAULT_MARGIN, headroom, longestFitting } from '../src/memory/headroom.js';
import { notText } from '../src/textKind.js';
import { ParseResult, configFromLog, parseMegatronLog, unmodelledArgs } from '../src/memory/megatron.js';
import { Comparison, MeasuredSetup, ModelSize, compareOne, comparisonFigures, memoryDiff, modelDiff, pct, predictFromLog, setupDiff, sourceModel, unmodelledComparison, withoutVerdict } from '../src/memory/compare.js';
import { loadLiveView, saveLiveView, setupLive } from './live.js';
import { setupAdvisor } from './advise.js';
import { linkValue, replaceViewHash } from './view.js';
import { clipToWidth, designPng, drawFitted, fitLines } from './chartFit.js';
import { InputError } from '../src/errors.js';
import { decimalNumber } from '../src/decimal.js';
import { counted, plural } from '../src/plural.js';
import { FieldError, FieldErrors, bugWords, customLink, fieldNumber, flagField, isInputError, marksOf, showFieldErrors, type FieldMark } from './fields.js';
import { clip, numberFrom, sig3 } from './format.js';
import { detailsTable, fillTable } from './table.js';
import { download } from './download.js';
import { COMPUTE_TFLOPS, LINKS, LINK_NAMES, Link, Prediction } from '../src/cp/plan/linkModel.js';
import { planScheme } from '../src/cp/launch/planSchemes.js';
import { validateRing } from '../src/cp/plan/schedule.js';
import { Scheme, SchemeDef, schemeDefs, schemeSizes } from '../src/cp/schemes/registry.js';
import { AttentionShape } from '../src/shape.js';
import measuredCsv from './data/activation_memory_measured.csv?raw'; // a copy of bench/results/torchcp-2xh200-2026-11-30/ (test/web-data.test.ts)

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;
const hooks: Record<string, unknown> = {};
(window as unknown as { __flashring: unknown }).__flashring = hooks;
// The panels' forms are read as they are edited, never sent. A form with one text or number field (the replay's HBM)
// is submitted by Enter in it: the page reloaded with ?rhbm=… and the dropped files were gone.
for (const f of Array.from(document.forms)) f.addEventListener('submit', (e) => e.preventDefault());

/** Megatron-LM flag names (the model's own messages) → the page's words, for any message not caught by the page's checks. */
const FLAG_WORDS: Record<string, string> = {
  'num-layers': 'layers', 'hidden-size': 'hidden size', 'num-attention-heads': 'heads', 'num-query-groups': 'K/V groups', 'ffn-hidden-size': 'MLP width',
  'vocab-size': 'vocabulary', 'seq-length': 'sequence length', 'micro-batch-size': 'micro batch', 'tensor-model-parallel-size': 'TP',
  'context-parallel-size': 'CP', 'pipeline-model-parallel-size': 'PP', 'data-parallel-size': 'data-parallel size', 'recompute-num-layers': 'recompute layers N',
  'recompute-granularity': 'recompute', 'recompute-method': 'recompute method', 'recompute-modules': 'recomputed modules', lines: 'lines', stack: 'stack',
  'cp-comm-type': 'CP communication', 'attention-dropout': 'attention dropout', 'hidden-dropout': 'hidden dropout',
  'num-experts': 'experts', 'moe-router-topk': 'top-k', 'moe-ffn-hidden-size': 'expert MLP width', 'moe-shared-expert-intermediate-size': 'shared expert width',
  'moe-expert-capacity-factor': 'expert capacity factor', 'moe-token-dispatcher-type': 'token dispatcher', 'expert-model-parallel-size': 'EP',
  'disable-bias-linear': "'no linear biases'", normalization: 'norm', 'max-position-embeddings': 'max positions',
  'no-bias-swiglu-fusion': "'unfused SwiGLU'", 'no-bias-gelu-fusion': "'unfused GeLU'", 'moe-router-score-function': 'score function', 'moe-router-enable-expert-bias': "'expert bias'",
};

/**
 * Megatron-LM flags (as InputError.flags holds them) → the planner's controls, for the model's own refusals that the
 * page's checks do not make first: the MLP width over TP, MoE with TP and no sequence parallel, EP over DP × CP, the
 * expert bias with the softmax score function.
 */
const FLAG_FIELDS: Record<string, string> = {
  '--num-layers': 'layers', '--hidden-size': 'hidden', '--num-attention-heads': 'heads', '--num-query-groups': 'groups', '--ffn-hidden-size': 'ffn', '--vocab-size': 'vocab',
  '--attention-dropout': 'attdrop', '--hidden-dropout': 'hiddrop', '--position-embedding-type': 'pos', '--max-position-embeddings': 'maxpos', '--normalization': 'norm', '--disable-bias-linear': 'nobias',
  '--no-bias-swiglu-fusion': 'unfused', '--no-bias-gelu-fusion': 'unfusedgelu',
  '--num-experts': 'experts', '--moe-router-topk': 'topk', '--moe-ffn-hidden-size': 'moeffn', '--moe-shared-expert-intermediate-size': 'shared',
  '--moe-expert-capacity-factor': 'capacity', '--moe-router-score-function': 'score', '--moe-router-enable-expert-bias': 'expertbias', '--moe-token-dispatcher-type': 'dispatcher', '--expert-model-parallel-size': 'ep', '--micro-batch-size': 'mb', '--tensor-model-parallel-size': 'tp',
  '--sequence-parallel': 'sp', '--pipeline-model-parallel-size': 'pp', '--num-layers-per-virtual-pipeline-stage': 'vpp', '--data-parallel-size': 'dp',
  '--use-distributed-optimizer': 'distopt', '--fp32-residual-connection': 'fp32res', '--torch-optimizer': 'torchopt', '--cp-comm-type': 'cpcomm', '--stack': 'stack', '--seq-length': 'seqs',
  '--context-parallel-size': 'lines', '--recompute-granularity': 'lines', '--recompute-method': 'lines', '--recompute-num-layers': 'lines', '--recompute-modules': 'lines',
};

/**
 * The model's own refusal of the planner's input, said beside the control of the first of its flags the planner has (FLAG_FIELDS); anything else as it is.
 * The advisor (web/advise.ts) names by it the planner's control of a refusal of its whole request.
 */
function onModelField(e: unknown): unknown {
  if (!(e instanceof InputError)) return e;
  const name = flagField(e.flags, FLAG_FIELDS);
  return name ? new FieldError(e.message, form.elements.namedItem(name) as HTMLElement) : e;
}

function pageWords(e: unknown): string {
  const msg = (e instanceof Error ? e.message : String(e))
    .replace(/--([a-z][a-z0-9-]*)/g, (_, f: string) => FLAG_WORDS[f] ?? f.replace(/-/g, ' '))
    .replace(/must be a positive integer, got/g, 'must be a positive whole number; it is');
  return msg;
}

// ---------- shared chart helpers ----------

type Breakdowns = Map<string, SweepPoint>;

/** Tooltips small enough to leave the chart readable: 11 px text, tight padding, small colour boxes. */
const TOOLTIP_STYLE = {
  bodyFont: { size: 11 }, bodySpacing: 1, padding: { x: 6, y: 4 }, caretSize: 4, caretPadding: 4, cornerRadius: 3,
  boxWidth: 8, boxHeight: 8, boxPadding: 3, backgroundColor: 'rgba(0, 0, 0, 0.78)',
};

interface TooltipItem { dataset: { label: string }; raw: { x: number; y: number; source: string; fits: boolean | null } }

/** A model point's memory in one line: what the weights, gradients and optimizer hold, stored activations, the peak transient. */
function memoryTip(b: SweepPoint['breakdown']): string {
  const state = b.weightBytes + b.gradientBytes + b.optimizerBytes, other = b.totalBytes - state - b.activationBytes - b.transientBytes;
  // other: DDP's gradient buckets and the libraries' workspaces (the table under the chart names them).
  return `weights+grads+Adam ${sig3(state / GIB)} · activations ${sig3(b.activationBytes / GIB)} · transient ${sig3(b.transientBytes / GIB)}` +
    `${other > 0 ? ` · other ${sig3(other / GIB)}` : ''} GiB`;
}

/** A measured point's setup, from its source ("… (CP=2, TP=1, recompute=none)", maybe ": out of memory" after it). */
const measuredSetup = (source?: string) => /\(([^()]*)\)(?:: out of memory)?$/.exec(source ?? '')?.[1];

/**
 * A point's tooltip, a few lines: what it is (line or measured setup, tokens, GiB, whether it fits),
 * for a model point its memory in one line and `more`'s (the step time), for a measured one where it
 * ran. The full breakdown, with formulas, is the table under the chart.
 */
function pointTip(label: string, r: TooltipItem['raw'], details: Breakdowns, more?: (p: SweepPoint) => string[]): string[] {
  // A measured run that went out of memory has no peak: its cross sits on the HBM line.
  const ranOut = r.source?.endsWith(': out of memory');
  const amount = ranOut ? 'out of memory (drawn on the HBM line)' : `${sig3(r.y)} GiB${r.fits === false ? ' — does not fit' : ''}`;
  const p = details.get(`${label}|${r.x}`);
  if (p) return [`${label}, ${formatTokens(r.x)} tokens: ${amount}`, memoryTip(p.breakdown), ...(more?.(p) ?? [])];
  const measured = /^measured:\s*(.*)$/.exec(label);
  // Neither the model's nor a measured line's: where the point comes from, if it says.
  if (!measured) return [`${label}, ${formatTokens(r.x)} tokens: ${amount}`, ...(r.source && r.source !== 'limit' ? [clip(r.source, 60)] : [])];
  const setup = measuredSetup(r.source);
  return [`measured${setup ? ` ${setup}` : ''}, ${formatTokens(r.x)} tokens: ${amount}`, `on ${clip(measured[1], 60)}`];
}

/** What the keyboard reads of a drawn chart (set at each draw) and the point it has picked. */
interface ChartKeys { details: Breakdowns; onPoint?: (p: SweepPoint) => void; more?: (p: SweepPoint) => string[]; at: { ds: number; i: number } | null }
const chartKeys = new WeakMap<HTMLCanvasElement, ChartKeys>();
/** Each chart's line that says the point the keyboard picked (cleared, not announced, when the chart is drawn again). */
const chartLive = new WeakMap<HTMLCanvasElement, HTMLElement>();
const STEP_KEYS = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End'];

/**
 * The point a key moves to from `at` among the charts' pickable datasets `sets` (their indexes, each with its points' x).
 * With none picked yet, the first press acts: End and ArrowLeft go to the first line's last point, ArrowUp to the last
 * line's first, the others to the first line's first.
 */
function stepPoint(key: string, sets: { ds: number; xs: number[] }[], at: ChartKeys['at']): { ds: number; i: number } {
  const s = sets.findIndex((x) => x.ds === at?.ds);
  if (!at || s < 0 || at.i >= sets[s].xs.length) {
    if (key === 'End' || key === 'ArrowLeft') return { ds: sets[0].ds, i: sets[0].xs.length - 1 };
    return { ds: (key === 'ArrowUp' ? sets[sets.length - 1] : sets[0]).ds, i: 0 };
  }
  const len = sets[s].xs.length;
  if (key === 'ArrowLeft' || key === 'ArrowRight' || key === 'Home' || key === 'End')
    return { ds: at.ds, i: key === 'Home' ? 0 : key === 'End' ? len - 1 : Math.min(len - 1, Math.max(0, at.i + (key === 'ArrowRight' ? 1 : -1))) };
  // Another line: its point nearest the same length.
  const next = sets[(s + (key === 'ArrowDown' ? 1 : -1) + sets.length) % sets.length], x = sets[s].xs[at.i];
  const i = next.xs.reduce((b, v, j) => (Math.abs(Math.log(v / x)) < Math.abs(Math.log(next.xs[b] / x)) ? j : b), 0);
  return { ds: next.ds, i };
}

/**
 * The keyboard's way to a chart's points (hover's alternative): arrow keys on the focused chart pick a point (left
 * and right along a line, up and down to the next line's point nearest the same length, Home and End a line's ends),
 * show its tooltip, say its lines in `live` (a polite live region) and, for a model point, show its breakdown as hover does.
 */
function chartKeyboard(canvas: HTMLCanvasElement, chart: () => Chart | null, live: HTMLElement): void {
  canvas.tabIndex = 0;
  chartLive.set(canvas, live);
  // The tooltip the keyboard showed goes when focus leaves the chart, or on Escape (the picked point is kept).
  const hide = () => {
    const c = chart();
    if (!c?.tooltip?.getActiveElements().length) return;
    c.setActiveElements([]);
    c.tooltip.setActiveElements([], { x: 0, y: 0 });
    c.update();
  };
  canvas.addEventListener('blur', hide);
  canvas.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') return hide();
    const c = chart(), k = chartKeys.get(canvas);
    if (!c || !k || !STEP_KEYS.includes(e.key)) return;
    // The lines drawn: one hidden from the legend is not stepped to (its tooltip showed a point not on the chart).
    const sets = c.data.datasets.map((d, ds) => ({ ds, xs: c.isDatasetVisible(ds) ? (d.data as { x: number; source?: string }[]).filter((p) => p.source !== 'limit').map((p) => p.x) : [] })).filter((x) => x.xs.length);
    if (!sets.length) return;
    e.preventDefault();
    k.at = stepPoint(e.key, sets, k.at);
    const el = c.getDatasetMeta(k.at.ds).data[k.at.i], active = [{ datasetIndex: k.at.ds, index: k.at.i }];
    c.setActiveElements(active);
    c.tooltip?.setActiveElements(active, { x: el.x, y: el.y });
    c.update();
    const d = c.data.datasets[k.at.ds], raw = d.data[k.at.i] as TooltipItem['raw'];
    live.textContent = pointTip(d.label ?? '', raw, k.details, k.more).join('; ');
    const p = k.details.get(`${d.label}|${raw.x}`);
    if (p) k.onPoint?.(p);
  });
}

/**
 * The pointer in the drawing's pixels. The charts draw at their container's width (web/chartFit.ts), but a canvas
 * may show at another size than it draws at: CSS scales it down to its column (style.css) until the chart follows a
 * narrowed window. Chart.js maps a pointer to the chart as if the canvas showed at its drawn size, so there hovering
 * hit no point, or another than the one under the pointer.
 */
const DRAWN_SCALE = {
  id: 'drawnScale',
  beforeEvent(chart: Chart, args: { event: { x: number | null; y: number | null }; inChartArea: boolean }): void {
    const r = chart.canvas.getBoundingClientRect(), e = args.event;
    if (!r.width || !r.height || e.x === null || e.y === null || (r.width === chart.width && r.height === chart.height)) return;
    e.x *= chart.width / r.width;
    e.y *= chart.height / r.height;
    args.inChartArea = chart.isPointInArea({ x: e.x, y: e.y });
  },
};

/**
 * The legend's items as line samples: each line's colour and dash (solid, or dashed as it is drawn) with its mark on it
 * (LEGEND_MARKS), a measured series' mark (legendSwatch); Chart.js's own items are boxes with the dash on their border.
 */
const LEGEND_LABELS = {
  generateLabels: (chart: Chart) => Chart.defaults.plugins.legend.labels.generateLabels(chart).map((item) => {
    // A label wider than a narrow chart (a measured series' source) is cut to fit: a legend row draws each label on one line.
    const text = clipToWidth(item.text, chart.width - LEGEND_MARGIN, chart.legend?.options.labels.font as Partial<FontSpec> | undefined);
    return { ...item, text, ...legendSwatch(chart.data.datasets[item.datasetIndex!] as unknown as ChartDataset) };
  }),
};
/** Each line's mark over its legend sample (drawLegendMarks). */
const LEGEND_MARKS = { id: 'legendMarks', afterDraw: (chart: Chart) => drawLegendMarks(chart as unknown as LegendChart, (ctx, o, x, y) => drawPoint(ctx, o as Parameters<typeof drawPoint>[1], x, y)) };
/** Room beside a legend label (its sample and padding) and a tooltip's line (its colour box and padding), px. */
const LEGEND_MARGIN = 48, TOOLTIP_MARGIN = 40;

/**
 * A chart's numbers as a table, in the element its aria-details names (its text alternative beside the summary line): a
 * row per sequence length, a column per series (the HBM limit in the caption), each point's GiB and, past the HBM, "does
 * not fit" in words (a measured run out of memory: "out of memory"). No chart: no rows.
 */
function chartTable(canvas: HTMLCanvasElement, chart: Chart | null): void {
  const table = detailsTable(canvas);
  if (!table) return;
  const all = (chart?.data.datasets ?? []).map((d) => ({ label: d.label ?? '', pts: d.data as TooltipItem['raw'][] }));
  const limit = all.find((s) => s.pts.some((p) => p.source === 'limit'))?.label, sets = all.filter((s) => s.label !== limit);
  const xs = [...new Set(sets.flatMap((s) => s.pts.map((p) => p.x)))].sort((a, b) => a - b);
  // Several points of a series at one length (measured runs of other setups) each say their setup.
  const cell = (p: TooltipItem['raw'], many: boolean) => {
    const setup = many ? measuredSetup(p.source) : undefined;
    return `${p.source?.endsWith(': out of memory') ? 'out of memory' : `${sig3(p.y)}${p.fits === false ? ' (does not fit)' : ''}`}${setup ? ` [${setup}]` : ''}`;
  };
  const at = (pts: TooltipItem['raw'][]) => pts.map((p) => cell(p, pts.length > 1)).join(', ') || '—';
  fillTable(table, `Peak memory per GPU (GiB) at each sequence length (tokens), as the chart draws it${limit ? `; the limit: ${limit}` : ''}`, ['tokens', ...sets.map((s) => s.label)],
    xs.map((x) => [formatTokens(x), ...sets.map((s) => ({ text: at(s.pts.filter((p) => p.x === x)), cls: 'num' }))]));
}

function drawMemoryChart(canvas: HTMLCanvasElement, old: Chart | null, cfg: MemoryChartConfig, details: Breakdowns, onPoint?: (p: SweepPoint) => void, more?: (p: SweepPoint) => string[]): Chart {
  old?.destroy();
  chartKeys.set(canvas, { details, onPoint, more, at: null });
  const live = chartLive.get(canvas);
  if (live) live.textContent = '';
  const title = (cfg.options as { plugins: { title: { text: string[] } } }).plugins.title.text.join(' ');
  canvas.setAttribute('aria-label', `Chart: ${title}. Peak memory per GPU (GiB) against sequence length; the line under it sums it up, the table under it gives its points. Arrow keys step through its points.`);
  // A fresh copy of the configuration for each chart drawn from it: the page's and the PNG export's (web/chartFit.ts).
  const chart = drawFitted(canvas, () => pageChartConfig(structuredClone(cfg), details, onPoint, more));
  chartTable(canvas, chart);
  return chart;
}

/** A memory chart's configuration (src/memory/chart.ts) with the page's ticks, legend, tooltips and hover. */
function pageChartConfig(cfg: MemoryChartConfig, details: Breakdowns, onPoint?: (p: SweepPoint) => void, more?: (p: SweepPoint) => string[]) {
  const opts = cfg.options as { scales: { x: Record<string, unknown> }; plugins: Record<string, unknown>; onHover?: unknown };
  opts.scales.x.ticks = { callback: (v: number | string) => formatTokens(Number(v)), autoSkip: false };
  opts.scales.x.afterBuildTicks = (axis: { min: number; max: number; ticks: { value: number }[] }) => {
    const t = [];
    for (let v = axis.min; v <= axis.max; v *= 2) t.push({ value: v });
    axis.ticks = t;
  };
  const legend = opts.plugins.legend as { labels?: object };
  opts.plugins.legend = { ...legend, labels: { ...legend.labels, ...LEGEND_LABELS } };
  opts.plugins.tooltip = {
    ...TOOLTIP_STYLE,
    // No title: the first line names the point, its tokens included. A line wider than a narrow chart is broken.
    callbacks: { title: () => [], label: (ctx: TooltipItem & { chart: Chart }) => fitLines(pointTip(ctx.dataset.label, ctx.raw, details, more), ctx.chart.width - TOOLTIP_MARGIN, TOOLTIP_STYLE.bodyFont) },
  };
  opts.onHover = (_e: unknown, els: { datasetIndex: number; index: number }[], chart: Chart) => {
    const el = els[0];
    if (!el || !onPoint) return;
    const ds = chart.data.datasets[el.datasetIndex];
    const p = details.get(`${ds.label}|${(ds.data[el.index] as { x: number }).x}`);
    if (p) onPoint(p);
  };
  return { ...cfg, plugins: [DRAWN_SCALE, LEGEND_MARKS] };
}

/** Client coordinates of a drawn point (where the canvas shows scaled down, as scaled), the open tooltip's lines and its size (for the page tests). */
function chartProbe(chart: () => Chart | null) {
  return {
    pointAt: (label: string, x: number) => {
      const c = chart();
      const i = c?.data.datasets.findIndex((d) => d.label === label) ?? -1;
      if (!c || i < 0) return null;
      const k = (c.data.datasets[i].data as { x: number }[]).findIndex((p) => p.x === x);
      const el = c.getDatasetMeta(i).data[k];
      const rect = c.canvas.getBoundingClientRect();
      return el ? { x: rect.left + (el.x * rect.width) / c.width, y: rect.top + (el.y * rect.height) / c.height } : null;
    },
    /** The tooltip's lines while it shows (none once hidden: its body outlives it). */
    tooltip: () => (chart()?.tooltip?.getActiveElements().length ? chart()!.tooltip!.body?.flatMap((b) => b.lines) ?? [] : []),
    /** The subtitle as one line. */
    subtitle: () => {
      const t = (chart()?.options.plugins?.subtitle as { text?: string | string[] } | undefined)?.text;
      return Array.isArray(t) ? t.join(' ') : t ?? '';
    },
    /** Each axis's tick values and the plot area's box (canvas pixels). */
    axes: () => {
      const c = chart();
      return c ? { x: c.scales.x.ticks.map((t) => t.value), y: c.scales.y.ticks.map((t) => t.value), area: { ...c.chartArea } } : null;
    },
    /** The legend's items (text, point style, dash, and the box each takes, canvas pixels) and whether they draw point styles. */
    legend: () => {
      const l = chart()?.legend as unknown as { legendItems?: LegendItem[]; legendHitBoxes: { left: number; top: number; width: number; height: number }[]; options: { labels: { usePointStyle?: boolean } } } | undefined;
      return l?.legendItems ? {
        usePointStyle: !!l.options.labels.usePointStyle,
        items: l.legendItems.map((it, i) => ({ text: it.text, hidden: !!it.hidden, pointStyle: it.pointStyle, mark: (it as { mark?: string }).mark ?? null, lineDash: it.lineDash ?? [], color: it.strokeStyle, box: { ...l.legendHitBoxes[i] } })),
      } : null;
    },
    /**
     * The chart's text as it shows, in CSS pixels (Chart.js's font sizes times the scale the canvas shows at): the
     * ticks', the legend's and the title's, with that scale and the chart's drawn size.
     */
    text: () => {
      const c = chart();
      if (!c) return null;
      const k = c.canvas.getBoundingClientRect().width / c.width, size = (f: unknown) => toFont(f as Partial<FontSpec>).size * k;
      const ticks = (axis: string) => size((c.scales[axis] as unknown as { _resolveTickFontOptions(i: number): FontSpec })._resolveTickFontOptions(0));
      return { scale: k, xTicks: ticks('x'), yTicks: ticks('y'), legend: size(c.legend?.options.labels.font), title: size(c.options.plugins?.title?.font), width: c.width, height: c.height };
    },
    /** The open tooltip's box and body font size (px), and the chart's size. */
    tooltipSize: () => {
      const c = chart(), t = c?.tooltip as unknown as { width: number; height: number; options: { bodyFont: { size: number } } } | undefined;
      return c && t ? { width: t.width, height: t.height, font: t.options.bodyFont.size, chart: { width: c.width, height: c.height } } : null;
    },
  };
}

// ---------- memory planner ----------

const form = $<HTMLFormElement>('planner-form');
const field = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
const select = (n: string) => form.elements.namedItem(n) as HTMLSelectElement;
const presetSelect = select('preset');
for (const [k, p] of Object.entries(PRESETS)) presetSelect.add(new Option(`${k} — ${p.note}`, k));
const stackSelect = select('stack');
for (const [k, s] of Object.entries(STACKS)) stackSelect.add(new Option(s.label, k));
const replayHbm = $<HTMLInputElement>('replay-hbm');

const MODEL_FIELDS = ['layers', 'hidden', 'heads', 'groups', 'ffn', 'vocab', 'attdrop', 'hiddrop', 'pos', 'maxpos', 'norm', 'experts', 'topk', 'moeffn', 'shared', 'capacity', 'score', 'dispatcher', 'ep'];
/** The model's checkboxes (their URL keys are their names, '1' or '0'). */
const MODEL_CHECKS = ['swiglu', 'unfused', 'unfusedgelu', 'untie', 'nobias', 'expertbias'];
/** The MoE controls besides the experts: greyed, and not read, on a dense model. */
const MOE_CONTROLS = ['topk', 'moeffn', 'shared', 'capacity', 'score', 'expertbias', 'dispatcher', 'ep'];
/** The planner's parallel and stack settings in a link: its fields, and its boxes ticked by default as DEFAULT_VIEW says ('fp32' apart: the stack sets it). */
const PARALLEL_FIELDS = ['mb', 'tp', 'pp', 'dp', 'vpp', 'hbm', 'lines', 'seqs'];
const PARALLEL_CHECKS = ['sp', 'flash', 'distopt', 'fp32res', 'torchopt'];
const RC_FIELDS = ['rc', 'rcmethod', 'rcn', ...RECOMPUTE_MODULES.map((m) => `rc_${m}`)];
/**
 * The recompute controls in a view without them (index.html's own: selective, uniform, N = 1, no module ticked);
 * the first recomputing line then sets what it says, and with none core_attn + mlp are ticked (controlsFromLines).
 */
const RC_DEFAULTS: Record<string, string> = { rc: 'selective', rcmethod: 'uniform', rcn: '1', ...Object.fromEntries(RECOMPUTE_MODULES.map((m) => [`rc_${m}`, '0'])) };
const DEFAULT_VIEW: Record<string, string> = { preset: 'seed-32L-4096h', mb: '1', tp: '8', sp: '1', pp: '1', dp: '1', vpp: '', distopt: '0', fp32res: '0', torchopt: '0', flash: '1', fp32: '0', hbm: '80', lines: DEFAULT_LINES_SPEC, seqs: DEFAULT_SEQ_LENGTHS.join(','), cpcomm: 'p2p' };
/** The CP comm type select's options: the memory model's types (CP_COMM_TYPES), each with what it is. */
const CP_COMM_LABELS: Record<CpCommType, string> = { p2p: 'p2p (ring)', all_gather: 'all_gather', a2a: 'a2a (Ulysses)' };
for (const t of CP_COMM_TYPES) select('cpcomm').add(new Option(CP_COMM_LABELS[t], t));
for (const f of MOE_SCORE_FUNCTIONS) select('score').add(new Option(f, f));
for (const d of MOE_DISPATCHERS) select('dispatcher').add(new Option(d, d));

function setModelFields(m: ModelConfig): void {
  field('layers').value = String(m.numLayers);
  field('hidden').value = String(m.hiddenSize);
  field('heads').value = String(m.numAttentionHeads);
  field('groups').value = String(m.numQueryGroups ?? m.numAttentionHeads);
  field('ffn').value = String(ffnWidth(m));
  field('vocab').value = String(m.vocabSize ?? DEFAULT_VOCAB_SIZE);
  field('swiglu').checked = !!m.swiglu;
  field('fp32').checked = m.paramPrecision === 'amp';
  // A dense preset clears the MoE fields (experts 0; top-k and the expert width empty: their defaults).
  field('experts').value = String(m.moe?.numExperts ?? 0);
  field('topk').value = m.moe ? String(m.moe.routerTopk) : '';
  field('moeffn').value = m.moe?.ffnHiddenSize === undefined ? '' : String(m.moe.ffnHiddenSize);
  field('shared').value = String(m.moe?.sharedExpertSize ?? 0);
  field('unfused').checked = !!m.swiglu && m.biasActivationFusion === false;
  field('unfusedgelu').checked = !m.swiglu && m.biasActivationFusion === false;
  field('attdrop').value = String(m.attentionDropout ?? 0.1);
  field('hiddrop').value = String(m.hiddenDropout ?? 0.1);
  select('pos').value = m.positionEmbedding ?? ''; // '': the model's default (RoPE with SwiGLU, learned otherwise)
  field('maxpos').value = m.maxPositionEmbeddings === undefined ? '' : String(m.maxPositionEmbeddings); // '': each sequence length's own
  field('untie').checked = !!m.untieEmbeddings;
  field('nobias').checked = m.biasLinear === false;
  select('norm').value = normName(m);
  field('capacity').value = m.moe?.capacityFactor === undefined ? '' : String(m.moe.capacityFactor);
  select('score').value = m.moe?.scoreFunction ?? 'softmax';
  field('expertbias').checked = !!m.moe?.expertBias;
  select('dispatcher').value = m.moe?.dispatcher ?? MOE_DISPATCHERS[0];   // Megatron-LM's default, allgather (model.ts MOE_DISPATCHERS)
  field('ep').value = '1';
  syncModelControls();
}

/** The MoE fields mean something only with experts, unfused SwiGLU only with SwiGLU, unfused GeLU only without: otherwise they are greyed. */
function syncModelControls(): void {
  const moe = Number(field('experts').value) > 0;
  for (const k of MOE_CONTROLS) field(k).disabled = !moe;
  field('moeffn').placeholder = field('ffn').value;
  field('unfused').disabled = !field('swiglu').checked;
  field('unfusedgelu').disabled = field('swiglu').checked;
}

/** SwiGLU toggled: an MLP width at the other setting's default follows to this one's (4h, or ⌊(4h·2/3)/64⌋·64 as Megatron-LM); a width typed in stays. */
function swigluWidth(): void {
  const hiddenSize = Number(field('hidden').value), swiglu = field('swiglu').checked;
  if (field('ffn').value === String(ffnWidth({ hiddenSize, swiglu: !swiglu }))) field('ffn').value = String(ffnWidth({ hiddenSize, swiglu }));
}

/** Megatron-LM's own settings, which the PyTorch AMP stack (DDP with PyTorch's ring) does not have: held at their neutral values there. */
const MEGATRON_ONLY: [name: string, neutral: string][] = [['tp', '1'], ['pp', '1'], ['distopt', '0'], ['cpcomm', 'p2p']];

const megatronField = (name: string) => (name === 'cpcomm' ? select(name) : field(name));

/**
 * The stack; PyTorch AMP implies fp32 parameters (the box is then ticked and fixed) and has no TP, PP,
 * distributed optimizer or CP communication type of Megatron-LM's (those fields are then set to 1, off or p2p, and fixed).
 */
function setStack(stack: Stack): void {
  const amp = stack === 'torch-amp', box = field('fp32');
  if (amp) box.checked = true;
  else if (box.disabled) box.checked = false;
  box.disabled = amp;
  box.parentElement!.title = amp ? 'implied by the PyTorch AMP stack' : '';
  for (const [name, neutral] of MEGATRON_ONLY) {
    const el = megatronField(name);
    const box = el instanceof HTMLInputElement && el.type === 'checkbox';
    const get = () => (box ? ((el as HTMLInputElement).checked ? '1' : '0') : el.value);
    const set = (x: string) => (box ? ((el as HTMLInputElement).checked = x === '1') : (el.value = x));
    // What the field held before PyTorch AMP fixed it comes back with Megatron-LM.
    if (amp && !el.disabled) el.dataset.megatron = get();
    if (amp) set(neutral);
    else if (el.disabled && el.dataset.megatron !== undefined) set(el.dataset.megatron);
    el.disabled = amp;
    el.title = amp ? "Megatron-LM's: the PyTorch AMP stack (DDP with PyTorch's context-parallel ring) has none" : '';
  }
  stackSelect.value = stack;
}

/** A box's value in the view: 1 (ticked) or 0. */
const isFlag = (x: string) => x === '0' || x === '1';

/** The view from the URL hash into every panel's fields; returns the link's parameters and the keys it set aside. */
function loadView(): { q: URLSearchParams; setAside: Set<string> } {
  const q = new URLSearchParams(location.hash.slice(1));
  // The view's values come from the hash: none held back for Megatron-LM (setStack holds them again under PyTorch AMP).
  for (const [name] of MEGATRON_ONLY) {
    const el = megatronField(name);
    el.disabled = false;
    delete el.dataset.megatron;
  }
  const v = (k: string) => q.get(k) ?? DEFAULT_VIEW[k];
  // Values the page does not know are set aside (the defaults shown) and said, not dropped silently.
  const ignored: string[] = [];
  const known = (k: string, ok: (x: string) => boolean) => !q.has(k) || ok(q.get(k)!) || !ignored.push(`${k}=${q.get(k)}`);
  const option = (k: string) => (x: string) => Array.from(select(k).options).some((o) => o.value === x);
  known('preset', (x) => Object.hasOwn(PRESETS, x));
  known('cpcomm', option('cpcomm'));
  known('stack', (x) => Object.hasOwn(STACKS, x));
  // A box is ticked by 1 and cleared by 0: anything else ('true', 'yes') is set aside, not read as cleared.
  const given = (k: string) => (q.has(k) && isFlag(q.get(k)!) ? q.get(k)! : null);
  for (const k of [...MODEL_CHECKS, ...PARALLEL_CHECKS, 'fp32', 'cpcausal']) known(k, isFlag);
  presetSelect.value = Object.hasOwn(PRESETS, v('preset')) ? v('preset') : DEFAULT_VIEW.preset;
  const preset = PRESETS[presetSelect.value];
  setModelFields(preset.model);
  // A value a field cannot hold (tp=abc, which a number field empties) is set aside too: the preset's or the default shown.
  for (const k of MODEL_FIELDS) {
    const el = form.elements.namedItem(k) as HTMLInputElement | HTMLSelectElement;
    linkValue(el, q, k, el.value, ignored);
  }
  for (const k of MODEL_CHECKS) if (given(k) !== null) field(k).checked = given(k) === '1';
  syncModelControls();
  for (const k of PARALLEL_FIELDS) linkValue(field(k), q, k, DEFAULT_VIEW[k], ignored);
  for (const k of PARALLEL_CHECKS) field(k).checked = (given(k) ?? DEFAULT_VIEW[k]) === '1';
  if (given('fp32') !== null) field('fp32').checked = given('fp32') === '1';
  field('fp32').disabled = false;
  select('cpcomm').value = (CP_COMM_TYPES as readonly string[]).includes(v('cpcomm')) ? v('cpcomm') : DEFAULT_VIEW.cpcomm;
  const st = q.get('stack');
  setStack(st && Object.hasOwn(STACKS, st) ? (st as Stack) : preset.stack ?? 'megatron');
  linkValue(replayHbm, q, 'rhbm', String(SHIPPED_HBM), ignored);
  known('cplink', (x) => LINK_NAMES.includes(x));
  ignored.push(...loadRecomputeView(q));
  ignored.push(...loadCpView(q));
  ignored.push(...advisor.load(q));
  ignored.push(...loadLiveView(q));
  controlsFromLines();
  // Keys no view has (a misspelt TP=4) are left out, and said: a link's setting never vanishes unsaid.
  const keys = viewParams(), unknown = [...new Set(q.keys())].filter((k) => !keys.has(k)).map((k) => (q.get(k) ? `${k}=${q.get(k)}` : k));
  // What shows instead of each: the default, or the preset's (a field the view leaves empty: 'agbs empty').
  const setAside = new Set(ignored.map((x) => x.slice(0, x.indexOf('='))));
  const used = [...setAside].map((k) => keyValueWords(k, keys.get(k))).join(', ');
  const values = ignored.length ? `This link's ${ignored.join(', ')} ${ignored.length === 1 ? 'is not a value' : 'are not values'} the page knows: set aside, ${ignored.length === 1 ? 'the default' : 'the defaults'} shown instead (${used}).` : '';
  const keyWords = unknown.length ? `${ignored.length ? 'Its' : "This link's"} ${unknown.join(', ')} ${unknown.length === 1 ? 'is not a key' : 'are not keys'} of a view the page knows: left out.` : '';
  $('view-note').textContent = [values, keyWords].filter(Boolean).join(' ');
  return { q, setAside };
}

/** A view key's value as the top line says it: 'tp=8', or 'agbs empty' (a field the view leaves empty). */
const keyValueWords = (k: string, v: string | null | undefined) => (v ? `${k}=${v}` : `${k} empty`);

/** The forms whose marked fields the top line names: each one's key prefix (the live form's keys are its names after 'l') and owner's words. */
const MARKED_FORMS = [['planner-form', '', "the planner's"], ['cp-form', '', "the CP panel's"], ['advisor-form', '', "the advisor's"], ['live-form', 'l', "the live form's"]] as const;

/** A marked control's name as its label shows it ('global batch': the label's text before the control), else null. */
function labelWords(el: HTMLElement): string | null {
  const label = el.closest('label'), nodes = label ? Array.from(label.childNodes) : [];
  const before = nodes.slice(0, nodes.findIndex((n) => n === el || n.contains(el))).map((n) => n.textContent ?? '').join('').trim();
  return before || null;
}

/**
 * What the panels refused of a link just drawn, for the top line: each field marked (planner, CP panel, advisor, live
 * form) whose value the link gave, as "This link's tp=3 is refused: <why>"; a field whose value the link did not give
 * (or gave one set aside), named with its panel, label and value, and what to do (the planner's micro batch against
 * the advisor's empty global batch); a refusal of no field (heads=12 against the default TP) as the link's view's.
 * The message beside the field alone was easy to miss for one opening a shared link.
 */
function refusedWords(q: URLSearchParams, setAside: Set<string>): string {
  const said: string[] = [];
  for (const [id, prefix, owner] of MARKED_FORMS) {
    const marked = Array.from(document.querySelectorAll<HTMLInputElement>(`#${id} [aria-invalid="true"]`));
    for (const el of marked) {
      const why = (document.getElementById(el.getAttribute('aria-describedby') ?? '')?.textContent ?? '').replace(/[^.]$/, '$&.');
      const k = el.name ? `${prefix}${el.name}` : '', label = labelWords(el);
      if (k && q.has(k) && !setAside.has(k)) said.push(`This link's ${k}=${q.get(k)} is refused: ${why}`);
      else if (k && label) said.push(notTheLinks(`${owner} ${label}`, keyValueWords(k, el.value), setAside.has(k) ? keyValueWords(k, q.get(k)) : null, k, why));
      else said.push(`This link's view is refused: ${why}`);
    }
  }
  const planner = $('planner-error').textContent;
  if (planner && !document.querySelector('#planner-form [aria-invalid="true"]')) said.unshift(`This link's view is refused: ${planner.replace(/[^.]$/, '$&.')}`);
  return said.join(' ');
}

/**
 * A refused field whose value is not the link's (`field`: its owner and label; `shown`: its key and value): where, the
 * value, why the link did not give it (none, or `setAside`, the link's value the field could not hold), why, and what to do.
 */
function notTheLinks(field: string, shown: string, setAside: string | null, k: string, why: string): string {
  return `This link's view is refused at ${field}, ${shown} (${setAside ? `the default shown for the link's ${setAside}` : 'the link does not give it'}): ${why} ` +
    `Set ${field} to a value it takes (the link then keeps it as ${k}), or change what it is checked against.`;
}

/**
 * A link opened (the page loaded, or its hash changed): every panel from it, and the top line says what of it was set aside or
 * refused; again once the CP panel's plan is drawn (asynchronous: a link's cphcp=abc is refused only then), unless the view was edited first.
 */
function openView(): void {
  const { q, setAside } = loadView();
  renderPlanner();
  renderReplay();
  const note = $('view-note'), setAsideWords = note.textContent;
  const say = () => { note.textContent = [setAsideWords, refusedWords(q, setAside)].filter(Boolean).join(' '); };
  say();
  const view = location.hash; // (any edit rewrites it: the view is no longer the link's)
  onCpDrawn = () => { if (location.hash === view) say(); };
}

/**
 * The recompute controls from the view (each box 1 or 0, as the model's): what they hold beyond the lines
 * (a module unticked while no line recomputes, or while full recompute hides the modules; N and the method while
 * selective) comes back with a reload or a link. Returns the values set aside for their defaults, as `key=value`.
 */
function loadRecomputeView(q: URLSearchParams): string[] {
  const ignored: string[] = [];
  const given = (k: string, ok: (x: string) => boolean) => {
    const x = q.get(k);
    if (x !== null && !ok(x)) ignored.push(`${k}=${x}`);
    return x !== null && ok(x) ? x : RC_DEFAULTS[k];
  };
  for (const k of ['rc', 'rcmethod']) select(k).value = given(k, (x) => Array.from(select(k).options).some((o) => o.value === x));
  linkValue(field('rcn'), q, 'rcn', RC_DEFAULTS.rcn, ignored);
  for (const m of RECOMPUTE_MODULES) field(`rc_${m}`).checked = given(`rc_${m}`, isFlag) === '1';
  return ignored;
}

const saveRecomputeView = (q: URLSearchParams) => {
  for (const k of RC_FIELDS) q.set(k, k.startsWith('rc_') ? (field(k).checked ? '1' : '0') : (form.elements.namedItem(k) as HTMLInputElement | HTMLSelectElement).value);
};

/** The whole view (every panel's fields) as the URL hash's parameters. */
function viewParams(): URLSearchParams {
  const q = new URLSearchParams();
  q.set('preset', presetSelect.value);
  q.set('stack', stackSelect.value);
  for (const k of [...MODEL_FIELDS, ...PARALLEL_FIELDS]) q.set(k, field(k).value);
  for (const k of [...MODEL_CHECKS, ...PARALLEL_CHECKS, 'fp32']) q.set(k, field(k).checked ? '1' : '0');
  q.set('rhbm', replayHbm.value);
  q.set('cpcomm', select('cpcomm').value);
  saveRecomputeView(q);
  // Under PyTorch AMP, Megatron-LM's fields keep what they held for Megatron-LM (a reload or a switch back restores it).
  for (const [name] of MEGATRON_ONLY) {
    const held = megatronField(name).dataset.megatron;
    if (megatronField(name).disabled && held !== undefined) q.set(name, held);
  }
  saveCpView(q);
  advisor.save(q);
  saveLiveView(q);
  return q;
}

function saveView(): void {
  replaceViewHash(viewParams());
}

/** A whole number from 1 to `max` in a field, or a FieldError in the page's words. */
function positiveWhole(input: HTMLInputElement, label: string, max: number): number {
  const raw = input.value.trim(), v = Number(raw);
  if (raw === '' || !Number.isInteger(v) || v < 1) throw new FieldError(`${label} must be a positive whole number (it is ${raw === '' ? 'empty or not a number' : raw}).`, input);
  if (v > max) throw new FieldError(`${label} can be at most ${max.toLocaleString('en-US')} (it is ${raw}).`, input);
  return v;
}

/** What `f` returns; bad input it throws (the model's own check) said beside `control`; a bug passes on as it is. */
function onField<T>(control: HTMLElement, f: () => T): T {
  try {
    return f();
  } catch (e) {
    throw e instanceof FieldError || !isInputError(e) ? e : new FieldError((e as Error).message, control);
  }
}

function readHbm(input: HTMLInputElement): number {
  const raw = input.value.trim(), v = Number(raw);
  if (raw === '' || !Number.isFinite(v) || v <= 0 || v > 1e6) throw new FieldError(`HBM must be a positive number of GiB, at most 1,000,000 (it is ${raw === '' ? 'empty or not a number' : raw}).`, input);
  return v;
}

// ---------- planner: recompute controls (they edit the recomputing items of the lines) ----------

/**
 * The recompute setting the controls describe, as the lines syntax writes it. Switching the
 * granularity shows that granularity's controls, filled where they are empty or invalid (the
 * lines may never have set them, as in a view saved in the other mode): N = 1, and
 * core_attn + mlp as the modules.
 */
function specFromControls(changed?: string): string {
  const full = select('rc').value === 'full';
  (form.querySelector('.rc-full') as HTMLElement).hidden = !full;
  (form.querySelector('.rc-selective') as HTMLElement).hidden = full;
  if (changed === 'rc' && full && !/^[1-9]\d*$/.test(field('rcn').value.trim())) field('rcn').value = '1';
  if (changed === 'rc' && !full && !RECOMPUTE_MODULES.some((m) => field(`rc_${m}`).checked))
    for (const m of ['core_attn', 'mlp']) field(`rc_${m}`).checked = true;
  if (full) return `full:${select('rcmethod').value}/${positiveWhole(field('rcn'), 'Recompute layers N', 100_000)}`;
  const mods = RECOMPUTE_MODULES.filter((m) => field(`rc_${m}`).checked);
  if (!mods.length) {
    // the modules this model has: moe with experts, shared_experts with a shared expert
    const has = RECOMPUTE_MODULES.filter((m) => (m !== 'moe' || Number(field('experts').value) > 0) && (m !== 'shared_experts' || (Number(field('experts').value) > 0 && Number(field('shared').value) > 0)));
    throw new FieldError(`Pick at least one module to recompute (${has.join(', ')}).`, form.querySelector<HTMLElement>('fieldset.recompute'));
  }
  return recomputeSpec({ recompute: 'selective', recomputeModules: mods });
}

const lineItems = () => field('lines').value.split(',').map(lineParts);
/**
 * What `recompute` in the lines stands for on the model the fields describe (defaultRecompute: full layers
 * where Megatron-LM cannot train the MLP's checkpoint); while a model field does not read, the planner says
 * that field's error, and the controls show the selective default meanwhile.
 */
function linesDefaultRecompute(): string {
  return modelDefaultRecompute() ?? SELECTIVE_RECOMPUTE;
}

/** The model's default "+ recompute" (defaultRecompute), or null while a model field does not read. */
function modelDefaultRecompute(): string | null {
  try {
    return defaultRecompute(readModel(), stackSelect.value as Stack);
  } catch (e) {
    if (isInputError(e)) return null;
    throw e;
  }
}
const itemRecompute = (rest: string[]) => (rest.join(':') === 'recompute' ? linesDefaultRecompute() : rest.join(':'));

/** Shows the first recomputing line's setting in the controls. */
function controlsFromLines(): void {
  let any = false;
  for (const [, ...rest] of lineItems()) {
    if (!rest.length || rest.join(':') === 'none') continue;
    any = true;
    let r;
    try { r = parseRecomputeSpec(itemRecompute(rest), 'Lines'); } catch { continue; }
    select('rc').value = r.recompute;
    if (r.recompute === 'selective') for (const m of RECOMPUTE_MODULES) field(`rc_${m}`).checked = (r.recomputeModules ?? ['core_attn']).includes(m);
    if (r.recompute === 'full') {
      select('rcmethod').value = r.recomputeMethod!;
      if ((r.recomputeNumLayers ?? 0) >= 1) field('rcn').value = String(r.recomputeNumLayers); // an invalid N stays the lines' error
    }
    break;
  }
  if (!any && !RECOMPUTE_MODULES.some((m) => field(`rc_${m}`).checked)) for (const m of ['core_attn', 'mlp']) field(`rc_${m}`).checked = true;
  const full = select('rc').value === 'full';
  (form.querySelector('.rc-full') as HTMLElement).hidden = !full;
  (form.querySelector('.rc-selective') as HTMLElement).hidden = full;
  $('rc-note').textContent = any ? '' : 'No line recomputes: add one to the lines as CP:recompute.';
}

/** A recompute setting in one spelling (modules in RECOMPUTE_MODULES' order), to compare two. */
function canonicalRecompute(spec: string): string {
  const r = parseRecomputeSpec(spec, 'Lines');
  if (r.recomputeModules) r.recomputeModules = RECOMPUTE_MODULES.filter((m) => r.recomputeModules!.includes(m));
  return recomputeSpec(r);
}

/**
 * Writes the controls' setting into every recomputing line: as `recompute` where it is the model's
 * default "+ recompute" (so the lines keep following the model: ticking "no linear biases" moves them).
 */
function linesFromControls(changed?: string): void {
  const own = specFromControls(changed), dflt = modelDefaultRecompute();
  // Only where the model reads: `recompute` written against a stand-in default would flip once it does.
  const spec = dflt !== null && canonicalRecompute(own) === canonicalRecompute(dflt) ? 'recompute' : own;
  field('lines').value = lineItems().map(([cp, ...rest]) => (rest.length && rest.join(':') !== 'none' ? `${cp}:${spec}` : [cp, ...rest].join(':'))).join(',');
}

// ---------- planner: reading and checking the controls ----------

function readModel(): ModelConfig {
  const layers = positiveWhole(field('layers'), 'Layers', 100_000), hidden = positiveWhole(field('hidden'), 'Hidden size', 1_000_000);
  const heads = positiveWhole(field('heads'), 'Heads', 100_000), groups = positiveWhole(field('groups'), 'K/V groups', 100_000);
  const ffn = positiveWhole(field('ffn'), 'MLP width', 10_000_000), vocab = positiveWhole(field('vocab'), 'Vocabulary', 100_000_000);
  if (hidden % heads) throw new FieldError(`Hidden size (${hidden}) must be divisible by heads (${heads}).`, field('heads'));
  if (heads % groups) throw new FieldError(`Heads (${heads}) must be a multiple of K/V groups (${groups}).`, field('groups'));
  return {
    ...PRESETS[presetSelect.value].model, numLayers: layers, hiddenSize: hidden, numAttentionHeads: heads, numQueryGroups: groups,
    ffnHiddenSize: ffn, vocabSize: vocab, swiglu: field('swiglu').checked, moe: readMoe(),
    attentionDropout: probability(field('attdrop'), 'Attention dropout'), hiddenDropout: probability(field('hiddrop'), 'Hidden dropout'),
    positionEmbedding: (select('pos').value || undefined) as ModelConfig['positionEmbedding'], untieEmbeddings: field('untie').checked,
    maxPositionEmbeddings: optionalWhole(field('maxpos'), 'Max positions', 2 ** 31, 1, 'a positive whole number (empty: the sequence length)'),
    // Megatron-LM's bias_activation_fusion: the SwiGLU box with SwiGLU, the GeLU one with GeLU, as configFromFlags reads the flags (src/cli/memory.ts:139)
    biasActivationFusion: field(field('swiglu').checked ? 'unfused' : 'unfusedgelu').checked ? false : undefined,
    biasLinear: field('nobias').checked ? false : undefined, rmsNorm: select('norm').value === 'RMSNorm' ? true : undefined,
    paramPrecision: field('fp32').checked && stackSelect.value === 'megatron' ? 'amp' : undefined,
  };
}

/** A probability in [0, 1) in a field (a dropout rate), or a FieldError in the page's words. */
function probability(input: HTMLInputElement, label: string): number {
  const raw = input.value.trim(), v = Number(raw);
  if (raw === '' || !Number.isFinite(v) || v < 0 || v >= 1) throw new FieldError(`${label} must be a probability, at least 0 and below 1 (it is ${raw === '' ? 'empty or not a number' : raw}).`, input);
  return v;
}

/** A whole number from `min` (0 or 1) to `max`, or undefined when the field is empty (its default). */
function optionalWhole(input: HTMLInputElement, label: string, max: number, min: 0 | 1, what: string): number | undefined {
  const raw = input.value.trim(), v = Number(raw);
  if (raw === '' && !input.validity.badInput) return undefined;
  if (raw === '' || !Number.isInteger(v) || v < min) throw new FieldError(`${label} must be ${what} (it is ${raw === '' ? 'not a number' : raw}).`, input);
  if (v > max) throw new FieldError(`${label} can be at most ${max.toLocaleString('en-US')} (it is ${raw}).`, input);
  return v;
}

/** The MoE fields: none with 0 experts (the other MoE fields are then not read). */
function readMoe(): MoeConfig | undefined {
  const experts = optionalWhole(field('experts'), 'Experts', 100_000, 0, 'a whole number, 0 for a dense model');
  if (experts === undefined) throw new FieldError('Experts must be a whole number, 0 for a dense model (it is empty).', field('experts'));
  if (experts === 0) return undefined;
  const topk = optionalWhole(field('topk'), 'Top-k', 100_000, 1, 'a positive whole number (empty: 2)') ?? 2;
  if (topk > experts) throw new FieldError(`Top-k (${topk}) can be at most the experts (${experts}): each token goes to ${topk} different experts.`, field('topk'));
  const moe: MoeConfig = { numExperts: experts, routerTopk: topk };
  const fe = optionalWhole(field('moeffn'), 'Expert MLP width', 10_000_000, 1, 'a positive whole number (empty: the MLP width)');
  if (fe !== undefined) moe.ffnHiddenSize = fe;
  const shared = optionalWhole(field('shared'), 'Shared expert width', 10_000_000, 0, 'a whole number, 0 for none');
  if (shared) moe.sharedExpertSize = shared;
  const cap = field('capacity').value.trim(), c = Number(cap);
  if ((cap !== '' || field('capacity').validity.badInput) && !(cap !== '' && Number.isFinite(c) && c > 0 && c <= 1e6))
    throw new FieldError(`Capacity factor must be a positive number, at most 1,000,000 (empty: no token dropping) (it is ${cap === '' ? 'not a number' : cap}).`, field('capacity'));
  if (cap !== '') moe.capacityFactor = c;
  // As configFromFlags sets them (src/cli/memory.ts:167-173); the expert bias with softmax is the model's refusal (validate), said beside the expert bias (onModelField).
  const score = select('score').value as MoeScoreFunction;
  if (score !== 'softmax') moe.scoreFunction = score;
  if (field('expertbias').checked) moe.expertBias = true;
  const dispatcher = select('dispatcher').value as MoeDispatcher;
  if (dispatcher !== MOE_DISPATCHERS[0]) moe.dispatcher = dispatcher;
  return moe;
}

function readParallel(model: ModelConfig): ParallelConfig {
  const mb = positiveWhole(field('mb'), 'Micro batch', 1_000_000), tp = positiveWhole(field('tp'), 'TP', 1_000_000), pp = positiveWhole(field('pp'), 'PP', 1_000_000);
  if (model.numAttentionHeads % tp) throw new FieldError(`Heads (${model.numAttentionHeads}) must be divisible by TP (${tp}).`, field('tp'));
  const groups = model.numQueryGroups ?? model.numAttentionHeads;
  if (groups % tp) throw new FieldError(`K/V groups (${groups}) must be divisible by TP (${tp}).`, field('tp'));
  if (model.numLayers % pp) throw new FieldError(`Layers (${model.numLayers}) must be divisible by PP (${pp}).`, field('pp'));
  const dp = positiveWhole(field('dp'), 'DP', 1_000_000), stage = model.numLayers / pp;
  const perVirtual = optionalWhole(field('vpp'), 'Layers per virtual stage', 100_000, 1, 'a positive whole number (empty: no interleaving)');
  // The CLI's check (virtualStagesOf), in the page's words.
  const virtual = virtualStagesOf(model.numLayers, pp, perVirtual);
  if (virtual.refused === 'divide') throw new FieldError(`Layers per virtual stage (${perVirtual}) must divide the ${counted(stage, 'layer')} of a pipeline stage (layers ÷ PP).`, field('vpp'));
  if (virtual.refused === 'no-pipeline')
    throw new FieldError(`Layers per virtual stage (${perVirtual}) makes ${virtual.stages} virtual stages, and Megatron-LM refuses virtual stages without a pipeline: set PP above 1, or leave layers per virtual stage empty.`, field('vpp'));
  const ep = model.moe ? positiveWhole(field('ep'), 'EP', 100_000) : undefined;
  if (ep && model.moe!.numExperts % ep) throw new FieldError(`Experts (${model.moe!.numExperts}) must be divisible by EP (${ep}).`, field('ep'));
  return {
    ...DEFAULT_PARALLEL, microBatchSize: mb, tensorParallel: tp, pipelineParallel: pp, sequenceParallel: megatronSequenceParallel(field('sp').checked, tp),
    dataParallel: dp, virtualStages: virtual.stages, distributedOptimizer: field('distopt').checked,
    fp32Residual: field('fp32res').checked, torchOptimizer: field('torchopt').checked, expertParallel: ep,
    flashAttention: field('flash').checked, stack: stackSelect.value as Stack, cpCommType: select('cpcomm').value as ParallelConfig['cpCommType'],
  };
}

/**
 * A line's full recompute in chunks of `n` layers, not from 1 to a stage's: said beside the lines and, where the recompute
 * controls show that N (typed there, or the line's own), beside N too.
 */
function chunkError(item: string, n: number, stageLayers: number): FieldError | FieldErrors {
  const stage = `the ${counted(stageLayers, 'layer')} of a pipeline stage (layers ÷ PP)`;
  const lines = new FieldError(`Lines: '${item}' recomputes chunks of ${counted(n, 'layer')}; that must be from 1 to ${stage}.`, field('lines'));
  if (select('rc').value !== 'full' || Number(field('rcn').value) !== n) return lines;
  return new FieldErrors([lines, new FieldError(`Recompute layers N (${n}) must be from 1 to ${stage}.`, field('rcn'))]);
}

function readLines(model: ModelConfig, par: ParallelConfig): SweepLine[] {
  const stageLayers = model.numLayers / par.pipelineParallel;
  const raw = field('lines').value.trim();
  if (!raw) throw new FieldError('Lines: list at least one CP size, e.g. 1,1:recompute,2,4.', field('lines'));
  for (const item of raw.split(',').map((x) => x.trim())) {
    const [cp, ...rest] = lineParts(item);
    if (!/^\d+$/.test(cp) || +cp < 1 || +cp > 4096) throw new FieldError(`Lines: '${item}' must start with a CP size, a whole number from 1 to 4096.`, field('lines'));
    if (!rest.length) continue;
    const r = onField(field('lines'), () => parseRecomputeSpec(itemRecompute(rest), 'Lines'));
    const n = r.recomputeNumLayers ?? 1;
    if (r.recompute === 'full' && (n < 1 || n > stageLayers)) throw chunkError(item, n, stageLayers);
  }
  return onField(field('lines'), () => parseLines(raw, model, par.stack));
}

/** The sweep's sequence lengths: whole numbers of tokens, each once, at most MAX_SEQS of them (the chart's x axis spans them). */
const MAX_SEQS = 64, MAX_SEQ = 2 ** 26;
function readSeqLengths(): number[] {
  const raw = field('seqs').value.trim();
  // Decimal or scientific notation, as memory --seq-lengths reads them: 1e3 is 1000 tokens.
  const items = raw.split(',').map((x) => x.trim());
  const bad = items.find((x) => { const v = decimalNumber(x); return !Number.isInteger(v) || v < 1 || v > MAX_SEQ; });
  if (!raw || bad !== undefined)
    throw new FieldError(`Sequence lengths must be whole numbers of tokens from 1 to ${MAX_SEQ.toLocaleString('en-US')}, comma-separated, like 4096,8192,16384 (${!raw ? 'it is empty' : `'${bad}' is not one`}).`, field('seqs'));
  const lens = [...new Set(items.map(decimalNumber))].sort((a, b) => a - b);
  if (lens.length > MAX_SEQS) throw new FieldError(`Sequence lengths: at most ${MAX_SEQS} of them (there are ${lens.length}).`, field('seqs'));
  return lens;
}

function readPlanner(): { model: ModelConfig; par: ParallelConfig; hbm: number; lines: SweepLine[]; seqs: number[] } {
  const model = readModel();
  const par = readParallel(model);
  const hbm = readHbm(field('hbm'));
  const lines = readLines(model, par);
  const seqs = readSeqLengths();
  // The CLI's sweep check: the table covers the longest length (onModelField puts it beside max positions).
  const table = positionTableRefusal(model, seqs.at(-1)!, { words: `the longest sequence length, ${seqs.at(-1)}`, flags: [] });
  if (table) throw table;
  for (const l of par.cpCommType === 'a2a' ? lines : []) {
    const cp = l.overrides.contextParallel ?? 1;
    const un = a2aUnsplit(model, { tensorParallel: par.tensorParallel, contextParallel: cp });
    if (un) throw new FieldError(`CP comm type a2a splits the ${un.what} of a TP rank over the CP ranks: line '${l.label}' (CP=${cp}) does not divide ${plural(un.n, 'it', 'them')}. Choose p2p or all_gather, or other lines.`, select('cpcomm'));
  }
  for (const l of lines) {
    const mods = l.overrides.recomputeModules ?? [];
    if (mods.includes('moe') && !model.moe)
      throw new FieldError(`Line '${l.label}' recomputes moe, but this model has no MoE layers: set experts above 0, or untick moe.`, field('lines'));
    if (mods.includes('shared_experts') && !model.moe?.sharedExpertSize)
      throw new FieldError(`Line '${l.label}' recomputes shared_experts, but this model has no shared expert: set experts and a shared expert width above 0, or untick shared_experts.`, field('lines'));
  }
  return { model, par, hbm, lines, seqs };
}

/**
 * The lengths each line has no point at (sweepGaps). Lengths that leave a line no point at all are the
 * lengths' error, said beside them and naming every such line; a line that cannot run at all is the lines'.
 */
function readGaps(par: ParallelConfig, seqs: number[], lines: SweepLine[]): SweepGap[] {
  try {
    return sweepGaps(par, seqs, lines);
  } catch (e) {
    if (!(e instanceof NoLengthError)) throw isInputError(e) ? new FieldError((e as Error).message, field('lines')) : e;
    const stuck = e.lines.map((l) => `'${l}'`);
    const which = stuck.length === 1 ? `line ${stuck[0]} has` : `lines ${stuck.slice(0, -1).join(', ')} and ${stuck.at(-1)} have`;
    throw new FieldError(`Sequence lengths: ${which} no point at any of them. ${sentence(e)}.`, field('seqs'));
  }
}

// ---------- planner: drawing ----------

let plannerChart: Chart | null = null;
let plannerRows: CsvRow[] = [];

function showBreakdown(p: SweepPoint | null, hbm: number, model?: ModelConfig): void {
  const b = p?.breakdown;
  $('planner-time').textContent = p && model ? `${p.line} at ${formatTokens(p.config.seqLength)} tokens: ${advisor.timeLines(model, p.config).map((l) => l.trim()).join('; ')}.` : '';
  const stage = b?.otherStage ? `; the pipeline's ${b.stage} stage, the larger: the ${b.otherStage.stage} holds ${(b.otherStage.totalBytes / GIB).toFixed(2)} GiB` : '';
  const h = b && headroom(b.totalBytes, hbm);
  const title = p && h ? `${p.line} at ${formatTokens(p.config.seqLength)} tokens: ${p.totalGib.toFixed(2)} GiB per GPU, ${h.fits ? 'fits' : 'does not fit'} in ${hbm} GiB, ${h.spare} (${STACKS[b!.stack].label} stack${stage}; hover a point for its own)${h.note ? `. ${sentence(h.note)}` : ''}` : '';
  fillTable($<HTMLTableElement>('planner-breakdown'), title, ['part', 'term', 'GiB', 'formula'],
    b && model ? breakdownRows(b, model).map((r) => [r.section, r.label, { text: (r.bytes / GIB).toFixed(3), cls: 'num' }, { text: r.formula, cls: 'formula' }]) : []);
}

/** The page's words for an error, capitalized as a sentence. */
const sentence = (e: unknown) => pageWords(e).replace(/^./, (c) => c.toUpperCase());

/**
 * Invalid controls: the message under the form and beside the control it is about, and nothing
 * drawn from them. `typing`: the advisor searches once the typing pauses (web/advise.ts).
 */
function clearPlanner(e: unknown, typing = false): void {
  const message = isInputError(e) ? sentence(e) : bugWords(e);
  $('planner-error').textContent = message;
  showFieldErrors(form, marksOf(e, sentence));
  plannerChart?.destroy();
  plannerChart = null;
  chartTable($<HTMLCanvasElement>('planner-chart'), null);
  plannerRows = [];
  $('planner-oom').textContent = '';
  showBreakdown(null, 0);
  for (const id of ['export-csv', 'export-png']) $<HTMLButtonElement>(id).disabled = true;
  hooks.planner = { error: message, lines: [], oomMarkers: 0, oom: {} };
  // The CP panel reads only the model and parallel fields: an error elsewhere (HBM, the lines)
  // leaves it planning; it clears itself when its own inputs are wrong.
  renderCp();
  advise(typing);
}

/** The advisor after a planner change: at once, or (`typing`) once the typing pauses. */
const advise = (typing: boolean) => (typing ? advisor.schedule() : advisor.render());

function renderPlanner(typing = false): void {
  saveView();
  let view, pts: SweepPoint[], gaps: ReturnType<typeof sweepGaps>;
  try {
    const v = (view = readPlanner());
    gaps = readGaps(v.par, v.seqs, v.lines);
    pts = sweep(view.model, view.par, view.seqs, view.lines, view.hbm);
  } catch (e) {
    clearPlanner(onModelField(e), typing);
    return;
  }
  showFieldErrors(form, []);
  const { model, par, hbm, lines } = view;
  plannerRows = sweepRows(pts, hbm);
  const details: Breakdowns = new Map(pts.map((p) => [`${p.line}|${p.config.seqLength}`, p]));
  const moe = model.moe ? `, ${counted(model.moe.numExperts, 'expert')} (top-${model.moe.routerTopk}${model.moe.sharedExpertSize ? ', shared expert' : ''})` : '';
  const title = `${presetSelect.value}, ${STACKS[par.stack!].label}: ${counted(model.numLayers, 'layer')}, h=${model.hiddenSize}, ${counted(model.numAttentionHeads, 'head')}${moe}, TP=${par.tensorParallel}${par.sequenceParallel ? ' + SP' : ''}, PP=${par.pipelineParallel}, DP=${par.dataParallel}${par.distributedOptimizer ? ' + distributed optimizer' : ''}, micro batch ${par.microBatchSize}, ${par.flashAttention ? 'FlashAttention' : 'no FlashAttention'}`;
  const notes = pageWords(chartNotes(model, pts, lines));
  plannerChart = drawMemoryChart($<HTMLCanvasElement>('planner-chart'), plannerChart, memoryChartConfig(plannerRows, [], hbm, title, notes), details, (p) => showBreakdown(p, hbm, model), (p) => advisor.timeTip(model, p.config));
  const oom = oomPoints(pts);
  // Where the longest that fits is tight (it may not run: headroom()), the longest with advise's margin spare too.
  const tight = (v: number | null, r: number | null) => (v !== null && r !== v ? ` (tight; with ${100 * DEFAULT_MARGIN}% spare: ${r === null ? 'none' : formatTokens(r)})` : '');
  $('planner-oom').textContent = `Longest sequence that fits in ${hbm} GiB: ` + longestFitting(pts, hbm).map(({ line, longest: v, roomy: r }) => `${line} ${v === null ? 'none' : formatTokens(v)}${tight(v, r)}`).join(' · ') +
    gaps.map((g) => g.reason === 'attention' ? `. ${g.line} has no point: Megatron-LM runs context parallelism only with FlashAttention (Transformer Engine), not with its local attention`
      : `. ${g.line} has no point at ${g.lengths.map(formatTokens).join(', ')}: Megatron-LM cannot split them over CP ${g.cp} (2·CP equal chunks${par.sequenceParallel && par.tensorParallel > 1 ? ', and s/CP over TP with SP' : ''})`).join('');
  $('planner-error').textContent = '';
  for (const id of ['export-csv', 'export-png']) $<HTMLButtonElement>(id).disabled = false;
  const first = pts.filter((p) => p.line === lines[0].label);
  showBreakdown(first.filter((p) => p.fits).at(-1) ?? first[0] ?? null, hbm, model);
  hooks.planner = {
    // The model the lines were drawn for, as the tests compare it with flashring memory's flags.
    model: { biasLinear: model.biasLinear ?? true, rmsNorm: model.rmsNorm ?? false },
    // Each point's total in bytes ('CP=1|4096': line and length), as the tests compare it with flashring memory's (GiB to two places hide kilobytes).
    totalBytes: Object.fromEntries(pts.map((p) => [`${p.line}|${p.config.seqLength}`, p.breakdown.totalBytes])),
    lines: plannerChart.data.datasets.map((d) => d.label),
    notes,
    oomMarkers: plannerChart.data.datasets.reduce((a, d) => {
      const ps = (d as { pointStyle?: unknown }).pointStyle;
      return a + (Array.isArray(ps) ? ps.filter((x) => x === 'crossRot').length : 0);
    }, 0),
    oom,
  };
  renderCp();
  advise(typing);
}
hooks.plannerChart = chartProbe(() => plannerChart);
chartKeyboard($<HTMLCanvasElement>('planner-chart'), () => plannerChart, $('planner-chart-point'));

presetSelect.addEventListener('change', () => {
  setModelFields(PRESETS[presetSelect.value].model);
  setStack(PRESETS[presetSelect.value].stack ?? 'megatron');
  controlsFromLines(); // "recompute" in the lines is the new model's (defaultRecompute): the controls show it
  renderPlanner();
});
form.addEventListener('input', (e) => {
  const name = (e.target as HTMLInputElement).name;
  if (name === 'preset') return;
  if (name === 'stack') setStack(stackSelect.value as Stack);
  if (name === 'swiglu') swigluWidth();
  syncModelControls();
  if (RC_FIELDS.includes(name)) {
    try {
      linesFromControls(name);
    } catch (err) {
      saveView(); // the link keeps what the form shows, as for any field refused
      clearPlanner(err, true);
      return;
    }
  }
  controlsFromLines();
  renderPlanner(true);
});
// Enter, or leaving a field (a select's or checkbox's change comes at once): the advisor searches now.
form.addEventListener('change', () => advisor.flush());
form.addEventListener('keydown', (e) => { if (e.key === 'Enter') advisor.flush(); });
window.addEventListener('hashchange', openView);
$('export-csv').addEventListener('click', () => download('activation_memory.csv', new Blob([toCsv(plannerRows)], { type: 'text/csv' })));
$('export-png').addEventListener('click', () => {
  if (plannerChart) download('activation_memory.png', dataUrlBlob(designPng(plannerChart)));
});
$('copy-link').addEventListener('click', () => void copyLink());

/**
 * Copies the view's link and says so; where the page may not copy, shows the link to copy by hand, saying
 * why in that case's words: no clipboard (plain http from a host other than localhost has none), or a
 * clipboard that refused the write (a permission denied, the page not focused).
 */
async function copyLink(): Promise<void> {
  const url = location.href, box = $<HTMLInputElement>('copy-by-hand');
  box.hidden = true;
  let why: string;
  if (!navigator.clipboard) why = 'This browser gives the page no clipboard here (plain http from a host other than localhost has none)';
  else {
    try {
      await navigator.clipboard.writeText(url);
      $('copy-status').textContent = 'Link copied.';
      return;
    } catch (e) {
      why = `The browser refused to let the page copy${e instanceof Error && e.name === 'NotAllowedError' ? ' (clipboard permission denied, or the page not focused)' : ''}`;
    }
  }
  $('copy-status').textContent = `${why}: copy the link below by hand.`;
  Object.assign(box, { value: url, hidden: false });
  box.focus();
  box.select();
}

function dataUrlBlob(url: string): Blob {
  const [head, data] = url.split(',');
  const bytes = Uint8Array.from(atob(data), (c) => c.charCodeAt(0));
  return new Blob([bytes], { type: head.slice(5, head.indexOf(';')) });
}

// ---------- planner: CP schemes on a link (a dry run of the rank programs, src/cp/launch/planSchemes.ts) ----------

const cpForm = $<HTMLFormElement>('cp-form');
const cpField = (n: string) => cpForm.elements.namedItem(n) as HTMLInputElement;
const CP_DEFAULTS: Record<string, string> = { cpseq: '131072', cpr: '4', cphcp: '', cplink: 'nvlink-h200', cpgbps: '800', cplat: '5', cptflops: '300', cpcausal: '1' };
/** The dry run walks every rank's steps over every pair of chunks: beyond this a plan takes seconds. */
const MAX_PLAN_TOKENS = 2 ** 23;

/** The CP panel's fields from the view; returns the values its fields cannot hold (cpr=abc), set aside for their defaults. */
function loadCpView(q: URLSearchParams): string[] {
  const ignored: string[] = [];
  for (const k of Object.keys(CP_DEFAULTS)) {
    const v = q.get(k) ?? CP_DEFAULTS[k];
    if (k === 'cpcausal') cpField(k).checked = (isFlag(v) ? v : CP_DEFAULTS[k]) === '1';   // (loadView names a value set aside)
    else if (k === 'cplink') cpField(k).value = LINK_NAMES.includes(v) ? v : CP_DEFAULTS.cplink;
    else linkValue(cpField(k), q, k, CP_DEFAULTS[k], ignored);
  }
  (cpForm.querySelector('.custom-link') as HTMLElement).hidden = cpField('cplink').value !== 'custom';
  return ignored;
}

function saveCpView(q: URLSearchParams): void {
  for (const k of Object.keys(CP_DEFAULTS)) q.set(k, k === 'cpcausal' ? (cpField(k).checked ? '1' : '0') : cpField(k).value);
}

interface CpRequest { shape: AttentionShape; R: number; causal: boolean; link: Link; tflops: number; typedSizes: string }

/**
 * The attention one GPU runs in one of the planner's layers: heads and K/V groups per TP rank
 * (readParallel has checked that TP divides both, as Megatron-LM requires), head dim = hidden ÷
 * heads, the micro batch; at the panel's sequence length and CP size.
 */
function readCpRequest(model: ModelConfig, par: ParallelConfig): CpRequest {
  const N = positiveWhole(cpField('cpseq'), 'Sequence length', 2 ** 24), R = positiveWhole(cpField('cpr'), 'CP size', 256);
  if (N * R > MAX_PLAN_TOKENS) throw new FieldError(`Sequence length × CP size can be at most ${MAX_PLAN_TOKENS.toLocaleString('en-US')} here (it is ${(N * R).toLocaleString('en-US')}): the plan counts every visible score of every rank. flashring cp-plan has no such limit.`, cpField('cpseq'));
  if (R > N) throw new FieldError(`CP size (${R}) cannot exceed the sequence length (${N}).`, cpField('cpr'));
  // The planner's check of its lines (seqSplitProblem): the stack splits the sequence into 2·CP chunks (and s/CP over TP with SP).
  const split = seqSplitProblem(N, { ...par, contextParallel: R }), sp = par.sequenceParallel && par.tensorParallel > 1 ? par.tensorParallel : 1;
  // The lengths that split: multiples of R·lcm(2, TP with SP) (of R·2 without SP, of TP at CP 1).
  if (split) throw new FieldError(`${sentence(split)}: choose a sequence length that is a multiple of ${R * (R > 1 && sp % 2 ? 2 * sp : sp)}, or another CP size.`, cpField('cpseq'));
  validateRing(N, R, 'zigzag');
  const tp = par.tensorParallel, g = model.numQueryGroups ?? model.numAttentionHeads;
  const shape: AttentionShape = { B: par.microBatchSize, Hq: model.numAttentionHeads / tp, Hkv: g / tp, Nq: N, Nk: N, D: model.hiddenSize / model.numAttentionHeads };
  const link = cpField('cplink').value === 'custom' ? customLink(cpField('cpgbps'), cpField('cplat'))
    : LINKS[cpField('cplink').value as keyof typeof LINKS];
  const tflops = fieldNumber(cpField('cptflops'), 'Kernel TFLOP/s', { min: COMPUTE_TFLOPS.min, max: COMPUTE_TFLOPS.max, what: numberFrom(COMPUTE_TFLOPS.min, COMPUTE_TFLOPS.max) });
  return { shape, R, causal: cpField('cpcausal').checked, link, tflops, typedSizes: cpField('cphcp').value.trim() };
}

/**
 * The sizes 'A,P' of a scheme that takes them (a2a+p2p), as typed in the panel, or (empty) the
 * scheme's default (the largest a2a group A, 1 < A < R, that divides R and the heads), with a note.
 */
function rowSizes(def: SchemeDef, req: CpRequest): { sizes: string; note: string } {
  const raw = req.typedSizes;
  if (raw) {
    const m = /^(\d+)\s*,\s*(\d+)$/.exec(raw);
    if (!m || +m[1] < 1 || +m[2] < 1) throw new FieldError(`${def.name} sizes must be two whole numbers A,P, each at least 1 (they are ${raw})`, cpField('cphcp'));
    return { sizes: `${+m[1]},${+m[2]}`, note: '' };
  }
  const { sizes } = schemeSizes(def.name, req.R, req.shape, undefined);
  return { sizes: sizes!, note: ' (chosen: the largest a2a group below R that divides the heads)' };
}

type CpRow = { scheme: Scheme; sizes: string; predicted?: Prediction; note?: string; error?: string; field?: HTMLElement | null };
let cpCache: { key: string; rows: Promise<CpRow[]> } | null = null;

/** Each registered scheme dry-run (zigzag, 2-byte Q/K/V as bf16/f16 training) and timed by the link model. */
function planCpSchemes(req: CpRequest): Promise<CpRow[]> {
  const key = JSON.stringify(req);
  if (cpCache?.key !== key) cpCache = { key, rows: planRows(req) };
  return cpCache.rows;
}

async function planRows(req: CpRequest): Promise<CpRow[]> {
  const x = { shape: req.shape, R: req.R, mask: { causal: req.causal }, layout: 'zigzag' as const, precision: 'f16' as const, link: req.link, rate: req.tflops };
  const rows: CpRow[] = [];
  for (const def of schemeDefs()) {
    let sizes: string | undefined, note = '';
    try {
      if (def.defaultSizes) ({ sizes, note } = rowSizes(def, req));
      const p = await planScheme(x, def.name, sizes);
      rows.push({ scheme: def.name, sizes: p.hierarchy.join(','), predicted: p.predicted, note });
    } catch (e) {
      // A scheme that takes sizes, refused with sizes the user typed: about those sizes (malformed, not R, not dividing the heads).
      const typed = def.defaultSizes && req.typedSizes ? cpField('cphcp') : null;
      rows.push({ scheme: def.name, sizes: sizes ?? '—', error: pageWords(e), field: e instanceof FieldError ? e.field : typed });
    }
  }
  return rows;
}

/** The panel cleared, its message under the form and (`marks`) beside the fields it is about. */
function clearCp(text: string, marks: FieldMark[] = []): void {
  $('cp-error').textContent = text;
  showFieldErrors(cpForm, marks);
  fillTable($<HTMLTableElement>('cp-schemes'), '', [], []);
  hooks.cpSchemes = { error: text, rows: [] };
}

/** Renders asked for; only the newest one draws (a plan is asynchronous: an older one may finish later). */
let cpGeneration = 0;
/** What runs once the newest render's plan is drawn (openView's top line); a later render drops it. */
let onCpDrawn: (() => void) | null = null;

function renderCp(): void {
  const gen = ++cpGeneration;
  onCpDrawn = null;
  hooks.busy = ((hooks.busy as number) ?? 0) + 1;
  void drawCp(gen).finally(() => (hooks.busy = (hooks.busy as number) - 1));
}

async function drawCp(gen: number): Promise<void> {
  let req: CpRequest, rows: CpRow[], model: ModelConfig, par: ParallelConfig;
  try {
    model = readModel();
    par = readParallel(model);
  } catch (e) {
    return clearCp(isInputError(e) ? 'Fix the planner\'s fields above first: the panel plans their attention.' : bugWords(e));
  }
  try {
    req = readCpRequest(model, par);
  } catch (e) {
    return clearCp(isInputError(e) ? sentence(e) : bugWords(e), marksOf(e, sentence));
  }
  showFieldErrors(cpForm, []);
  const pending = planCpSchemes(req);
  rows = await pending;
  if (gen !== cpGeneration) return;
  $('cp-error').textContent = '';
  // A row's error about a field (a2a+p2p's typed sizes) is said beside that field too.
  showFieldErrors(cpForm, rows.filter((r) => r.field && r.error).map((r) => ({ field: r.field!, message: r.error! })));
  onCpDrawn?.();
  onCpDrawn = null;
  const s = req.shape, l = req.link, chosen = select('cpcomm').value;
  const phaseMs = (p: Prediction, ph: string) => (p.phases.find((x) => x.phase === ph)?.stepMs ?? []).reduce((a, b) => a + b, 0).toFixed(3);
  fillTable($<HTMLTableElement>('cp-schemes'),
    `CP=${req.R} on ${l.name} (${l.gbps} Gbit/s, ${l.latencyUs} µs per message), compute at ${req.tflops} TFLOP/s: one layer's attention per GPU, B=${s.B}, ${counted(s.Hq, 'head')} (${s.Hkv} K/V), D=${s.D}, N=${s.Nq.toLocaleString('en-US')}${req.causal ? ' causal' : ''}, zigzag, 2-byte Q/K/V`,
    ['scheme', 'sizes A,P', 'forward ms', 'backward ms', 'step ms', 'comm %', 'TFLOP/s per GPU', 'note'],
    rows.map((r) => {
      const p = r.predicted;
      const note = r.error ?? `${p!.stepMs.length} steps${r.note ?? ''}${r.scheme === chosen ? '; the memory model counts this scheme\'s buffers' : ''}`;
      return [r.scheme, r.sizes, ...(p ? [phaseMs(p, 'forward'), phaseMs(p, 'backward'), p.totalMs.toFixed(3), (100 * p.commFraction).toFixed(1), p.tflopsPerGpu.toPrecision(3)] : ['—', '—', '—', '—', '—'])
        .map((text) => ({ text, cls: 'num' })), { text: note, cls: r.error ? 'wrong' : '' }];
    }), (i) => (rows[i].scheme === chosen ? 'chosen' : ''));
  hooks.cpSchemes = {
    rows: rows.map((r) => ({ scheme: r.scheme, sizes: r.sizes, error: r.error, stepMs: r.predicted?.totalMs, commFraction: r.predicted?.commFraction, tflopsPerGpu: r.predicted?.tflopsPerGpu })),
    link: l.name, tflops: req.tflops, shape: s, R: req.R,
  };
}

cpForm.addEventListener('input', () => {
  (cpForm.querySelector('.custom-link') as HTMLElement).hidden = cpField('cplink').value !== 'custom';
  saveView();
  renderCp();
});

// ---------- replay ----------

const SHIPPED_NAME = 'bench/results/torchcp-2xh200-2026-11-30/activation_memory_measured.csv';
const shipped = parseCsv(measuredCsv, SHIPPED_NAME);
const SHIPPED_HBM = shipped.find((r) => r.hbm_gib)?.hbm_gib ?? 139.8;
/** The replay's lines: the measured companion model on its stack (PyTorch AMP), as the harness ran it. */
const REPLAY = { preset: 'torchcp-8L-4096h', lines: '1,1:selective,2,2:selective', seqLengths: [4096, 8192, 16384, 32768, 65536, 131072, 262144] };
const replayModel = () => ({ model: PRESETS[REPLAY.preset].model, par: { ...DEFAULT_PARALLEL, stack: PRESETS[REPLAY.preset].stack ?? 'megatron' } });
const shippedPoints = shipped.map((row) => ({ row, origin: row.line ?? 'shipped' }));

/**
 * A measured point and where it came from; a Megatron-LM log is predicted from its own arguments. `other`:
 * a CSV row whose source names another model than the lines' (compared with the lines all the same, and said so).
 * `cmp`: its comparison at an HBM, kept (a render compares only what is new, or all at a new HBM).
 */
interface ReplayPoint { row: CsvRow; origin: string; log?: ParseResult; other?: boolean; cmp?: { hbm: number; c: Comparison } }
/** A dropped file: its name, a digest of its text (the same file dropped again is refused), its points. */
interface ReplayFile { name: string; digest: string; points: ReplayPoint[] }
/**
 * What the list under the drop zone says, in order: a file's line (head, with its remove control) and its warnings, or a
 * file that could not be read (`failed`: its name; a dismiss control).
 */
interface ReplayNote { text: string; cls: string; title?: string; file?: ReplayFile; head?: boolean; failed?: string }
const replayFiles: ReplayFile[] = [];
let replayNotes: ReplayNote[] = [];
/**
 * Dropped points the page takes in all: the table lists each and the chart draws each, so more would hold the tab
 * for seconds (20,000 took 14.5 s). `flashring replay` takes any number.
 */
const MAX_DROPPED_POINTS = 2000;
$('replay-limit').textContent = MAX_DROPPED_POINTS.toLocaleString('en-US');
let replayChart: Chart | null = null;

function compareReplayPoint(p: ReplayPoint, hbm: number): Comparison {
  if (p.cmp?.hbm !== hbm) p.cmp = { hbm, c: compareFresh(p, hbm) };
  return p.cmp.c;
}

function compareFresh(p: ReplayPoint, hbm: number): Comparison {
  const { model, par } = replayModel();
  if (!p.log) return compareOne(p.row, model, par, hbm);
  const base = unmodelledComparison(p.row);
  const pr = predictFromLog(p.log, hbm);
  if ('error' in pr) return { ...base, error: pr.error };
  const oom = p.log.point.outOfMemory, ran = oom ? false : pr.measuredGib === null ? null : true;
  // A log that sets what the model does not take (FP8, grouped GEMM, …), or that ran out of memory because other processes held the
  // GPU: its model figures shown, no error or verdict taken (as replay --compare).
  return withoutVerdict({
    ...base, modelTotalGib: pr.totalBytes / GIB, modelActivationGib: pr.activationBytes / GIB, modelOptimizerStepGib: pr.optimizerStepBytes / GIB, modelFits: pr.fits, totalError: ran ? pr.totalError : null,
    verdict: ran === null || pr.fits === null ? 'unknown' : pr.fits === ran ? 'right' : pr.fits ? 'says it fits, it ran out of memory' : 'says out of memory, it ran',
  }, { notModelled: unmodelledArgs(p.log.args), othersOom: p.log.point.outOfMemoryOthers });
}

/** Largest errors and wrong verdicts of some comparisons, in one sentence (comparisonFigures, in the page's words). */
function errorSummary(what: string, cs: Comparison[]): string {
  const f = comparisonFigures(cs), worst = (x: number | null) => (x === null ? '—' : `${(x * 100).toFixed(1)}%`);
  return `${counted(cs.length, `${what} point`)}: largest total error ${worst(f.largestTotal)}, ` +
    `largest activation error ${worst(f.largestActivation)}, ${counted(f.wrong, 'wrong out-of-memory verdict')}` +
    (f.notCompared ? ` (${counted(f.notCompared, 'point')} not compared: ${f.notCompared === 1 ? 'its log sets' : 'their logs set'} what the model does not take)` : '') +
    (f.othersOom ? ` (${counted(f.othersOom, 'point')} out of memory because other processes held the GPU: not a verdict)` : '');
}

function replayTable(points: ReplayPoint[], cs: Comparison[]): void {
  const gib = (x: number | null | undefined) => (x === null || x === undefined ? '' : x.toFixed(1));
  fillTable($<HTMLTableElement>('replay-table'), 'Each measured point against the model (error = (model − measured) / measured)',
    ['point', 'model from', 'seq_len', 'TP', 'CP', 'recompute', 'measured GiB', 'model GiB', 'error', 'measured activations GiB', 'model activations GiB', 'error', 'model optimizer step GiB', 'OOM verdict'],
    cs.map((c, i) => {
      const r = c.row, oom = r.total_gib === null && r.fits === false, others = c.othersOom;
      return [
        points[i].origin, points[i].log ? 'its own arguments' : points[i].other ? 'the lines: another model' : 'the lines', String(r.seq_len), String(r.tp ?? '?'), String(r.cp ?? '?'), r.recompute ?? '?',
        { text: others ? 'OOM (other processes)' : oom ? 'OOM' : gib(r.total_gib), cls: 'num' }, { text: c.error ? '—' : gib(c.modelTotalGib), cls: 'num', title: c.error ? pageWords(c.error) : '' },
        { text: c.notModelled ? 'not comparable' : pct(c.totalError), cls: 'num', title: c.notModelled ? `not modelled: ${c.notModelled.join(' ')}` : '' },
        { text: gib(r.activation_gib), cls: 'num' }, { text: gib(c.modelActivationGib), cls: 'num' },
        { text: pct(c.activationError), cls: 'num' }, { text: gib(c.modelOptimizerStepGib), cls: 'num' },
        { text: c.error ? `no prediction: ${pageWords(c.error)}` : others ? `not a verdict: other processes held ${others.otherGiB.toFixed(1)} GiB` : c.verdict, cls: c.verdict.startsWith('says') ? 'wrong' : '' },
      ];
    }));
  // A dropped point of another model than the lines' is no check of the model: left out of the figures, and said.
  const own = cs.filter((_, i) => i >= shipped.length && !points[i].other), other = points.filter((p) => p.other).length;
  $('replay-summary').textContent = errorSummary('shipped', cs.slice(0, shipped.length)) + (own.length ? `; ${errorSummary('dropped', own)}` : '') +
    (other ? `; ${counted(other, 'dropped point')} of another model than the lines' left out of these figures (the table compares ${other === 1 ? 'it' : 'them'} with the lines' model, as it says)` : '') + '.';
}

/** The measured series' colours: none of the model lines' (LINE_COLORS), dark and muted, so a dropped file's points never pass for a line's. */
const MEASURED_COLORS = ['#555555', '#bcbd22', '#393b79', '#8c6d31', '#7b4173', '#637939', '#843c39', '#6b6ecf'];
/** Point shapes the measured series take in turn beside their colour (drawn without a line, unlike the model lines' marks; crossRot, out of memory, stays). */
const MEASURED_SHAPES = ['triangle', 'rect', 'rectRot', 'star'];

/** Gives each measured series (legend "measured: …") a colour and shape of its own, apart from the model lines'. */
function measuredStyles(cfg: MemoryChartConfig): void {
  type Ds = { label: string; borderColor: string; backgroundColor: string; pointStyle: string | string[] };
  const sets = (cfg.data as { datasets: Ds[] }).datasets.filter((d) => d.label.startsWith('measured'));
  sets.forEach((d, k) => {
    d.borderColor = d.backgroundColor = MEASURED_COLORS[k % MEASURED_COLORS.length];
    const shape = MEASURED_SHAPES[(k + Math.floor(k / MEASURED_COLORS.length)) % MEASURED_SHAPES.length]; // a pair repeats after 32
    if (Array.isArray(d.pointStyle)) d.pointStyle = d.pointStyle.map((x) => (x === 'crossRot' ? x : shape));
  });
}

function renderReplay(): void {
  let hbm: number;
  try {
    hbm = readHbm(replayHbm);
  } catch (e) {
    $('replay-error').textContent = pageWords(e);
    showFieldErrors($<HTMLFormElement>('replay-form'), marksOf(e, pageWords));
    replayChart?.destroy();
    replayChart = null;
    chartTable($<HTMLCanvasElement>('replay-chart'), null);
    fillTable($<HTMLTableElement>('replay-table'), '', [], []);
    $('replay-summary').textContent = '';
    hooks.replay = { error: pageWords(e), measuredPoints: 0, datasets: [], rows: [] };
    return;
  }
  $('replay-error').textContent = '';
  showFieldErrors($<HTMLFormElement>('replay-form'), []);
  const { model, par } = replayModel();
  const pts = sweep(model, par, REPLAY.seqLengths, parseLines(REPLAY.lines, model, par.stack), hbm);
  const details: Breakdowns = new Map(pts.map((p) => [`${p.line}|${p.config.seqLength}`, p]));
  const points: ReplayPoint[] = [...shippedPoints, ...replayFiles.flatMap((f) => f.points)];
  const measured = points.map((p) => p.row);
  const cs = points.map((p) => compareReplayPoint(p, hbm));
  replayTable(points, cs);
  const cfg = memoryChartConfig(sweepRows(pts, hbm), measured, hbm,
    `Measured runs (marks without lines, "measured: …" in the legend) over the model's lines for ${REPLAY.preset} (${STACKS[par.stack].label} stack)`, errorSummary('shipped', cs.slice(0, shipped.length)));
  measuredStyles(cfg);
  replayChart = drawMemoryChart($<HTMLCanvasElement>('replay-chart'), replayChart, cfg, details);
  hooks.replay = {
    measuredPoints: measured.filter((r) => r.total_gib !== null).length, datasets: replayChart.data.datasets.map((d) => d.label),
    colors: replayChart.data.datasets.map((d) => d.borderColor),
    files: replayFiles.map((f) => ({ name: f.name, points: f.points.length })),
    rows: cs.map((c, i) => ({ origin: points[i].origin, seq: c.row.seq_len, totalError: c.totalError, activationError: c.activationError, verdict: c.verdict, error: c.error })),
  };
}
hooks.replayChart = chartProbe(() => replayChart);
chartKeyboard($<HTMLCanvasElement>('replay-chart'), () => replayChart, $('replay-chart-point'));
/** Each source of the shipped points and how many it gave ("12 on torch 2.11.0+cu130 single GPU, 1x NVIDIA H200; 16 on …"). */
const shippedSources = [...new Set(shipped.map((r) => r.source))].map((src) => `${shipped.filter((r) => r.source === src).length} on ${src.replace(/^measured: /, '')}`).join('; ');
$('replay-about').textContent = `Shipped dataset: ${shipped.length} points (${shipped.filter((r) => r.fits === false).length} out of memory) measured: ${shippedSources}. ` +
  `The lines are the model for ${REPLAY.preset} on its ${STACKS[replayModel().par.stack].label} stack; the table gives each point's error. A dropped Megatron-LM log is also predicted from its own arguments.`;
replayHbm.addEventListener('input', () => {
  saveView();
  renderReplay();
});

// ---------- replay: dropped files, and whether they are the lines' model ----------

function logModel(res: ParseResult): ModelSize | null {
  const c = configFromLog(res);
  if (!('error' in c)) return { layers: c.model.numLayers, hidden: c.model.hiddenSize, heads: c.model.numAttentionHeads, vocab: c.model.vocabSize };
  const p = res.point;
  return p.numLayers === null && p.hiddenSize === null && p.numHeads === null ? null : { layers: p.numLayers ?? undefined, hidden: p.hiddenSize ?? undefined, heads: p.numHeads ?? undefined };
}

/** The models a CSV's rows name in their source ("… GPT 8L h=4096 a=32 vocab=8192 …"), each once; empty when none does. */
function csvModels(rows: CsvRow[]): ModelSize[] {
  const seen = new Map<string, ModelSize>();
  for (const r of rows) {
    const m = sourceModel(r.source);
    if (m) seen.set(JSON.stringify(m), m);
  }
  return [...seen.values()];
}

/** A warning line when a dropped file's model is not the one its points are drawn over (null when it is). */
function modelWarning(name: string, size: ModelSize | null, own: boolean, log?: { row: CsvRow; setup: MeasuredSetup }): string | null {
  const { model, par } = replayModel(), ref = { model, parallel: par };
  const lines = `${REPLAY.preset}, ${STACKS[par.stack].label}`;
  if (!size) return `${name} does not say which model it measured: its points are drawn over the lines of ${lines} unchecked.`;
  // A log with an argument dump: every setting that changes its point's memory (as replay --compare).
  const diff = log ? memoryDiff(log.row, log.setup, ref, 'lines') : modelDiff(size, ref.model, 'lines');
  if (!diff.length) return null;
  let planner = '';
  try {
    const same = log ? !setupDiff(log.setup, { model: readModel(), parallel: log.setup.parallel }, 'planner').length : !modelDiff(size, readModel(), 'lines').length;
    planner = same ? ' It is the planner\'s model.' : '';
  } catch (e) {
    if (!isInputError(e)) throw e; // the planner's controls are invalid: nothing to say about them
  }
  return `${name} is ${log ? 'another setup than' : 'a different model from'} the lines it is drawn over (${lines}): ${diff.join(', ')}. ` +
    (own ? 'The table predicts it from its own arguments.' : 'Its errors in the table are against the lines\' model.') + planner;
}

/** A digest of a file's text (its length and FNV-1a, 32 bits): the same file dropped again has the same. */
function digest(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return `${text.length}:${(h >>> 0).toString(16)}`;
}

/** A file's points and what to say about it (its first note is its line in the list). */
type FileRead = { points: ReplayPoint[]; notes: ReplayNote[] };

/** Refused: more points than the page takes (MAX_DROPPED_POINTS, `room` of them left). */
const tooMany = (name: string, n: number, room: number) => new InputError(`it has ${count(n, 'row')}, and the page takes at most ` +
  `${MAX_DROPPED_POINTS.toLocaleString('en-US')} dropped points in all (${room.toLocaleString('en-US')} left), as its table and chart hold each one: flashring replay ${name} takes any number`);

function readCsvFile(name: string, text: string, room: number): FileRead {
  // Counted before parsing, so that a file far over the limit is refused at once (the 42 MB of 200,000 rows held the tab for minutes).
  let lines = 0;
  for (let i = text.indexOf('\n'); i >= 0 && lines <= 2 * room + 2; i = text.indexOf('\n', i + 1)) lines++;
  if (lines > 2 * room + 2) throw tooMany(name, text.split('\n').filter((l) => l.trim()).length - 1, room);
  hooks.csvParses = ((hooks.csvParses as number) ?? 0) + 1;   // what the tests count: a file refused at once is never parsed
  const { rows, modelRows } = measuredRows(parseCsv(text, name), name);
  if (rows.length > room) throw tooMany(name, rows.length, room);
  const { model } = replayModel(), bySource = new Map<string, boolean>();
  const otherModel = (src: string) => {
    if (!bySource.has(src)) { const m = sourceModel(src); bySource.set(src, !!m && modelDiff(m, model, 'lines').length > 0); }
    return bySource.get(src)!;
  };
  const points = rows.map((row) => ({ row, origin: `${name}${row.line ? `: ${row.line}` : ''}`, other: otherModel(row.source) }));
  const notes: ReplayNote[] = [{ text: `${name}: ${count(rows.length, 'point')} added${modelRows ? `; ${count(modelRows, 'row')} of source 'model' left out (the model's own output, not measurements)` : ''}`, cls: '' }];
  const models = csvModels(rows);
  for (const size of models.length ? models : [null]) {
    const w = modelWarning(name, size, false);
    if (w) notes.push({ text: `⚠ ${w}`, cls: 'warn' });
  }
  return { points, notes };
}

/** "1 point", "3 points". */
const count = (n: number, word: string) => `${n.toLocaleString('en-US')} ${plural(n, word)}`;

function readLogFile(name: string, text: string, room: number): FileRead {
  const res = parseMegatronLog(text, name);
  const row = measuredRow(res.point);
  if (!row) throw new Error(`not a Megatron-LM log with a memory report or an activation_memory.csv (${res.warnings.join('; ')})`);
  if (room < 1) throw tooMany(name, 1, room);
  // What the log lacked or where it broke off is said in the list, not only on hover; the head line counts every note under it.
  const warns: ReplayNote[] = res.warnings.map((w) => ({ text: `⚠ ${name}: ${w}`, cls: 'warn' }));
  const c = configFromLog(res);
  const w = modelWarning(name, logModel(res), true, 'error' in c ? undefined : { row, setup: { model: c.model, parallel: c.par } });
  if (w) warns.push({ text: `⚠ ${w}`, cls: 'warn' });
  const head = { text: `${name}: 1 point added${warns.length ? ` (${count(warns.length, 'note')} below)` : ''}`, cls: '' };
  return { points: [{ row, origin: name, log: res }], notes: [head, ...warns] };
}

/**
 * Adds a dropped file's points. The same file again (name and content) is refused; a file of the same name with
 * other content replaces the one before.
 */
async function addReplayFile(f: File): Promise<void> {
  // Read once: its bytes say whether it is text at all (notText), their UTF-8 decoding (as File.text()) is the text.
  const bytes = new Uint8Array(await f.arrayBuffer()), text = new TextDecoder().decode(bytes);
  const d = digest(text), same = replayFiles.find((x) => x.name === f.name);
  const other = notALog(f.name, text, bytes);
  if (other) throw new Error(`${other}; replay takes Megatron-LM training logs and activation_memory.csv files`);
  if (same?.digest === d) {
    replayNotes.push({ text: `${f.name}: already added (the same name and content): nothing added again`, cls: 'dup', file: same });
    return;
  }
  const room = MAX_DROPPED_POINTS - replayFiles.reduce((a, x) => a + (x === same ? 0 : x.points.length), 0);
  const { points, notes } = /\.csv$/i.test(f.name) ? readCsvFile(f.name, text, room) : readLogFile(f.name, text, room);
  if (same) dropReplayFile(same);
  const file: ReplayFile = { name: f.name, digest: d, points };
  replayFiles.push(file);
  if (same) notes[0].text += ' (it replaces the file of this name dropped before)';
  notes.forEach((n, i) => replayNotes.push({ ...n, file, head: i === 0 }));
}

const dropReplayFile = (f: ReplayFile) => {
  replayFiles.splice(replayFiles.indexOf(f), 1);
  replayNotes = replayNotes.filter((n) => n.file !== f);
};

/** The list under the drop zone, drawn once: each file's line with a control that removes it and its points, then its warnings. */
function renderReplayNotes(): void {
  $('replay-messages').replaceChildren(...replayNotes.map((n) => {
    const li = Object.assign(document.createElement('li'), { textContent: n.text, className: n.cls, title: n.title ?? '' });
    const f = n.file;
    if (n.head && f) {
      const b = Object.assign(document.createElement('button'), { type: 'button', textContent: 'remove', className: 'remove' });
      b.setAttribute('aria-label', `remove ${f.name} and its ${count(f.points.length, 'point')}`);
      b.addEventListener('click', () => {
        dropReplayFile(f);
        $('replay-status').textContent = `${f.name} removed, with its ${count(f.points.length, 'point')}.`;
        renderReplayNotes();
        renderReplay();
        $('replay-files').focus(); // the control is gone: keyboard focus stays in the panel
      });
      li.append(' ', b);
    }
    if (n.failed !== undefined) li.append(' ', dismissButton(n, n.failed));
    return li;
  }));
}

/** The control that takes a could-not-be-read line off the list (it stayed until a reload); the focus stays in the panel. */
function dismissButton(n: ReplayNote, name: string): HTMLButtonElement {
  const b = Object.assign(document.createElement('button'), { type: 'button', textContent: 'dismiss', className: 'remove' });
  b.setAttribute('aria-label', `dismiss the note that ${name} could not be read`);
  b.addEventListener('click', () => {
    replayNotes = replayNotes.filter((x) => x !== n);
    $('replay-status').textContent = `The note on ${name} dismissed.`;
    renderReplayNotes();
    $('replay-files').focus();
  });
  return b;
}

/**
 * What a dropped file is when it is plainly not a log or CSV: a tensor file (.npy, .npz), not text at all (compressed,
 * UTF-16, binary: notText, from its bytes `head`), or, named other than .csv, JSON (a ring timeline goes on the ring panel).
 */
function notALog(name: string, text: string, head: Uint8Array): string | null {
  // File.text() decodes the magic byte 0x93 as U+FFFD; a .npz is a zip (PK).
  if (/^[\x93\uFFFD]NUMPY/.test(text) || /\.npy$/i.test(name)) return 'it is a tensor file (a NumPy .npy array), not a log or CSV';
  if (/\.npz$/i.test(name)) return 'it is a tensor file (a NumPy .npz archive), not a log or CSV';
  const binary = notText(head);
  if (binary) return binary;
  if (/\.csv$/i.test(name)) return null;
  const t = text.trimStart();
  if (!t.startsWith('{') && !t.startsWith('[')) return null;
  try {
    const j = JSON.parse(t) as { kind?: unknown };
    return j && typeof j === 'object' && j.kind === 'flashring.timeline' ? 'it is a ring timeline (drop it on the live ring panel\'s timeline input)' : 'it is a JSON file';
  } catch {
    return null;
  }
}

/** Reads the files, then draws the list, the table and the chart once. */
async function addReplayFiles(files: File[]): Promise<void> {
  for (const [i, f] of files.entries()) {
    // Said while it reads (a file of 2,000 rows takes a second or more), in the panel's live status line.
    $('replay-status').textContent = `reading ${f.name}${files.length > 1 ? ` (${i + 1} of ${files.length})` : ''}…`;
    try {
      await addReplayFile(f);
    } catch (e) {
      replayNotes.push({ text: `${f.name}: could not be read — ${pageWords(e)}`, cls: 'bad', failed: f.name });
    }
  }
  $('replay-status').textContent = '';
  renderReplayNotes();
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

// ---------- advisor (web/advise.ts: src/memory/advise.ts's search over the planner's model) ----------

const advisor = setupAdvisor({ hooks, planner: () => { const model = readModel(); return { model, par: readParallel(model) }; }, pageWords, onModelField, fillTable, positiveWhole, readHbm, saveView });

// ---------- live run (web/live.ts) ----------

setupLive(hooks);

openView();
hooks.ready = true;

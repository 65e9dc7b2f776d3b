/**
 * The activation-memory chart as a Chart.js configuration (plain data, no DOM): the page draws
 * it, the bench renders it to PNG headless. y = peak memory per GPU (GiB), x = sequence length
 * (log scale), one line per configuration, the HBM limit across. A line ends at its first point
 * that does not fit, drawn as a cross above the limit (the y axis stops near 1.6 × HBM, so a line
 * that blows past the limit leaves the chart going up: "goes vertical"; yAxis). Measured points are
 * drawn as triangles with their source.
 */
import { CsvRow } from './csv.js';
import { FULL_RECOMPUTE, GIB, MemoryBreakdown, ModelConfig, Part, Stack, SweepLine, SweepPoint, defaultRecompute, normName } from './model.js';
import { untrainable } from './untrainable.js';
import { maxOf, minOf } from '../stats.js';
import { counted } from '../plural.js';

/**
 * A note for lines drawn (within 1%) on top of their twins without recomputation: with
 * FlashAttention, selective recomputation of the attention core alone only drops the softmax LSE.
 */
export function coincidentNote(pts: SweepPoint[], lines: SweepLine[]): string {
  const same = lines.filter((l) => l.overrides.recompute && l.overrides.recompute !== 'none').filter((l) => {
    const twin = lines.find((x) => x.overrides.contextParallel === l.overrides.contextParallel && (x.overrides.recompute ?? 'none') === 'none');
    const a = pts.filter((p) => p.line === l.label), b = pts.filter((p) => p.line === twin?.label);
    return a.length > 0 && a.every((p, i) => b[i] && Math.abs(p.totalGib - b[i].totalGib) <= 0.01 * b[i].totalGib);
  });
  if (!same.length) return '';
  const coreOnly = same.every((l) => l.overrides.recompute === 'selective' && (l.overrides.recomputeModules ?? ['core_attn']).join() === 'core_attn');
  return `${same.map((l) => l.label).join(' and ')} lie within 1% of their lines without recomputation` +
    (coreOnly ? ': with FlashAttention, recomputing the attention core only drops the softmax LSE' : '');
}

/**
 * A note for lines of configurations Megatron-LM cannot train at any size (untrainable.ts): they show
 * the memory such a step would need. '' when every line trains.
 */
export function untrainableNote(model: ModelConfig, pts: SweepPoint[]): string {
  const byLine = new Map<string, string>();
  for (const p of pts) {
    const why = untrainable(model, p.config);
    if (why && !byLine.has(p.line)) byLine.set(p.line, why);
  }
  if (!byLine.size) return '';
  const whys = [...new Set(byLine.values())];
  return `${[...byLine.keys()].join(' and ')}: the memory such a step would need; ${whys.join('; ')}`;
}

/** What the lines labelled "+ recompute" recompute on this model (defaultRecompute), and why; '' when no line is. */
export function recomputeNote(model: ModelConfig, lines: SweepLine[], stack?: Stack): string {
  if (!lines.some((l) => l.label.endsWith(' + recompute'))) return '';
  return defaultRecompute(model, stack) === FULL_RECOMPUTE
    ? '"+ recompute" recomputes every layer (full:uniform/1): Megatron-LM cannot train the MLP\'s selective recompute with this model\'s linear biases'
    : '"+ recompute" is selective recompute of the attention core and the MLP (selective:core_attn+mlp)';
}

/** The chart's notes (what "+ recompute" is, coincident lines, untrainable lines), as one subtitle. */
export const chartNotes = (model: ModelConfig, pts: SweepPoint[], lines: SweepLine[]): string =>
  [recomputeNote(model, lines, pts[0]?.config.stack), coincidentNote(pts, lines), untrainableNote(model, pts)].filter(Boolean).join('. ');

/** One row of a point's memory breakdown, as the page's hover and breakdown table show it. */
export interface BreakdownRow {
  /** 'per parameter' (weights, gradients, optimizer, buckets), a layer group's label, 'outside the layers' or 'peak transient'. */
  section: string;
  label: string;
  bytes: number;
  formula: string;
}

const PART_LABELS: Record<Exclude<Part, 'layernorm'>, string> = {
  attention: 'attention', mlp: 'MLP', embedding: 'embedding', output: 'output layer', loss: 'loss', weights: 'weights', ring: 'ring buffers',
};

/** A part as the breakdown names it: the norm part after the model's norm (LayerNorm or RMSNorm; its key stays 'layernorm'). */
const partLabel = (part: Part, model: ModelConfig): string => (part === 'layernorm' ? normName(model) : PART_LABELS[part]);

const count = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/**
 * Every term of a breakdown: weights (bf16 or fp32 as stored), gradients, optimizer, DDP buckets;
 * each layer group's activations by part; the terms outside the layers by name; the peak transient
 * by name (net of what its moment has already freed).
 */
export function breakdownRows(b: MemoryBreakdown, model: ModelConfig): BreakdownRow[] {
  const P = b.parametersPerGpu;
  const perParam = (bytes: number) => `${+(bytes / P).toFixed(3)} B × ${(P / 1e9).toFixed(3)}e9 parameters per GPU`;
  const rows: BreakdownRow[] = [
    { section: 'per parameter', label: `weights (${b.weightBytesPerParam === 4 ? 'fp32' : 'bf16'})`, bytes: b.weightBytes, formula: perParam(b.weightBytes) },
    { section: 'per parameter', label: 'gradients (fp32)', bytes: b.gradientBytes, formula: perParam(b.gradientBytes) },
    { section: 'per parameter', label: 'optimizer state', bytes: b.optimizerBytes, formula: perParam(b.optimizerBytes) },
  ];
  if (b.gradientBucketBytes) rows.push({ section: 'per parameter', label: 'DDP gradient buckets', bytes: b.gradientBucketBytes, formula: perParam(b.gradientBucketBytes) });
  if (b.workspaceBytes) rows.push({ section: 'per parameter', label: 'cuBLAS workspaces', bytes: b.workspaceBytes, formula: '2 × 32 MiB (forward and autograd handles)' });
  for (const g of b.layerGroups) {
    const parts = [...new Set(g.terms.map((t) => t.part))];
    for (const part of parts) {
      const terms = g.terms.filter((t) => t.part === part);
      rows.push({
        section: `${g.label} (${count(g.layers)})`, label: `${partLabel(part, model)}: ${terms.map((t) => t.name).join(', ')}`,
        bytes: terms.reduce((x, t) => x + t.bytes, 0) * g.layers, formula: `${count(g.layers)} × (${terms.map((t) => t.formula).join(' + ')})`,
      });
    }
  }
  for (const o of b.outside) rows.push({ section: 'outside the layers', label: o.name, bytes: o.bytes, formula: o.formula });
  const pk = b.peakTransient;
  if (pk) rows.push({ section: 'peak transient', label: `peak transient: ${pk.name}`, bytes: pk.netBytes, formula: pk.freedBytes ? `${pk.formula} − ${(pk.freedBytes / GIB).toFixed(2)} GiB freed by then` : pk.formula });
  return rows;
}

export const LINE_COLORS = ['#d62728', '#ff7f0e', '#2ca02c', '#1f77b4', '#9467bd', '#8c564b', '#e377c2', '#17becf'];
/**
 * The model lines' point marks, one a CP size in ascending order (CP = 1 circles, 2 squares, 4 diamonds, 8 triangles),
 * so that lines tell apart without their colours: the CP size by the mark, recomputation by the dash.
 */
export const LINE_MARKS = ['circle', 'rect', 'rectRot', 'triangle'];

export interface ChartPoint {
  x: number;
  y: number;
  fits: boolean | null;
  source: string;
  /** Anything worth a tooltip line (breakdown parts). */
  detail?: Record<string, number>;
}

export interface ChartDataset {
  label: string;
  data: ChartPoint[];
  borderColor: string;
  backgroundColor: string;
  borderDash?: number[];
  showLine: boolean;
  pointStyle: string | string[];
  pointRadius: number | number[];
  borderWidth: number;
  /** Pixels a dataset may draw beyond the plot area (Chart.js's clip). */
  clip?: number;
}

/**
 * What a dataset's legend item draws (Chart.js's legend with point styles): a drawn line as a short line in its own
 * dash (solid, or dashed as the recomputing lines and the HBM limit), marks without a line (a measured series) as
 * nothing but their mark; the mark, drawn over the sample's middle by drawLegendMarks, is the points' first that is not
 * an out-of-memory cross, at most LEGEND_MARK_RADIUS (Chart.js stretches its own marks to the sample's width).
 * Chart.js's default item is a box filled with the line's colour and the dash on its border, which reads as neither.
 * The page's legend (web/main.ts) and the bench's PNG (src/bench/png.ts, which computes them here and sends them with
 * the configuration) both draw these.
 */
export function legendSwatch(ds: Pick<ChartDataset, 'showLine' | 'borderDash' | 'pointStyle' | 'pointRadius'>): LegendSwatch {
  const marks = Array.isArray(ds.pointStyle) ? ds.pointStyle : [ds.pointStyle];
  const radii = Array.isArray(ds.pointRadius) ? ds.pointRadius : [ds.pointRadius];
  const k = Math.max(0, marks.findIndex((m) => m !== 'crossRot'));
  const mark = marks[k] ?? 'circle', radius = Math.min(LEGEND_MARK_RADIUS, radii[k] ?? radii[0] ?? 0);
  const marked = mark !== 'line' && radius > 0 ? { mark, markRadius: radius } : {};
  return { pointStyle: ds.showLine ? 'line' : false, lineDash: ds.showLine ? ds.borderDash ?? [] : [], ...marked };
}

/** The largest mark a legend item draws, px (a measured series' triangle is 7 on the plot): within a legend row. */
const LEGEND_MARK_RADIUS = 5;

export interface LegendSwatch {
  /** Chart.js's point style for the item: a line sample, or false (none: the mark alone). */
  pointStyle: 'line' | false;
  lineDash: number[];
  /** The points' mark, drawn over the middle of the item's sample (drawLegendMarks), and its radius. */
  mark?: string;
  markRadius?: number;
}

/** A legend item's sample width (Chart.js's pointStyleWidth), px: room for a dash either side of a line's mark. */
export const LEGEND_SAMPLE_WIDTH = 30;

/** What drawLegendMarks reads of a Chart.js chart (its legend after layout). */
export interface LegendChart {
  ctx: CanvasRenderingContext2D;
  legend?: { legendItems?: (LegendSwatch & { fillStyle?: unknown; strokeStyle?: unknown })[]; legendHitBoxes: { left: number; top: number; height: number }[]; options: { labels: { pointStyleWidth?: number } } };
}

/**
 * Draws each item's point mark over the middle of its legend sample (a Chart.js afterDraw hook: the legend draws one
 * point style an item, a line's is its line, and it stretches marks to the sample's width). drawPoint is Chart.js's
 * helper. Self-contained, as the bench's PNG sends its text to the browser (src/bench/png.ts): no names from this
 * module inside, no named inner functions.
 */
export function drawLegendMarks(chart: LegendChart, drawPoint: (ctx: CanvasRenderingContext2D, o: { pointStyle: string; radius: number; borderWidth: number; rotation: number }, x: number, y: number) => void): void {
  const legend = chart.legend, ctx = chart.ctx;
  if (!legend || !legend.legendItems) return;
  const width = legend.options.labels.pointStyleWidth || 0;
  legend.legendItems.forEach(function (item, i) {
    const box = legend.legendHitBoxes[i];
    if (!item.mark || !item.markRadius || !box) return;
    ctx.save();
    ctx.setLineDash([]);
    ctx.fillStyle = item.fillStyle as string;
    ctx.strokeStyle = item.fillStyle as string;
    drawPoint(ctx, { pointStyle: item.mark, radius: item.markRadius, borderWidth: 1, rotation: 0 }, box.left + width / 2, box.top + box.height / 2);
    ctx.restore();
  });
}

/** A marker at an end of the axes (the first length's out-of-memory cross) drawn whole: the largest marker's radius and its stroke. */
const MARKER_CLIP = 12;

export interface MemoryChartConfig {
  type: 'line';
  data: { datasets: ChartDataset[] };
  options: Record<string, unknown>;
}

/** Formats token counts as 4K, 128K, 1M. */
export function formatTokens(n: number): string {
  if (n >= 1 << 20 && n % (1 << 20) === 0) return `${n / (1 << 20)}M`;
  if (n >= 1024 && n % 1024 === 0) return `${n / 1024}K`;
  return String(n);
}

/**
 * Text as lines of at most `width` characters, broken at spaces (Chart.js draws an array as lines; one long line is
 * squeezed over the axis); with `measure`, lines at most `width` as it measures them (the page: pixels in a font).
 */
export function wrapText(text: string, width = 140, measure: (line: string) => number = (line) => line.length): string[] {
  const out: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const last = out.length ? out[out.length - 1] : null;
    if (last !== null && measure(`${last} ${word}`) <= width) out[out.length - 1] = `${last} ${word}`;
    else out.push(word);
  }
  return out;
}

/** A round tick step (1, 2, 2.5 or 5 × 10^k) and the axis top it gives, a multiple of it: the lowest top with at most 8 steps. */
export function niceAxis(want: number): { max: number; step: number } {
  let best = { max: Infinity, step: 1 };
  for (let k = Math.floor(Math.log10(want / 8)) - 1; k <= Math.ceil(Math.log10(want)); k++)
    for (const m of [1, 2, 2.5, 5]) {
      const step = m * 10 ** k, max = Number((Math.ceil(want / step - 1e-9) * step).toPrecision(12));
      if (max / step <= 8 && max < best.max) best = { max, step };
    }
  return best;
}

/**
 * The y axis: 1.6 × HBM, or up to the highest point where points lie above that (a line that starts above HBM
 * stays in view, with its out-of-memory cross whole), at most 4 × HBM, or more where a line's first point lies
 * higher (every line shows at least its first point); its top and ticks round (niceAxis). The note says what
 * lies higher still, and when every line is out of memory from the first length.
 */
function yAxis(lines: ChartDataset[], others: ChartDataset[], hbmGib: number, rows: CsvRow[]): { yMax: number; step: number; note: string; offScale: string } {
  const ys = [...lines, ...others].flatMap((d) => d.data.map((p) => p.y)).filter(Number.isFinite);
  const firsts = lines.map((d) => d.data[0]?.y).filter((y): y is number => Number.isFinite(y));
  const cap = Math.max(hbmGib * 4, firsts.length ? maxOf(firsts) * 1.08 : 0);
  const { max: yMax, step } = niceAxis(Math.max(hbmGib * 1.6, Math.min(ys.length ? maxOf(ys) * 1.08 : 0, cap)));
  const above = ys.filter((y) => y > yMax).length;
  const noneFits = lines.length > 0 && lines.every((d) => d.data[0]?.fits === false);
  const note = noneFits ? `Every line is out of memory from the first length (${formatTokens(minOf(rows.map((r) => r.seq_len)))} tokens): nothing fits in ${hbmGib} GiB` : '';
  return { yMax, step, note, offScale: above ? `(${counted(above, 'point')} above ${yMax} GiB, off the scale)` : '' };
}

export function memoryChartConfig(model: CsvRow[], measured: CsvRow[], hbmGib: number, title: string, subtitle = ''): MemoryChartConfig {
  const lineOf = (r: CsvRow) => r.line ?? `CP=${r.cp}${r.recompute && r.recompute !== 'none' ? ` + ${r.recompute}` : ''}`;
  const lines = [...new Set(model.map(lineOf))];
  const cps = [...new Set(model.map((r) => r.cp ?? 1))].sort((a, b) => a - b);
  const datasets: ChartDataset[] = lines.map((label, i) => {
    const rows = model.filter((r) => lineOf(r) === label).sort((a, b) => a.seq_len - b.seq_len);
    const firstOom = rows.findIndex((r) => r.fits === false);
    const shown = firstOom < 0 ? rows : rows.slice(0, firstOom + 1);
    const color = LINE_COLORS[i % LINE_COLORS.length], mark = LINE_MARKS[Math.max(0, cps.indexOf(rows[0]?.cp ?? 1)) % LINE_MARKS.length];
    return {
      label, borderColor: color, backgroundColor: color, showLine: true, borderWidth: 2, clip: MARKER_CLIP,
      borderDash: rows.some((r) => r.recompute && r.recompute !== 'none') ? [6, 3] : undefined,
      data: shown.map((r) => ({ x: r.seq_len, y: r.total_gib ?? NaN, fits: r.fits, source: r.source })),
      pointStyle: shown.map((r) => (r.fits === false ? 'crossRot' : mark)),
      pointRadius: shown.map((r) => (r.fits === false ? 9 : 4)),
    };
  });
  const xs = [...model, ...measured].map((r) => r.seq_len);
  // One length alone: an octave either side, so that its points stand in the middle between ticks.
  const lo = minOf(xs), hi = maxOf(xs), span = lo === hi ? 2 : 1;
  const xMin = lo / span, xMax = hi * span;
  datasets.push({
    label: `HBM ${hbmGib} GiB`, borderColor: '#000000', backgroundColor: '#000000', borderDash: [2, 4], showLine: true, borderWidth: 1.5,
    data: [{ x: xMin, y: hbmGib, fits: null, source: 'limit' }, { x: xMax, y: hbmGib, fits: null, source: 'limit' }], pointStyle: 'line', pointRadius: 0,
  });
  const bySource = new Map<string, CsvRow[]>();
  // Measured points: triangles; runs that went out of memory: a cross on the HBM line.
  for (const r of measured) {
    if (r.total_gib === null && r.fits !== false) continue;
    const rows = bySource.get(r.source);
    if (rows) rows.push(r); // not a copy per row: a dropped file of 20,000 rows made that quadratic
    else bySource.set(r.source, [r]);
  }
  [...bySource.entries()].forEach(([source, rows], i) => {
    const color = LINE_COLORS[(lines.length + i) % LINE_COLORS.length];
    const oom = (r: CsvRow) => r.total_gib === null;
    datasets.push({
      label: `measured: ${source.replace(/^measured:\s*/, '')}`, borderColor: color, backgroundColor: color, showLine: false, borderWidth: 2, clip: MARKER_CLIP,
      data: rows.map((r) => ({
        x: r.seq_len, y: oom(r) ? hbmGib : r.total_gib!, fits: r.fits,
        source: `${r.source} (CP=${r.cp ?? '?'}, TP=${r.tp ?? '?'}, recompute=${r.recompute ?? '?'})${oom(r) ? ': out of memory' : ''}`,
      })),
      pointStyle: rows.map((r) => (oom(r) ? 'crossRot' : 'triangle')), pointRadius: rows.map((r) => (oom(r) ? 10 : 7)),
    });
  });
  const { yMax, step, note, offScale } = yAxis(datasets.slice(0, lines.length), datasets.slice(lines.length), hbmGib, model);
  subtitle = [[subtitle, note].filter(Boolean).join('. '), offScale].filter(Boolean).join(' ');
  return {
    type: 'line',
    data: { datasets },
    options: {
      // Padding keeps the markers at the axis ends (the 4K and 1M points) whole.
      responsive: false, animation: false, parsing: false, layout: { padding: { left: 8, right: 16, top: 4, bottom: 4 } },
      plugins: {
        title: { display: true, text: wrapText(title) },
        subtitle: { display: !!subtitle, text: wrapText(subtitle, 160), padding: { top: 2, bottom: 12 } },
        legend: { position: 'bottom', labels: { usePointStyle: true, pointStyleWidth: LEGEND_SAMPLE_WIDTH } },
      },
      scales: {
        x: { type: 'logarithmic', min: xMin, max: xMax, title: { display: true, text: 'sequence length (tokens)' } },
        y: { type: 'linear', min: 0, max: yMax, ticks: { stepSize: step }, title: { display: true, text: 'peak memory per GPU (GiB)' } },
      },
    },
  };
}

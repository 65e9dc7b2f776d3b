/**
 * The activation-memory chart as a Chart.js configuration (plain data, no DOM): the page draws
 * it, the bench renders it to PNG headless. y = peak memory per GPU (GiB), x = sequence length
 * (log scale), one line per configuration, the HBM limit across. A line ends at its first point
 * that does not fit, drawn as a cross above the limit (the y axis stops at 1.6 × HBM, so a line
 * that blows past the limit leaves the chart going up: "goes vertical"). Measured points are
 * drawn as triangles with their source.
 */
import { CsvRow } from './csv.js';
import { FULL_RECOMPUTE, GIB, MemoryBreakdown, ModelConfig, Part, Stack, SweepLine, SweepPoint, defaultRecompute } from './model.js';
import { untrainable } from './untrainable.js';
import { maxOf, minOf } from '../stats.js';

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

const PART_LABELS: Record<Part, string> = {
  attention: 'attention', mlp: 'MLP', layernorm: 'LayerNorm', embedding: 'embedding', output: 'output layer', loss: 'loss', weights: 'weights', ring: 'ring buffers',
};

const count = (n: number) => (Number.isInteger(n) ? String(n) : n.toFixed(2));

/**
 * Every term of a breakdown: weights (bf16 or fp32 as stored), gradients, optimizer, DDP buckets;
 * each layer group's activations by part; the terms outside the layers by name; the peak transient
 * by name (net of what its moment has already freed).
 */
export function breakdownRows(b: MemoryBreakdown): BreakdownRow[] {
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
        section: `${g.label} (${count(g.layers)})`, label: `${PART_LABELS[part]}: ${terms.map((t) => t.name).join(', ')}`,
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
}

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

/** Text as lines of at most `width` characters, broken at spaces (Chart.js draws an array as lines; one long line is squeezed over the axis). */
export function wrapText(text: string, width = 140): string[] {
  const out: string[] = [];
  for (const word of text.split(/\s+/).filter(Boolean)) {
    const last = out.length ? out[out.length - 1] : null;
    if (last !== null && last.length + 1 + word.length <= width) out[out.length - 1] = `${last} ${word}`;
    else out.push(word);
  }
  return out;
}

export function memoryChartConfig(model: CsvRow[], measured: CsvRow[], hbmGib: number, title: string, subtitle = ''): MemoryChartConfig {
  const lines = [...new Set(model.map((r) => r.line ?? `CP=${r.cp}${r.recompute && r.recompute !== 'none' ? ` + ${r.recompute}` : ''}`))];
  const datasets: ChartDataset[] = lines.map((label, i) => {
    const rows = model.filter((r) => (r.line ?? '') === label || (!r.line && label.startsWith(`CP=${r.cp}`))).sort((a, b) => a.seq_len - b.seq_len);
    const firstOom = rows.findIndex((r) => r.fits === false);
    const shown = firstOom < 0 ? rows : rows.slice(0, firstOom + 1);
    const color = LINE_COLORS[i % LINE_COLORS.length];
    return {
      label, borderColor: color, backgroundColor: color, showLine: true, borderWidth: 2,
      borderDash: rows.some((r) => r.recompute && r.recompute !== 'none') ? [6, 3] : undefined,
      data: shown.map((r) => ({ x: r.seq_len, y: r.total_gib ?? NaN, fits: r.fits, source: r.source })),
      pointStyle: shown.map((r) => (r.fits === false ? 'crossRot' : 'circle')),
      pointRadius: shown.map((r) => (r.fits === false ? 9 : 3)),
    };
  });
  const xs = [...model, ...measured].map((r) => r.seq_len);
  const xMin = minOf(xs), xMax = maxOf(xs);
  datasets.push({
    label: `HBM ${hbmGib} GiB`, borderColor: '#000000', backgroundColor: '#000000', borderDash: [2, 4], showLine: true, borderWidth: 1.5,
    data: [{ x: xMin, y: hbmGib, fits: null, source: 'limit' }, { x: xMax, y: hbmGib, fits: null, source: 'limit' }], pointStyle: 'line', pointRadius: 0,
  });
  const bySource = new Map<string, CsvRow[]>();
  // Measured points: triangles; runs that went out of memory: a cross on the HBM line.
  for (const r of measured) if (r.total_gib !== null || r.fits === false) bySource.set(r.source, [...(bySource.get(r.source) ?? []), r]);
  [...bySource.entries()].forEach(([source, rows], i) => {
    const color = LINE_COLORS[(lines.length + i) % LINE_COLORS.length];
    const oom = (r: CsvRow) => r.total_gib === null;
    datasets.push({
      label: `measured: ${source.replace(/^measured:\s*/, '')}`, borderColor: color, backgroundColor: color, showLine: false, borderWidth: 2,
      data: rows.map((r) => ({
        x: r.seq_len, y: oom(r) ? hbmGib : r.total_gib!, fits: r.fits,
        source: `${r.source} (CP=${r.cp ?? '?'}, TP=${r.tp ?? '?'}, recompute=${r.recompute ?? '?'})${oom(r) ? ': out of memory' : ''}`,
      })),
      pointStyle: rows.map((r) => (oom(r) ? 'crossRot' : 'triangle')), pointRadius: rows.map((r) => (oom(r) ? 10 : 7)),
    });
  });
  // The axis shows 1.6 × HBM, or up to the highest point where points lie above that (a line that starts above
  // HBM stays in view, with its out-of-memory cross whole), at most 4 × HBM; what lies higher still is said.
  const ys = datasets.flatMap((d) => (d.data as { y: number }[]).map((p) => p.y)).filter(Number.isFinite);
  const yMax = Math.ceil(Math.max(hbmGib * 1.6, Math.min(maxOf(ys) * 1.08, hbmGib * 4)));
  const above = ys.filter((y) => y > yMax).length;
  if (above) subtitle = `${subtitle ? `${subtitle} ` : ''}(${above} point${above === 1 ? '' : 's'} above ${yMax} GiB, off the scale)`;
  return {
    type: 'line',
    data: { datasets },
    options: {
      // Padding keeps the markers at the axis ends (the 4K and 1M points) whole.
      responsive: false, animation: false, parsing: false, layout: { padding: { left: 8, right: 16, top: 4, bottom: 4 } },
      plugins: {
        title: { display: true, text: wrapText(title) },
        subtitle: { display: !!subtitle, text: wrapText(subtitle, 160), padding: { top: 2, bottom: 12 } },
        legend: { position: 'bottom' },
      },
      scales: {
        x: { type: 'logarithmic', min: xMin, max: xMax, title: { display: true, text: 'sequence length (tokens)' } },
        y: { type: 'linear', min: 0, max: yMax, title: { display: true, text: 'peak memory per GPU (GiB)' } },
      },
    },
  };
}

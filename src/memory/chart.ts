/**
 * The activation-memory chart as a Chart.js configuration (plain data, no DOM): the page draws
 * it, the bench renders it to PNG headless. y = peak memory per GPU (GiB), x = sequence length
 * (log scale), one line per configuration, the HBM limit across. A line ends at its first point
 * that does not fit, drawn as a cross above the limit (the y axis stops at 1.6 × HBM, so a line
 * that blows past the limit leaves the chart going up: "goes vertical"). Measured points are
 * drawn as triangles with their source.
 */
import { CsvRow } from './csv.js';
import { SweepLine, SweepPoint } from './model.js';

/**
 * A note for lines drawn exactly on top of others: with FlashAttention, selective
 * recomputation only drops the softmax LSE, so "+ recompute" lines coincide with their twins.
 */
export function coincidentNote(pts: SweepPoint[], lines: SweepLine[]): string {
  const same = lines.filter((l) => l.overrides.recompute === 'selective').filter((l) => {
    const twin = lines.find((x) => x.overrides.contextParallel === l.overrides.contextParallel && (x.overrides.recompute ?? 'none') === 'none');
    const a = pts.filter((p) => p.line === l.label), b = pts.filter((p) => p.line === twin?.label);
    return a.length > 0 && a.every((p, i) => b[i] && Math.abs(p.totalGib - b[i].totalGib) <= 0.01 * b[i].totalGib);
  });
  return same.length
    ? `${same.map((l) => l.label).join(' and ')} lie on their lines without recomputation: with FlashAttention, selective recomputation only drops the softmax LSE`
    : '';
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

export function memoryChartConfig(model: CsvRow[], measured: CsvRow[], hbmGib: number, title: string, subtitle = ''): MemoryChartConfig {
  const lines = [...new Set(model.map((r) => r.line ?? `CP=${r.cp}${r.recompute && r.recompute !== 'none' ? ` + ${r.recompute}` : ''}`))];
  const datasets: ChartDataset[] = lines.map((label, i) => {
    const rows = model.filter((r) => (r.line ?? '') === label || (!r.line && label.startsWith(`CP=${r.cp}`))).sort((a, b) => a.seq_len - b.seq_len);
    const firstOom = rows.findIndex((r) => r.fits === false);
    const shown = firstOom < 0 ? rows : rows.slice(0, firstOom + 1);
    const color = LINE_COLORS[i % LINE_COLORS.length];
    return {
      label, borderColor: color, backgroundColor: color, showLine: true, borderWidth: 2,
      borderDash: label.includes('recompute') ? [6, 3] : undefined,
      data: shown.map((r) => ({ x: r.seq_len, y: r.total_gib ?? NaN, fits: r.fits, source: r.source })),
      pointStyle: shown.map((r) => (r.fits === false ? 'crossRot' : 'circle')),
      pointRadius: shown.map((r) => (r.fits === false ? 9 : 3)),
    };
  });
  const xs = [...model, ...measured].map((r) => r.seq_len);
  const xMin = Math.min(...xs), xMax = Math.max(...xs);
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
  return {
    type: 'line',
    data: { datasets },
    options: {
      responsive: false, animation: false, parsing: false,
      plugins: { title: { display: true, text: title }, subtitle: { display: !!subtitle, text: subtitle }, legend: { position: 'bottom' } },
      scales: {
        x: { type: 'logarithmic', min: xMin, max: xMax, title: { display: true, text: 'sequence length (tokens)' } },
        y: { type: 'linear', min: 0, max: Math.ceil(hbmGib * 1.6), title: { display: true, text: 'peak memory per GPU (GiB)' } },
      },
    },
  };
}

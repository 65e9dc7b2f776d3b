/**
 * The memory charts drawn at the width they show at (web/main.ts draws them). A chart draws at its container's width,
 * at most its design width (index.html's canvas: 960 px), at its design height and the device's pixel ratio, so its
 * text is the size Chart.js gives it (12 px ticks, legend and titles; the tooltips' 11 px) in CSS pixels in any window.
 * (They drew at the design width and CSS scaled them down: in a 390 px window to 37%, their text 4–5 px.) A title or
 * tooltip line too long for a narrow chart is broken into lines that fit, a legend label cut with an ellipsis. The PNG
 * export draws the same chart again at the design size: the image it always was, whatever the window. The ring
 * timelines (web/live.ts, drawn by hand) take the same width (fitWidth), follow it (followWidth) and size their
 * canvas for the pixel ratio as Chart.js does (fitCanvas), drawn again where the ratio changes (followPixelRatio).
 */
import Chart, { type FontSpec } from 'chart.js/auto';
import { toFont } from 'chart.js/helpers';
import { wrapText } from '../src/memory/chart.js';
import { clip } from './format.js';

interface Size { width: number; height: number }
/** A chart's configuration, built afresh for each chart drawn from it (Chart.js takes over the objects it is given). */
export type ChartBuild = () => { options: Record<string, unknown> };

const designs = new WeakMap<HTMLCanvasElement, Size>();
const builds = new WeakMap<Chart, ChartBuild>();
const followed = new WeakSet<HTMLCanvasElement>();
/** Room a title keeps beside it (the layout's padding, 8 + 16 px, and a margin). */
const TITLE_MARGIN = 32;

/** A canvas's design size: its width and height as index.html gives them, read before a chart first sizes it. */
function designSize(canvas: HTMLCanvasElement): Size {
  let d = designs.get(canvas);
  if (!d) designs.set(canvas, (d = { width: canvas.width, height: canvas.height }));
  return d;
}

/**
 * The width a chart draws at, CSS px: its container's (the page's column), at most its design width; the design width
 * where the container has none. (The timelines, web/live.ts, draw at it too.)
 */
export function fitWidth(canvas: HTMLCanvasElement): number {
  const design = designSize(canvas).width, box = Math.floor(canvas.parentElement?.clientWidth ?? 0);
  return box > 0 ? Math.min(design, box) : design;
}

let scratch: CanvasRenderingContext2D | null = null;

/** Text's width in px in `font` (a Chart.js font, its defaults filling the rest). */
function measurer(font: Partial<FontSpec>): (text: string) => number {
  const g = (scratch ??= document.createElement('canvas').getContext('2d')!);
  g.font = toFont(font).string;
  return (text) => g.measureText(text).width;
}

/**
 * `lines` as lines at most `px` wide in `font`, broken at spaces: as they are where each fits; else each broken
 * apart, or (`join`: one text, as a title's lines) all of them again.
 */
export function fitLines(lines: string[], px: number, font: Partial<FontSpec> = {}, join = false): string[] {
  const width = measurer(font);
  if (lines.every((l) => width(l) <= px)) return lines;
  return join ? wrapText(lines.join(' '), px, width) : lines.flatMap((l) => wrapText(l, px, width));
}

/**
 * `text` as it is where it is at most `px` wide in `font`, else cut with an ellipsis (at a word where it can) to fit:
 * a legend label (Chart.js draws a legend row's labels on one line each).
 */
export function clipToWidth(text: string, px: number, font: Partial<FontSpec> = {}): string {
  const width = measurer(font);
  if (width(text) <= px) return text;
  let lo = 1, hi = text.length;   // the most characters whose cut fits: lo fits (or is the least kept), hi does not
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (width(clip(text, mid)) <= px) lo = mid;
    else hi = mid;
  }
  return clip(text, lo);
}

/** A chart's title and subtitle for a drawing `width` px wide: as src/memory/chart.ts broke them at the design width, broken again below it. */
function fitTitles(options: Record<string, unknown>, width: number, design: number): void {
  if (width >= design) return;
  const plugins = options.plugins as Record<string, { text?: string | string[]; font?: Partial<FontSpec> } | undefined>;
  for (const [key, weight] of [['title', 'bold'], ['subtitle', 'normal']] as const) {
    const t = plugins[key];
    if (Array.isArray(t?.text)) t.text = fitLines(t.text, width - TITLE_MARGIN, { weight, ...t.font }, true);
  }
}

/** A chart of `cfg` on `canvas` at the canvas's size (not responsive: Chart.js draws at it, times the pixel ratio, and sets its CSS size to it). */
const chartAtSize = (canvas: HTMLCanvasElement, cfg: ReturnType<ChartBuild>): Chart =>
  new Chart(canvas, { ...cfg, options: { ...cfg.options, maintainAspectRatio: false } } as never);

/** Draws `build`'s chart on `canvas` at the width it shows at and its design height; it follows its container's width from then on. */
export function drawFitted(canvas: HTMLCanvasElement, build: ChartBuild): Chart {
  const design = designSize(canvas), width = fitWidth(canvas), cfg = build();
  fitTitles(cfg.options, width, design.width);
  Object.assign(canvas, { width, height: design.height });
  const chart = chartAtSize(canvas, cfg);
  builds.set(chart, build);
  followWidth(canvas, () => refit(canvas));
  return chart;
}

/** `redraw` runs when `canvas`'s container changes size (a window resized or turned); set once per canvas. */
export function followWidth(canvas: HTMLCanvasElement, redraw: () => void): void {
  if (followed.has(canvas) || !canvas.parentElement || typeof ResizeObserver === 'undefined') return;
  followed.add(canvas);
  new ResizeObserver(redraw).observe(canvas.parentElement);
}

/** The device's pixel ratio: backing pixels per CSS pixel (1 where the browser gives none). */
export const pixelRatio = (): number => window.devicePixelRatio || 1;

/**
 * `redraw` runs each time the device's pixel ratio changes (the window moved to a screen of another density, or the page
 * zoomed where that leaves its width): a media query at the present ratio, armed again at each change. Chart.js follows
 * the ratio itself; the hand-drawn timelines need this, as their width may not change.
 */
export function followPixelRatio(redraw: () => void): void {
  if (typeof matchMedia === 'undefined') return;
  const arm = () => matchMedia(`(resolution: ${pixelRatio()}dppx)`).addEventListener('change', () => { arm(); redraw(); }, { once: true });
  arm();
}

/**
 * A hand-drawn canvas (the timelines) sized to show at `width` × `height` CSS px and hold a backing pixel per device
 * pixel, as Chart.js sizes a chart: its context (returned) scaled by the device's pixel ratio draws in CSS px.
 */
export function fitCanvas(canvas: HTMLCanvasElement, width: number, height: number): CanvasRenderingContext2D {
  const k = pixelRatio();
  Object.assign(canvas, { width: Math.round(width * k), height: Math.round(height * k) });
  Object.assign(canvas.style, { width: `${width}px`, height: `${height}px` });
  const g = canvas.getContext('2d')!;
  g.setTransform(k, 0, 0, k, 0, 0);
  return g;
}

/** The chart on `canvas` at its container's new width (a window resized or turned): resized, its titles broken again (legend and tooltips fit as drawn). */
function refit(canvas: HTMLCanvasElement): void {
  const chart = Chart.getChart(canvas), build = chart && builds.get(chart);
  const design = designSize(canvas), width = fitWidth(canvas);
  if (!chart || !build || width === chart.width) return;
  const fresh = build().options;
  fitTitles(fresh, width, design.width);
  const now = chart.options.plugins as Record<string, { text?: unknown }>, was = fresh.plugins as Record<string, { text?: unknown }>;
  for (const key of ['title', 'subtitle']) if (now[key] && was[key]) now[key].text = was[key].text;
  chart.resize(width, design.height);
  chart.update();
}

/**
 * `chart` drawn again at its design size on a canvas of its own (what is hidden on the page hidden there too), on
 * white, as a PNG data URL: the export's image at any window width and pixel ratio the page's at full width.
 */
export function designPng(chart: Chart): string {
  const build = builds.get(chart);
  if (!build) throw new Error('designPng: a chart that drawFitted did not draw');
  const { width, height } = designSize(chart.canvas), cfg = build();
  const canvas = Object.assign(document.createElement('canvas'), { width, height });
  const copy = chartAtSize(canvas, cfg);
  try {
    chart.data.datasets.forEach((_, i) => copy.setDatasetVisibility(i, chart.isDatasetVisible(i)));
    copy.update();
    return opaque(canvas);
  } finally {
    copy.destroy();
  }
}

/** A canvas as a PNG on white (a chart's canvas is transparent: a dark viewer would show black on black). */
function opaque(canvas: HTMLCanvasElement): string {
  const c = Object.assign(document.createElement('canvas'), { width: canvas.width, height: canvas.height });
  const g = c.getContext('2d')!;
  g.fillStyle = '#ffffff';
  g.fillRect(0, 0, c.width, c.height);
  g.drawImage(canvas, 0, 0);
  return c.toDataURL('image/png');
}

/**
 * The page's live run: the FlashAttention kernels and the CP ring in this tab, checked against
 * float64 attention on the CPU when the size allows, and ring timelines (from a run, or a dropped
 * JSON file) drawn per rank. The ring runs in one-device mode: the R ranks of the chosen scheme
 * (Megatron-LM's --cp-comm-type) share this tab's one WebGPU device, each rank's compute timed
 * alone; the link model (src/cp/plan/linkModel.ts) turns those step times into the timeline R real
 * GPUs on the chosen link would show, drawn under the measured one.
 *
 * Devices are acquired once and reused by later runs (a fresh device per click costs seconds and
 * memory); a lost device is replaced. Cancel answers at once: the page is free again, and the run
 * in flight submits nothing more, ending once the GPU has done the compute it was given (a new
 * run waits for that, and says so). Results of an earlier run are
 * cleared when a run starts and when it fails. Every message speaks of the form's fields.
 */
import { decimalNumber } from '../src/decimal.js';
import { counted, plural } from '../src/plural.js';
import { formatBytes } from '../src/bytes.js';
import { replaceViewHash } from './view.js';
import { download } from './download.js';
import { acquireDevices, adapterName, FlashDevice, withTuning } from '../src/gpu/device.js';
import { autotune, storedTuning, type TuneEntry } from '../src/bench/tune.js';
import { tilesInWords, trialWords } from './tuneWords.js';
import { idbTuneStore, keptOrSaid } from './tuneStore.js';
import { FieldError, FieldErrors, customLink, marksOf, showFieldErrors } from './fields.js';
import { duration, flopRate } from './format.js';
import { detailsTable, fillTable } from './table.js';
import { fitCanvas, fitWidth, followPixelRatio, followWidth, pixelRatio } from './chartFit.js';
import { wrapText } from '../src/memory/chart.js';
import { ringAttention, RingOptions, RingTimeline, StepRecord } from '../src/cp/launch/ringAttention.js';
import { ONE_RANK, oneRankTransfers } from '../src/cp/rank/timeline.js';
import { Layout, LAYOUTS } from '../src/cp/plan/schedule.js';
import { LINKS, LINK_NAMES, Link, stepParts } from '../src/cp/plan/linkModel.js';
import { Scheme, schemeDef, schemeDefs, schemeNames } from '../src/cp/schemes/registry.js';
import { referenceBackward, referenceForward } from '../src/reference/attention.js';
import { randn, referenceInput, relErr, TOL } from '../src/reference/compare.js';
import { AttentionShape, MAX_HEAD_DIM, attentionPairFlops, numel, resolveOptions } from '../src/shape.js';
import { Mask, MaskRules } from '../src/mask.js';
import { toF32 } from '../src/kernels/attention.js';
import { Precision } from '../src/kernels/precision.js';

const $ = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

class Cancelled extends Error {}


interface LiveConfig {
  N: number; D: number; H: number; R: number; layout: Layout; precision: Precision; causal: boolean; backward: boolean;
  /** Sliding window [left, right] (−1 = unbounded) and packed documents of equal length (1 = none). */
  window: [number, number]; docs: number;
  scheme: Scheme;
  /** a2a+p2p: [a2a group size A, ring size P], A·P = R. */
  sizes?: [number, number];
  link: Link;
  /** Run with the tiles Tune stored for this GPU, D, precision and mask (where there are some). */
  tuned: boolean;
}

const MAX_N = 65536, MAX_HEADS = 64, MAX_RANKS = 8;
/**
 * Most elements per tensor (N·heads·D): the page draws its inputs in this tab (the main thread)
 * and holds Q, K, V, dO and the outputs in its memory; 2^24 (64 MiB of f32 each) takes about a
 * second to draw. Larger shapes freeze the tab or pass the GPU's binding limit (maxBufferSize).
 */
const MAX_LIVE_ELEMENTS = 2 ** 24;

/** Why a run at f16 cannot be had here: the adapter offers no shader-f16. */
const NO_F16 = 'This GPU does not offer 16-bit floats to WebGPU (shader-f16): choose precision f32.';
/** The tab's adapter is known to lack shader-f16 (its features at load, or the page's device): the form refuses f16 beside the field. */
let noF16 = false;

/** Reads and checks the form: every wrong field at once (FieldErrors where more than one is). */
function readLiveForm(form: HTMLFormElement): LiveConfig {
  const field = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
  const errors: FieldError[] = [];
  const read = <T>(f: () => T): T | undefined => {
    try { return f(); } catch (e) { if (!(e instanceof FieldError)) throw e; errors.push(e); return undefined; }
  };
  const whole = (n: string, label: string, lo: number, hi: number) => read(() => {
    // Decimal or scientific notation, as the planner's fields and the CLI read numbers: 1e3 is the whole number 1000.
    const raw = field(n).value.trim();
    const v = decimalNumber(raw);
    if (raw === '' || !Number.isInteger(v) || v < lo || v > hi) throw new FieldError(`${label} must be a whole number from ${lo} to ${hi}${raw === '' ? '' : ` (it is ${raw})`}.`, field(n));
    return v;
  });
  const N = whole('N', 'Sequence length N', 1, MAX_N);
  const D = read(() => {
    const d = whole('D', 'Head size D', 8, MAX_HEAD_DIM);
    if (d !== undefined && d % 8) throw new FieldError(`Head size D must be a multiple of 8 (it is ${d}).`, field('D'));
    return d;
  });
  const H = whole('H', 'Heads', 1, MAX_HEADS);
  const R = whole('R', 'Ranks R', 1, MAX_RANKS);
  if (N !== undefined && H !== undefined && D !== undefined && N * H * D > MAX_LIVE_ELEMENTS)
    errors.push(new FieldError(`N × heads × D is ${(N * H * D).toLocaleString('en-US')}: a live run draws and holds its tensors in this tab, so keep it at most ${MAX_LIVE_ELEMENTS.toLocaleString('en-US')} (e.g. N ${N} with ${counted(Math.max(1, Math.floor(MAX_LIVE_ELEMENTS / (N * D))), 'head')} at D ${D}); larger runs: flashring attention --cp or the bench.`, field('N')));
  if (R !== undefined && N !== undefined && R > N) errors.push(new FieldError(`Ranks R (${R}) cannot exceed the sequence length N (${N}): every rank needs at least one token.`, field('R')));
  const layout = field('layout').value as Layout;
  if (!LAYOUTS.includes(layout)) errors.push(new FieldError(`Layout must be one of ${LAYOUTS.join(', ')}.`, field('layout')));
  const precision = field('precision').value as Precision;
  if (precision !== 'f32' && precision !== 'f16') errors.push(new FieldError('Precision must be f32 or f16.', field('precision')));
  if (precision === 'f16' && noF16) errors.push(new FieldError(NO_F16, field('precision')));
  const sc = read(() => readScheme(field, H, R));
  const docs = whole('docs', 'Documents', 1, N ?? MAX_N);
  const window = read(() => readWindow(field('window'), N ?? MAX_N));
  const link = read(() => readLink(field));
  if (errors.length) throw errors.length === 1 ? errors[0] : new FieldErrors(errors);
  return { N: N!, D: D!, H: H!, R: R!, layout, precision, causal: field('causal').checked, backward: field('backward').checked, window: window!, docs: docs!, scheme: sc!.scheme, sizes: sc!.sizes, link: link!, tuned: field('tuned')?.checked ?? false };
}

/** What a refusal of the form says in the status line: every wrong field's message. */
export const liveWords = (e: unknown) => (e instanceof FieldErrors ? e.errors.map((x) => x.message).join(' ') : (e as Error).message);

/** "L,R": how many keys before and after its own position a query sees; −1 = unbounded. */
function readWindow(input: HTMLInputElement, N: number): [number, number] {
  const raw = input.value, m = /^\s*(-1|\d+)\s*,\s*(-1|\d+)\s*$/.exec(raw);
  if (!m) throw new FieldError(`Window must be two whole numbers "left,right" (−1 for unbounded), like 128,0 (it is "${raw}").`, input);
  const w = [Number(m[1]), Number(m[2])] as [number, number];
  if (w.some((x) => x > 1 << 29)) throw new FieldError(`Window sides must be at most ${1 << 29} (they are ${raw}).`, input);
  return w[0] >= N ? [-1, w[1] >= N ? -1 : w[1]] : [w[0], w[1] >= N ? -1 : w[1]];
}

/** The mask options of a live run: the window, and documents as cu_seqlens over N tokens. */
function liveMask(cfg: Pick<LiveConfig, 'causal' | 'window' | 'docs' | 'N'>): MaskRules {
  if (cfg.docs <= 1) return { causal: cfg.causal, window: cfg.window, docs: null };
  const cu = Int32Array.from({ length: cfg.docs + 1 }, (_, d) => Math.floor((d * cfg.N) / cfg.docs));
  return { causal: cfg.causal, window: cfg.window, docs: { cuQ: cu, cuK: cu } };
}

/** Visible (query, key) pairs of one head under the run's mask: the FLOPs are 4·H·D per pair forward. */
function visiblePairs(s: AttentionShape, cfg: LiveConfig): number {
  const mask = new Mask(resolveOptions(s, liveMask(cfg)), s.Nq, s.Nk);
  let n = 0;
  for (let i = 0; i < s.Nq; i++) {
    const [lo, hi] = mask.keyRange(i);
    n += Math.max(0, hi - lo);
  }
  return n;
}

/**
 * The scheme and, for a2a+p2p, its group sizes; a2a needs the heads to divide among the ranks it spans
 * (not checked while heads or R are themselves wrong: undefined).
 */
function readScheme(field: (n: string) => HTMLInputElement, H?: number, R?: number): { scheme: Scheme; sizes?: [number, number] } {
  const scheme = field('scheme').value as Scheme;
  if (!schemeNames().includes(scheme)) throw new FieldError(`Scheme must be one of ${schemeNames().join(', ')}.`, field('scheme'));
  if (H === undefined || R === undefined) return { scheme };
  if (scheme === 'a2a' && H % R) throw new FieldError(`Scheme a2a (Ulysses) splits the heads over the ranks: heads (${H}) must be divisible by ranks R (${R}).`, field('scheme'));
  if (scheme !== 'a2a+p2p') return { scheme };
  const raw = field('hcp').value.trim();
  const m = /^(\d+)\s*,\s*(\d+)$/.exec(raw);
  if (!m || +m[1] < 1 || +m[2] < 1) throw new FieldError(`a2a+p2p sizes must be two whole numbers A,P (a2a groups of A ranks, a ring of P groups)${raw ? ` (they are ${raw})` : ''}.`, field('hcp'));
  const A = +m[1], P = +m[2];
  if (A * P !== R) throw new FieldError(`a2a+p2p sizes ${A},${P} multiply to ${A * P}, not ranks R (${R}).`, field('hcp'));
  if (H % A) throw new FieldError(`a2a+p2p splits the heads over groups of ${A}: heads (${H}) must be divisible by ${A}.`, field('hcp'));
  return { scheme, sizes: [A, P] };
}

/** A preset link, or a custom one with its bandwidth (Gbit/s per direction) and latency (µs). */
function readLink(field: (n: string) => HTMLInputElement): Link {
  const name = field('link').value;
  if (!LINK_NAMES.includes(name)) throw new FieldError(`Link must be one of ${LINK_NAMES.join(', ')}.`, field('link'));
  if (name !== 'custom') return LINKS[name as keyof typeof LINKS];
  return customLink(field('gbps'), field('lat'));
}

/** Checks that a parsed JSON file is a ring timeline the page can draw; throws a readable Error. */
function checkTimeline(tl: unknown): asserts tl is RingTimeline {
  const t = tl as Record<string, unknown>;
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  if (!t || typeof t !== 'object' || Array.isArray(t)) throw new Error('it is not a JSON object');
  if (t.kind !== 'flashring.timeline') throw new Error('not a flashring timeline (kind "flashring.timeline" missing)');
  if (!Number.isInteger(t.R) || (t.R as number) < 1) throw new Error('its number of ranks R is missing or not a whole number');
  if ((t.R as number) > 1024) throw new Error(`its number of ranks R (${t.R}) is more than the page draws (1024)`);
  if (!Array.isArray(t.phases) || !t.phases.length) throw new Error('it has no phases to draw (the "phases" list is missing or empty)');
  t.phases.forEach((ph: Record<string, unknown>, i: number) => {
    if (!ph || typeof ph.phase !== 'string' || !num(ph.wallMs) || !Array.isArray(ph.steps)) throw new Error(`phase ${i + 1} lacks its name, wall time or steps`);
    ph.steps.forEach((st: Record<string, unknown>, j: number) => {
      // One device's ranks take turns: each step's time on the device (computeMs) is what its bar shows (drawTimeline).
      const fields = ['start', 'computeEnd', 'transferEnd', 'end', 'transferMs', 'idleMs', ...(t.mode === 'one-device' && !t.pipelined ? ['computeMs'] : [])];
      if (!st || !Number.isInteger(st.rank) || (st.rank as number) < 0 || (st.rank as number) >= (t.R as number) || fields.some((f) => !num(st[f])))
        throw new Error(`step ${j + 1} of phase ${i + 1} lacks a valid rank or one of ${fields.join(', ')}`);
    });
  });
  const sm = t.summary as Record<string, unknown> | undefined;
  if (!sm || !num(sm.overlapEfficiency)) throw new Error('its summary (overlap efficiency) is missing');
  if (t.adapters !== undefined && !Array.isArray(t.adapters)) throw new Error('its adapter list is not a list');
  if (t.scheme !== undefined && !schemeNames().includes(t.scheme as Scheme)) throw new Error(`its scheme '${String(t.scheme)}' is not one of ${schemeNames().join(', ')}`);
  if (t.mode !== undefined && t.mode !== 'one-device' && t.mode !== 'multi-adapter' && t.mode !== 'processes') throw new Error(`its mode '${String(t.mode)}' is not one-device, multi-adapter or processes`);
  if (t.predicted !== undefined) checkPrediction(t.predicted as Record<string, unknown>, t.phases as Record<string, unknown>[]);
}

/** A version-2 file's `predicted` (linkModel.ts's Prediction) and the step fields its drawing reads. */
function checkPrediction(pr: Record<string, unknown>, phases: Record<string, unknown>[]): void {
  const num = (x: unknown) => typeof x === 'number' && Number.isFinite(x);
  const nums = (x: unknown) => Array.isArray(x) && x.every(num);
  const link = pr?.link as Record<string, unknown> | undefined;
  if (!link || typeof link.name !== 'string' || !num(link.gbps) || (link.gbps as number) <= 0 || !num(link.latencyUs))
    throw new Error('its predicted timeline lacks a link (name, gbps, latencyUs)');
  if (!nums(pr.stepMs) || !num(pr.commFraction) || !num(pr.tflopsPerGpu) || !num(pr.totalMs))
    throw new Error('its predicted timeline lacks stepMs, totalMs, commFraction or tflopsPerGpu');
  const prPhases = pr.phases as Record<string, unknown>[];
  if (!Array.isArray(prPhases) || prPhases.some((p) => !p || typeof p.phase !== 'string' || !nums(p.stepMs)))
    throw new Error('its predicted timeline lacks per-phase step times');
  for (const p of prPhases) {
    const steps = (phases.find((ph) => ph.phase === p.phase)?.steps ?? []) as Record<string, unknown>[];
    if (new Set(steps.map((st) => st.step)).size !== (p.stepMs as number[]).length)
      throw new Error(`its predicted ${String(p.phase)} has ${(p.stepMs as number[]).length} steps, the measured one ${new Set(steps.map((st) => st.step)).size}`);
    if (steps.some((st) => !Number.isInteger(st.step) || !num(st.transferBytes) || !num(st.messages) || !num(st.flops)))
      throw new Error(`a ${String(p.phase)} step lacks its step number, flops, transferBytes or messages (the predicted timeline needs them)`);
  }
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

const CANVASES = ['timeline', 'timeline-predicted'];

/** One rank's step as drawn: its box on the canvas (canvas pixels) and its tooltip. */
interface StepBox { phase: string; step: number; rank: number; x: number; y: number; w: number; h: number; tip: string; label: string; cells: string[] }
/** A step's column across the ranks, for the step axis. */
interface StepColumn { phase: string; step: number; label: string; x0: number; x1: number }
/**
 * Each timeline canvas as last drawn: its step boxes (the tooltip finds them), the step names on its axis, the width it
 * drew at (CSS px, its drawing's units), the pixel ratio it drew at (backing pixels per CSS px) and its caption's lines.
 */
const drawn = new Map<string, { boxes: StepBox[]; axis: string[]; width: number; ratio: number; caption: string[] }>();
/** The timeline shown (a run's or a dropped file's), drawn again when the window's width changes; null when none is. */
let shown: RingTimeline | null = null;

const PHASE_SHORT: Record<string, string> = { forward: 'fwd', backward: 'bwd' };
/** A step as people count it, from 1 (as the CLI's progress and timeline table; a timeline file's `step` counts from 0). */
const shownStep = (step: number) => step + 1;

/** "step 3 fwd · ring, rank 1": which step of which phase, what it does, and whose. */
const stepTitle = (phase: string, step: number, label: string, rank?: number) =>
  `step ${shownStep(step)} ${PHASE_SHORT[phase] ?? phase}${label ? ` · ${label}` : ''}${rank === undefined ? '' : `, rank ${rank}`}`;

/** The timelines cleared and collapsed (hidden) until there is something to draw: no blank canvases. */
function clearTimeline(): void {
  shown = null;
  $<HTMLButtonElement>('timeline-save').disabled = true;
  for (const id of CANVASES) {
    const c = $<HTMLCanvasElement>(id);
    c.getContext('2d')!.clearRect(0, 0, c.width, c.height);
    c.hidden = true;
    drawn.delete(id);
    stepTable(id);
  }
  for (const tip of Array.from(document.querySelectorAll<HTMLElement>('.chart-tip'))) tip.hidden = true;
}

/** The tallest a timeline gets (many ranks share it); fewer ranks take less (frame). */
const FRAME_HEIGHT = 220;
/** The timelines' text (rank names, ticks, phases, caption; the step names are 11 px), where their time axis begins, and a caption line's height (px). */
const FONT = '12px system-ui', LEFT = 70, CAPTION_LINE = 15;

/**
 * A timeline's caption as drawn: one line from the time axis where it fits there, else (a phone's narrow timeline)
 * broken into lines from the left edge, each within the width.
 */
function captionLines(g: CanvasRenderingContext2D, caption: string, width: number): { x: number; lines: string[] } {
  if (g.measureText(caption).width <= width - LEFT - 4) return { x: LEFT, lines: [caption] };
  return { x: 4, lines: wrapText(caption, width - 8, (l) => g.measureText(l).width) };
}

/**
 * The canvas at its container's width (at most index.html's 960 px) and the device's pixel ratio (web/chartFit.ts), so
 * its text is 12 CSS px in any window (drawn at 960 px, CSS scaled it to 4.5 px in a 390 px window); with rank rows of
 * at most 40 px, a time axis from LEFT over `totalMs` with its ticks in ms under the rows (each timeline on its own
 * scale: a one-device run's wall time can be ten times its prediction's), and `caption` at the bottom.
 */
function frame(id: string, R: number, totalMs: number, caption: string) {
  const c = $<HTMLCanvasElement>(id), width = fitWidth(c);
  const top = 30, rowH = Math.min(40, (FRAME_HEIGHT - top - 32) / R);
  const measure = c.getContext('2d')!;
  measure.font = FONT;
  const cap = captionLines(measure, caption, width);
  // As tall as the rows, the ticks and the caption (drawn at the bottom): no blank band between the drawing and its caption.
  const height = Math.ceil(top + R * rowH + 36 + (cap.lines.length - 1) * CAPTION_LINE);
  const g = fitCanvas(c, width, height);
  c.hidden = false;
  c.setAttribute('aria-label', `${id === 'timeline' ? 'Measured' : 'Predicted'} ring timeline: ${counted(R, 'rank row')} over ${duration(totalMs)}, each step's compute, transfer and idle; the table under it gives every step's. Arrow keys step through the steps.`);
  drawn.set(id, { boxes: [], axis: [], width, ratio: pixelRatio(), caption: cap.lines });
  g.font = FONT;
  const w = width - LEFT - 10, span = totalMs || 1;
  g.fillStyle = '#333';
  for (let r = 0; r < R; r++) g.fillText(`rank ${r}`, 4, top + r * rowH + rowH / 2);
  cap.lines.forEach((line, i) => g.fillText(line, cap.x, height - 4 - (cap.lines.length - 1 - i) * CAPTION_LINE));
  const X = (ms: number) => LEFT + (ms / span) * w;
  // Ticks at 1, 2 or 5 × 10^k ms, about one per 80 px (six at most, as at full width).
  const raw = span / Math.max(2, Math.min(6, Math.floor(w / 80))), pow = 10 ** Math.floor(Math.log10(raw)), step = [1, 2, 5, 10].map((k) => k * pow).find((x) => x >= raw)!;
  g.fillStyle = '#888';
  let taken = -Infinity; // where the last tick label drawn ends
  for (let t = 0; t <= span + 1e-9; t += step) {
    g.fillRect(X(t), top + R * rowH, 1, 4);
    // A tick label that would pass the canvas's right edge ends at its tick instead ("3000 ms", not "300"); one that
    // would run into the label before it (so ended, on a narrow timeline) is left out.
    const label = `${Number(t.toPrecision(6))} ms`, lw = g.measureText(label).width, at = X(t) + 2 + lw > width - 2 ? X(t) - 2 - lw : X(t) + 2;
    if (at < taken + 6) continue;
    g.fillText(label, at, top + R * rowH + 14);
    taken = at + lw;
  }
  return { g, top, rowH, X, W: (ms: number) => Math.max(1, (ms / span) * w), boxes: drawn.get(id)!.boxes };
}

/** Both timelines of `tl` drawn (the measured, and the predicted where it has one), each with its table of steps; drawn again as the window's width changes. */
function drawTimelines(tl: RingTimeline): void {
  shown = tl;
  $<HTMLButtonElement>('timeline-save').disabled = false;
  drawTimeline(tl);
  drawPredicted(tl);
  for (const id of CANVASES) stepTable(id);
}

/** Whether a timeline's steps carry their kernels' GPU time (timestamp queries): what the prediction then takes as their compute. */
const gpuTimed = (tl: RingTimeline) => tl.phases.some((ph) => ph.steps.some((st) => typeof st.gpuComputeMs === 'number'));

/** What the prediction took as each step's compute, in the caption's and the results' words. */
function predictedCompute(tl: RingTimeline): string {
  if (tl.predicted?.compute?.source === 'tflops') return 'compute at the given TFLOP/s';
  return gpuTimed(tl) ? "each step's measured GPU time" : 'measured step compute';
}

/**
 * The figures of a timeline's step table, after its phase, step, rank and what the step does: the measured one's GPU
 * time where its steps have one (the compute the prediction takes; its compute column is the host's time on the device).
 */
const tableColumns = (id: string): string[] => (id === 'timeline'
  ? ['compute', ...(shown && gpuTimed(shown) ? ['GPU time'] : []), 'transfer', 'idle', 'waited for the device']
  : ['compute', 'transfer', 'step']);

/**
 * A timeline's steps as a table, in the element its canvas's aria-details names: each rank's step with the figures its
 * tooltip gives, in text for a screen reader (the canvas gave them only step by step, with the arrow keys). No
 * timeline drawn there: no rows.
 */
function stepTable(id: string): void {
  const table = detailsTable($(id));
  if (!table) return;
  const rows = (drawn.get(id)?.boxes ?? []).map((b) => [b.phase, String(shownStep(b.step)), String(b.rank), b.label, ...b.cells.map((text) => ({ text, cls: 'num' }))]);
  fillTable(table, `${id === 'timeline' ? 'The measured' : 'The predicted'} timeline's steps, one row a rank's step (times in ms or s)`, ['phase', 'step', 'rank', 'what it does', ...tableColumns(id)], rows);
  table.closest('details')!.hidden = !rows.length;   // as its canvas: nothing shown without a timeline
}

/**
 * The timelines drawn again where their container's width changed (a window resized or turned) or the device's pixel
 * ratio did (a screen of another density: drawn for the old one, they would be blurred or oversized), tooltips hidden.
 */
function refitTimelines(): void {
  const same = (id: string) => !drawn.has(id) || (drawn.get(id)!.width === fitWidth($(id)) && drawn.get(id)!.ratio === pixelRatio());
  if (!shown || CANVASES.every(same)) return;
  for (const tip of Array.from(document.querySelectorAll<HTMLElement>('.chart-tip'))) tip.hidden = true;
  drawTimelines(shown);
}

/**
 * The step axis over the rank rows: a rule where each step begins and its name in the band above
 * the rows, as much of "step 3 fwd · ring" as its column leaves room for ("3" at the least), never
 * over the name before it (in one-device mode a step's column can begin before the last one ends).
 */
function drawStepAxis(id: string, g: CanvasRenderingContext2D, cols: StepColumn[], top: number, rowsH: number): void {
  g.save();
  g.font = '11px system-ui';
  let taken = -Infinity; // where the last name drawn ends
  cols.forEach((col, i) => {
    g.fillStyle = '#ddd';
    g.fillRect(col.x0, top - 4, 1, rowsH + 4);
    const later = cols.slice(i + 1).map((c) => c.x0).filter((x) => x > col.x0 + 1);
    const at = col.x0 + 2, room = Math.min(col.x1, ...later) - at - 2;
    if (at < taken + 4) return;
    const ph = PHASE_SHORT[col.phase] ?? col.phase;
    const n = shownStep(col.step);
    const text = [stepTitle(col.phase, col.step, col.label), `step ${n} ${ph}`, `${n} ${ph}`, String(n)].find((t) => g.measureText(t).width <= room);
    if (!text) return;
    g.fillStyle = '#333';
    g.fillText(text, at, top - 7);
    taken = at + g.measureText(text).width;
    drawn.get(id)!.axis.push(text);
  });
  g.restore();
}

/** The step number of each record: its own, or (a version-1 file without one) its place among its rank's steps in the phase. */
function stepNumbers(steps: StepRecord[]): number[] {
  const seen = new Map<number, number>();
  return steps.map((st) => {
    const k = seen.get(st.rank) ?? 0;
    seen.set(st.rank, k + 1);
    return Number.isInteger(st.step) ? st.step : k;
  });
}

/** A phase's steps as columns from `offset` ms: each from its first rank's start to its last rank's end (idle included). */
function stepColumns(phase: string, steps: StepRecord[], nums: number[], offset: number, X: (ms: number) => number): StepColumn[] {
  const cols = new Map<number, StepColumn>();
  steps.forEach((st, i) => {
    const a = X(offset + st.start), b = X(offset + st.end + st.idleMs), col = cols.get(nums[i]);
    if (!col) cols.set(nums[i], { phase, step: nums[i], label: st.rank === 0 ? st.label ?? '' : '', x0: a, x1: b });
    else Object.assign(col, { x0: Math.min(col.x0, a), x1: Math.max(col.x1, b), label: st.rank === 0 ? st.label ?? '' : col.label });
  });
  return [...cols.values()].sort((p, q) => p.x0 - q.x0);
}

/**
 * Measured, one row per rank: compute (blue), transfer (orange, lower half), idle (grey), phases in sequence,
 * each step named on the axis above and in its tooltip. In one-device mode the ranks take turns on the device:
 * a step's compute is the time it held the device (computeMs, the end of its span), and the rest of its span,
 * waiting for its turn, is drawn pale.
 */
function drawTimeline(tl: RingTimeline): void {
  const total = tl.phases.reduce((a, p) => a + p.wallMs, 0) || 1;
  const turns = tl.mode === 'one-device' && !tl.pipelined;
  const how = tl.mode !== 'one-device' ? 'measured' : tl.pipelined ? 'measured, one device, pipelined (bars are submissions, not GPU time)'
    : tl.R === 1 ? `measured, ${ONE_RANK}` : 'measured, one device: ranks take turns (pale: waiting; overlap: see the prediction)';
  const overlap = turns || tl.R === 1 ? '' : ` · overlap ${(100 * tl.summary.overlapEfficiency).toFixed(0)}%`;
  const { g, top, rowH, X, W, boxes } = frame('timeline', tl.R, total, `${how}: ${total.toFixed(1)} ms · blue compute · orange transfer · grey idle${overlap}`);
  const gpu = gpuTimed(tl);
  let offset = 0;
  for (const ph of tl.phases) {
    g.fillStyle = '#333';
    g.fillText(ph.phase, X(offset) + 2, 12);
    const nums = stepNumbers(ph.steps);
    drawStepAxis('timeline', g, stepColumns(ph.phase, ph.steps, nums, offset, X), top, tl.R * rowH);
    ph.steps.forEach((st, i) => {
      const y = top + st.rank * rowH;
      const span = st.computeEnd - st.start, busy = turns ? Math.min(span, st.computeMs) : span;
      if (span - busy > 0) {
        g.fillStyle = '#c6dbef';
        g.fillRect(X(offset + st.start), y, W(span - busy), rowH * 0.5 - 2);
      }
      g.fillStyle = '#1f77b4';
      g.fillRect(X(offset + st.computeEnd - busy), y, W(busy), rowH * 0.5 - 2);
      if (st.transferMs > 0) {
        g.fillStyle = '#ff7f0e';
        g.fillRect(X(offset + st.transferEnd - st.transferMs), y + rowH * 0.5, W(st.transferMs), rowH * 0.5 - 4);
      }
      if (st.idleMs > 0) {
        g.fillStyle = '#ccc';
        g.fillRect(X(offset + st.end), y, W(st.idleMs), rowH - 4);
      }
      const waited = span - busy > 0 ? ` · waited ${duration(span - busy)} for the device` : '';
      // The kernels' GPU time (timestamps), which the prediction takes as the step's compute: host time adds the submission and the wait for the GPU.
      const gpuMs = typeof st.gpuComputeMs === 'number' ? st.gpuComputeMs : null;
      const x0 = X(offset + st.start);
      boxes.push({ phase: ph.phase, step: nums[i], rank: st.rank, x: x0, y, w: Math.max(2, X(offset + st.end + st.idleMs) - x0), h: rowH - 4,
        tip: `${stepTitle(ph.phase, nums[i], st.label ?? '', st.rank)}\ncompute ${duration(busy)}${gpuMs === null ? '' : ` (GPU ${duration(gpuMs)})`} · transfer ${duration(st.transferMs)} · idle ${duration(st.idleMs)}${waited}`,
        label: st.label ?? '', cells: [duration(busy), ...(gpu ? [gpuMs === null ? '-' : duration(gpuMs)] : []), duration(st.transferMs), duration(st.idleMs), span - busy > 0 ? duration(span - busy) : '-'] });
    });
    offset += ph.wallMs;
  }
}

/**
 * Predicted (what R GPUs on the link would show): each step lasts its predicted time (its slowest
 * rank); per rank its compute, the modelled transfer beside it (overlapped steps) or after it, idle;
 * each step named on the axis above and in its tooltip, as the measured one.
 */
function drawPredicted(tl: RingTimeline): void {
  const p = tl.predicted;
  if (!p) {
    drawn.delete('timeline-predicted');
    return void $<HTMLCanvasElement>('timeline-predicted').getContext('2d')!.clearRect(0, 0, 1e4, 1e4);
  }
  const caption = `predicted on ${p.link.name} (${p.link.gbps} Gbit/s, ${p.link.latencyUs} µs; ${predictedCompute(tl)}): ${p.totalMs.toFixed(2)} ms · comm ${(100 * p.commFraction).toFixed(1)}% · ` +
    `${flopRate(p.tflopsPerGpu * 1e12)} per GPU`;
  const { g, top, rowH, X, W, boxes } = frame('timeline-predicted', tl.R, p.totalMs, caption);
  let t0 = 0;
  for (const ph of p.phases) {
    const steps = tl.phases.find((x) => x.phase === ph.phase)?.steps ?? [];
    const ids = [...new Set(steps.map((st) => st.step))].sort((a, b) => a - b);
    g.fillStyle = '#333';
    g.fillText(ph.phase, X(t0) + 2, 12);
    const starts = ph.stepMs.map((_, i) => t0 + ph.stepMs.slice(0, i).reduce((a, b) => a + b, 0));
    drawStepAxis('timeline-predicted', g, ids.map((id, i) => ({ phase: ph.phase, step: id, label: steps.find((st) => st.step === id)?.label ?? '', x0: X(starts[i]), x1: X(starts[i] + ph.stepMs[i]) })), top, tl.R * rowH);
    ids.forEach((id, i) => {
      const ms = ph.stepMs[i], at = steps.filter((st) => st.step === id);
      for (const st of at) {
        // Stored timelines from before the prediction named its compute were timed as measured.
        const { compute: cm, transfer: x, own } = stepParts({ ...st, computeMs: st.computeMs ?? 0 }, p.link, p.compute ?? { source: 'measured' }), y = top + st.rank * rowH;
        const xStart = st.overlapped ? 0 : cm;
        g.fillStyle = '#1f77b4';
        if (cm > 0) g.fillRect(X(t0), y, W(cm), rowH * 0.5 - 2);
        g.fillStyle = '#ff7f0e';
        if (x > 0) g.fillRect(X(t0 + xStart), y + rowH * 0.5, W(x), rowH * 0.5 - 4);
        g.fillStyle = '#ccc';
        if (ms - own > 1e-9) g.fillRect(X(t0 + own), y, W(ms - own), rowH - 4);
        const xfer = `${duration(x)}${x > 0 ? (st.overlapped ? ' behind it' : ' after it') : ''}`;
        boxes.push({ phase: ph.phase, step: id, rank: st.rank, x: X(t0), y, w: W(ms), h: rowH - 4,
          tip: `${stepTitle(ph.phase, id, st.label ?? '', st.rank)}\ncompute ${duration(cm)} · transfer ${xfer} · step ${duration(ms)}`,
          label: st.label ?? '', cells: [duration(cm), xfer, duration(ms)] });
      }
      t0 += ms;
    });
  }
}

/** Steps narrower than this (px) are hard to point at: the tooltip of a point this near one names it too. */
const SLIVER = 4;

/** CSS px per px of a timeline's drawing as it shows (1, but where CSS holds the canvas narrower than it drew). */
const shownScale = (c: HTMLCanvasElement) => c.getBoundingClientRect().width / (drawn.get(c.id)?.width ?? c.width);

/** The steps under a point of a timeline (its drawing's px): the one it is on and any sliver beside it, in time order. */
function stepsAt(id: string, x: number, y: number): StepBox[] {
  const row = drawn.get(id)?.boxes.filter((b) => y >= b.y && y <= b.y + b.h) ?? [];
  const near = (b: StepBox) => (x >= b.x && x <= b.x + b.w) || (b.w < SLIVER && b.x + b.w >= x - SLIVER && b.x <= x + SLIVER);
  return row.filter(near).sort((a, b) => a.x - b.x).slice(0, 4);
}

/** The tooltip of the step(s) under the pointer, beside it within the chart, or hidden off every step. */
function showStepTip(c: HTMLCanvasElement, tip: HTMLElement, clientX: number, clientY: number): void {
  const r = c.getBoundingClientRect(), k = shownScale(c);
  const hits = stepsAt(c.id, (clientX - r.left) / k, (clientY - r.top) / k);
  if (!hits.length) return void (tip.hidden = true);
  tip.textContent = hits.map((b) => b.tip).join('\n');
  tip.hidden = false;
  const host = c.parentElement!.getBoundingClientRect(), x = clientX - host.left, y = clientY - host.top;
  tip.style.left = `${x + 12 + tip.offsetWidth <= host.width ? x + 12 : Math.max(0, x - 12 - tip.offsetWidth)}px`;
  tip.style.top = `${y + 14}px`;
}

/** The box a key moves to from `at` (left and right along a rank's row, up and down to the next rank's step nearest in time, Home and End the row's ends). */
function stepBox(key: string, boxes: StepBox[], at: StepBox | undefined): StepBox | undefined {
  const ranks = [...new Set(boxes.map((b) => b.rank))].sort((a, b) => a - b);
  const row = (r: number) => boxes.filter((b) => b.rank === r).sort((a, b) => a.x - b.x);
  if (!at) return key === 'End' || key === 'ArrowLeft' ? row(ranks[0]).at(-1) : row(key === 'ArrowUp' ? ranks.at(-1)! : ranks[0])[0];
  const mine = row(at.rank), i = mine.indexOf(at);
  if (key === 'Home') return mine[0];
  if (key === 'End') return mine.at(-1);
  if (key === 'ArrowLeft' || key === 'ArrowRight') return mine[Math.min(mine.length - 1, Math.max(0, i + (key === 'ArrowRight' ? 1 : -1)))];
  const next = row(ranks[(ranks.indexOf(at.rank) + (key === 'ArrowDown' ? 1 : -1) + ranks.length) % ranks.length]);
  return next.reduce((b, x) => (Math.abs(x.x - at.x) < Math.abs(b.x - at.x) ? x : b), next[0]);
}

/** A timeline canvas for the keyboard: focusable, its arrow keys pick a step and show its tooltip; Escape or leaving hides it. */
function stepKeyboard(c: HTMLCanvasElement, tip: HTMLElement): void {
  c.tabIndex = 0;
  c.setAttribute('role', 'group'); // focusable, arrow keys pick a step: not a static image
  tip.setAttribute('aria-live', 'polite');
  let at: StepBox | undefined;
  c.addEventListener('blur', () => { tip.hidden = true; });
  c.addEventListener('keydown', (e) => {
    if (e.key === 'Escape') return void (tip.hidden = true);
    const boxes = drawn.get(c.id)?.boxes ?? [];
    if (!STEP_KEYS.includes(e.key) || !boxes.length) return;
    e.preventDefault();
    at = stepBox(e.key, boxes, at && boxes.includes(at) ? at : undefined);
    if (!at) return;
    const r = c.getBoundingClientRect(), k = shownScale(c);
    showStepTip(c, tip, r.left + (at.x + at.w / 2) * k, r.top + (at.y + at.h / 2) * k);
  });
}
const STEP_KEYS = ['ArrowLeft', 'ArrowRight', 'ArrowUp', 'ArrowDown', 'Home', 'End'];

/** Each timeline canvas's step tooltip, and hooks.timelineSteps for the tests (the axis names, a step's place, the tooltip shown). */
function wireStepTips(hooks: Record<string, unknown>): void {
  const tips = new Map<string, HTMLElement>();
  for (const id of CANVASES) {
    const c = $<HTMLCanvasElement>(id);
    const tip = Object.assign(document.createElement('div'), { className: 'chart-tip', hidden: true });
    tip.setAttribute('role', 'tooltip');
    c.parentElement!.append(tip);
    tips.set(id, tip);
    c.addEventListener('mousemove', (e) => showStepTip(c, tip, e.clientX, e.clientY));
    c.addEventListener('mouseleave', () => { tip.hidden = true; });
    stepKeyboard(c, tip);
    followWidth(c, refitTimelines);
  }
  followPixelRatio(refitTimelines);
  hooks.timelineSteps = {
    axis: (id: string) => drawn.get(id)?.axis ?? [],
    /** Client coordinates of a step's box (the middle of its rank's row). */
    at: (id: string, phase: string, step: number, rank: number) => {
      const b = drawn.get(id)?.boxes.find((x) => x.phase === phase && x.step === step && x.rank === rank), c = $<HTMLCanvasElement>(id);
      if (!b) return null;
      const r = c.getBoundingClientRect(), k = shownScale(c);
      return { x: r.left + (b.x + b.w / 2) * k, y: r.top + (b.y + b.h / 2) * k };
    },
    tip: (id: string) => (tips.get(id)!.hidden ? '' : tips.get(id)!.textContent ?? ''),
    /** The caption's lines as drawn (one at full width, broken where the timeline is narrow). */
    caption: (id: string) => drawn.get(id)?.caption ?? [],
  };
}

/** Rank 0's step labels per phase, repeats counted: "forward: a2a-in, ring ×2, a2a-out". */
function stepLabels(tl: RingTimeline): string {
  return tl.phases.map((ph) => {
    const labels = ph.steps.filter((st) => st.rank === 0).sort((a, b) => a.step - b.step).map((st) => st.label ?? '?');
    const runs: [string, number][] = [];
    for (const l of labels) {
      if (runs.length && runs[runs.length - 1][0] === l) runs[runs.length - 1][1]++;
      else runs.push([l, 1]);
    }
    return `${ph.phase}: ${runs.map(([l, n]) => (n > 1 ? `${l} ×${n}` : l)).join(', ')}`;
  }).join('; ');
}

/** The errors of a finished run against float64 attention on the CPU (rows and hook values). */
function checkRun(s: AttentionShape, cfg: LiveConfig, x: Record<string, Float32Array>, res: Awaited<ReturnType<typeof ringAttention>>) {
  if (cfg.H * cfg.N * cfg.N * cfg.D > 4e7)
    return { row: 'not computed at this size (H·N²·D > 4·10⁷): the CPU reference would take too long', errors: null, ok: undefined };
  const f = (a: Float32Array) => referenceInput(a, res.precision);
  const errs: Record<string, number> = {};
  const rf = referenceForward(s, f(x.q), f(x.k), f(x.v), liveMask(cfg));
  errs.O = relErr(toF32(res.o), rf.o);
  errs.LSE = relErr(res.lse, rf.lse);
  if (cfg.backward) {
    const rb = referenceBackward(s, f(x.q), f(x.k), f(x.v), f(x.dout), liveMask(cfg));
    errs.dQ = relErr(toF32(res.dq!), rb.dq);
    errs.dK = relErr(toF32(res.dk!), rb.dk);
    errs.dV = relErr(toF32(res.dv!), rb.dv);
  }
  const tol = TOL[res.precision];
  const ok = Object.entries(errs).every(([k, e]) => e <= (k.startsWith('d') ? tol.grad : tol.out));
  return { row: `${Object.entries(errs).map(([k, e]) => `${k} ${e.toExponential(2)}`).join(', ')} — ${ok ? 'within' : 'OVER'} tolerance`, errors: errs, ok };
}

/** Which kernels the run took ('auto': the fastest exact path the browser offers) and, if portable, why. */
function kernelsLabel(k: Awaited<ReturnType<typeof ringAttention>>['kernels']): string {
  const name = (p: string) => (p === 'subgroup-matrix' ? 'tensor cores (subgroup matrices)' : 'portable (register-tiled WGSL, no subgroup matrices)');
  const paths = k.backward && k.backward !== k.forward ? `forward ${name(k.forward)}, backward ${name(k.backward)}` : name(k.forward);
  return `${paths}, the fastest exact path this browser offers${k.fallbackReason ? ` (tensor cores not used: ${k.fallbackReason})` : ''}`;
}


/**
 * Overlap efficiency: measured where the ranks ran at once; in one-device mode, where they take turns
 * on this GPU and a measured overlap means nothing, the prediction's, labelled so (as the chart's caption);
 * none for one rank, which sends nothing.
 */
function overlapRow(tl: RingTimeline): [string, string] {
  if (tl.R === 1) return ['overlap efficiency', `none to measure (${oneRankTransfers(tl.summary)})`];
  if (tl.mode !== 'one-device' || !tl.predicted)
    return ['overlap efficiency', `${(100 * tl.summary.overlapEfficiency).toFixed(1)}% (unhidden transfer ${(100 * tl.summary.unhiddenFraction).toFixed(1)}% of step time)`];
  const o = tl.predicted;
  return [`overlap efficiency, predicted on ${o.link.name}`,
    `${(100 * o.overlapEfficiency).toFixed(1)}% of the modelled transfer hidden behind compute (exposed ${o.exposedCommMs.toFixed(3)} of ${o.transferMs.toFixed(3)} ms; not measured: the ranks take turns on this GPU)`];
}

function resultRows(s: AttentionShape, cfg: LiveConfig, res: Awaited<ReturnType<typeof ringAttention>>, adapter: string): [string, string][] {
  const tl = res.timeline, p = tl.predicted!;
  const wall = tl.phases.reduce((a, ph) => a + ph.wallMs, 0);
  const pairs = visiblePairs(s, cfg);
  const flops = attentionPairFlops(pairs, s.B, s.Hq, s.D, cfg.backward ? 'fwd+bwd' : 'fwd');
  const sizes = tl.scheme === 'a2a+p2p' ? ` (a2a groups of ${tl.hierarchy[0]}, a ring of ${tl.hierarchy[1]})` : '';
  const mode = tl.R === 1 ? ONE_RANK : tl.mode === 'one-device' ? `one-device: the ${tl.R} ranks share this GPU, each rank's compute timed alone` : tl.mode;
  return [
    ['adapter', `${adapter} (${res.precision})`],
    ['kernels', kernelsLabel(res.kernels)],
    ['mode, scheme', `${tl.mode}, ${tl.scheme}${sizes}, ${tl.layout}, R=${tl.R} (${mode})`],
    ['steps', stepLabels(tl)],
    ['achieved', `${flopRate(flops / (wall * 1e-3))} over ${wall.toFixed(1)} ms (ring wall time on this GPU; FLOPs 4·H·D per visible pair, ${pairs} of ${counted(s.Nq * s.Nk, 'pair')} visible${cfg.backward ? ', ×3.5 with the backward' : ''})`],
    overlapRow(tl),
    // Each step as its table and tooltip give it (three significant digits: a 2 µs step read "0.00 ms" at two decimals).
    [`predicted, ${counted(tl.R, 'GPU')} on ${p.link.name}`, `${duration(p.totalMs)} over ${counted(p.stepMs.length, 'step')} (${p.stepMs.map(duration).join(', ')})`],
    ['comm fraction', `${(100 * p.commFraction).toFixed(1)}% (exposed communication ${p.exposedCommMs.toFixed(3)} ms of ${p.totalMs.toFixed(2)} ms)`],
    ['TFLOP/s per GPU', `${(p.tflopsPerGpu).toPrecision(3)} (${flopRate(p.tflopsPerGpu * 1e12)}; ${predictedCompute(tl)} on this GPU, transfers at ${p.link.gbps} Gbit/s and ${p.link.latencyUs} µs per message)`],
    ['peak bytes per rank', tl.ranks.map((r) => formatBytes(r.peakBytes)).join(', ')],   // 776 bytes read "0.00 MiB" 
    ['work per rank', `${tl.schedule.workPerRank.join(', ')} visible ${plural(Math.max(...tl.schedule.workPerRank), 'score')} (imbalance ${tl.schedule.imbalance.toFixed(3)}: max / mean, under the ${cfg.causal ? 'causal ' : ''}${cfg.window.some((w) => w >= 0) ? `window ${cfg.window.join(',')} ` : ''}${cfg.docs > 1 ? `${cfg.docs}-document ` : ''}mask, ${tl.layout})`],
  ];
}

/** The page's one device, kept between runs (a fresh device per click costs seconds and memory); a lost one is replaced. */
class DevicePool {
  private dev: FlashDevice | null = null;
  /** `precisionField`: the form's precision, which an f16 run on a GPU without f16 is said beside. */
  constructor(private gpu: GPU | undefined, private hooks: Record<string, unknown>, private precisionField: HTMLElement | null) {
    hooks.liveDevicesAcquired = 0;
  }

  /** The page's device, for data of `precision` (f16 where the GPU offers it: a FieldError otherwise). */
  async get(precision: Precision): Promise<FlashDevice> {
    if (this.dev?.lostReason) {
      this.dev.destroy();
      this.dev = null;
    }
    if (!this.dev) {
      [this.dev] = await acquireDevices(this.gpu!, 1);
      this.hooks.liveDevicesAcquired = (this.hooks.liveDevicesAcquired as number) + 1;
    }
    noF16 = !this.dev.hasF16;
    if (precision === 'f16' && noF16) throw new FieldError(NO_F16, this.precisionField);
    return this.dev;
  }
}

/**
 * One live run of the form's configuration `cfg` on the pool's device: random inputs, the ring,
 * the check against float64. `say` reports each stage; `onStep` is the ring's step callback;
 * `signal` (Cancel) stops the ring once the compute already on the GPU is done, and it rejects
 * with the signal's reason; a run no longer `wanted` when the ring ends is not checked (it
 * throws Cancelled). Returns the results' rows, the timeline and the hooks' summary.
 */
async function liveRun(
  cfg: LiveConfig, pool: DevicePool, store: ReturnType<typeof idbTuneStore>, say: (text: string) => void,
  onStep: NonNullable<RingOptions['onStep']>, wanted: () => boolean, signal: AbortSignal,
): Promise<{ rows: [string, string][]; timeline: RingTimeline; live: Record<string, unknown> }> {
  const s: AttentionShape = { B: 1, Hq: cfg.H, Hkv: cfg.H, Nq: cfg.N, Nk: cfg.N, D: cfg.D };
  say('preparing the device…');
  const dev = await pool.get(cfg.precision);
  const kept = keptOrSaid(store);
  const pins = cfg.tuned ? await storedTuning(dev, kept, { D: cfg.D, precision: cfg.precision, causal: liveMask(cfg).causal, robust: true }) : undefined;
  const rdev = pins ? withTuning(dev, { ...dev.tuning, ...pins }) : dev;
  const x = { q: randn(numel(s, 'q'), 1), k: randn(numel(s, 'kv'), 2), v: randn(numel(s, 'kv'), 3), ...(cfg.backward ? { dout: randn(numel(s, 'q'), 4) } : {}) };
  say(`running on ${adapterName(dev.adapter)}: ${counted(cfg.R, 'rank')}, ${cfg.scheme}…`);
  const res = await ringAttention([rdev], s, x, {
    ranks: cfg.R, scheme: cfg.scheme, hierarchicalSizes: cfg.sizes, link: cfg.link,
    ...liveMask(cfg), layout: cfg.layout, precision: cfg.precision, onStep, signal,
  });
  if (!wanted()) throw new Cancelled('cancelled');
  const check = checkRun(s, cfg, x as Record<string, Float32Array>, res);
  const tiles = pins ? `tuned in this browser: ${tilesInWords(pins)}` : !cfg.tuned ? 'defaults'
    : kept.failure ? `defaults (this browser keeps no data for the page, so no tuned tiles: ${kept.failure})`
    : kept.damaged ? `defaults (the tiles stored for this GPU, D, precision and mask are damaged or of another flashring: ${kept.damaged}; Tune replaces them)`
    : 'defaults (Tune has stored no pins for this GPU, D, precision and mask)';
  return {
    rows: [...resultRows(s, cfg, res, adapterName(dev.adapter)), ['tiles', tiles], ['relative error vs float64 (‖x − ref‖ / ‖ref‖)', check.row]],
    timeline: res.timeline,
    live: { errors: check.errors, ok: check.ok, precision: res.precision, tuned: !!pins, ...runSummary(res.timeline) },
  };
}

/**
 * The refusal of the form the status line shows, if it shows one: an edit that makes the form right
 * clears it, one that leaves it wrong says what is wrong now (not a stale refusal until the next Run).
 */
let shownRefusal: string | null = null;
function sayRefusal(status: HTMLElement, e: unknown): string {
  return (status.textContent = shownRefusal = liveWords(e));
}
/** After an edit: the status line's refusal, if it shows one, follows the form. */
function followRefusal(status: HTMLElement, e: unknown | null): void {
  if (shownRefusal === null || status.textContent !== shownRefusal) return;
  if (e === null) status.textContent = shownRefusal = '';
  else sayRefusal(status, e);
}

/** The form read, each wrong field marked beside it and every other mark cleared; throws the FieldError as readLiveForm. */
function checkLiveForm(form: HTMLFormElement): LiveConfig {
  try {
    const cfg = readLiveForm(form);
    showFieldErrors(form, []);
    return cfg;
  } catch (e) {
    showFieldErrors(form, marksOf(e));
    throw e;
  }
}

/** The live panel's state: its elements, the run that speaks for the page (runId), the device pool. */
class LivePanel {
  readonly form = $<HTMLFormElement>('live-form');
  readonly runBtn = $<HTMLButtonElement>('live-run');
  readonly cancelBtn = $<HTMLButtonElement>('live-cancel');
  readonly tuneBtn = $<HTMLButtonElement>('live-tune');
  readonly status = $('live-status');
  readonly progress = $<HTMLProgressElement>('live-progress');
  readonly store = idbTuneStore();
  readonly pool: DevicePool;
  /** The last run or Tune started, and whether it has ended (a cancelled run still finishes the compute it sent the GPU). */
  inFlight: Promise<unknown> = Promise.resolve();
  ended = true;
  runId = 0;
  /** Cancel for the run in flight: the ring submits nothing more and lets go of the device once the GPU is done with what it has. */
  runAbort: AbortController | undefined;
  /** navigator.gpu is there but no adapter behind it (or one that failed): Run and Tune stay off. */
  noAdapter = false;
  /** The Tune search in flight (Cancel aborts it between candidates). */
  tuneAbort: AbortController | undefined;
  /** The button the focus goes to once it is on again: the focus was on one turned off while it was off (Cancel of a Tune). */
  focusNext: HTMLButtonElement | null = null;

  constructor(readonly gpu: GPU | undefined, readonly hooks: Record<string, unknown>) {
    this.pool = new DevicePool(gpu, hooks, this.form.elements.namedItem('precision') as HTMLElement | null);
  }

  /**
   * Turns Run, Tune and Cancel on or off (those `on` names). The focus on one turned off goes on to `next` (a disabled
   * button drops it to the page's body: a keyboard user lost their place), or, while `next` is off, once it is on again.
   */
  setButtons(on: Partial<Record<'run' | 'tune' | 'cancel', boolean>>, next: HTMLButtonElement): void {
    const btn = { run: this.runBtn, tune: this.tuneBtn, cancel: this.cancelBtn }, at = document.activeElement;
    const keys = Object.keys(on) as (keyof typeof btn)[];
    const lost = keys.some((k) => !on[k] && btn[k] === at) || (this.focusNext !== null && (at === document.body || (at as HTMLButtonElement).disabled));
    for (const k of keys) btn[k].disabled = !on[k];
    if (!lost) return;
    this.focusNext = next.disabled ? next : null;
    if (!next.disabled) next.focus();
  }

  /** Starts `work` (a run or Tune) as the one in flight. */
  start(work: Promise<unknown>): void {
    this.ended = false;
    const p: Promise<unknown> = (this.inFlight = work.finally(() => { if (this.inFlight === p) this.ended = true; }));
  }

  /** Waits for the run or Tune before (a cancelled one finishes the step it has on the GPU), saying so while it does. */
  async afterPrevious(): Promise<void> {
    if (!this.ended) {
      this.status.textContent = "waiting for the cancelled run's step to finish… (one rank's step on the GPU; at a large N on a slow GPU that can take a minute)";
      this.hooks.liveWaited = true;
    }
    await this.inFlight.catch(() => {});
  }

  /** Run `id`'s end, said only while it still speaks for the page (a cancelled run ending later says nothing). */
  finish(id: number, text: string, live: Record<string, unknown>): void {
    if (id !== this.runId) return;
    this.status.textContent = text;
    this.hooks.live = { done: true, ...live };
    this.setButtons({ run: !this.noAdapter, tune: !this.noAdapter, cancel: false }, this.runBtn);
  }

  async run(id: number): Promise<void> {
    showResults([]);
    clearTimeline();
    this.progress.value = 0;
    let cfg: LiveConfig;
    try {
      cfg = checkLiveForm(this.form);
    } catch (e) {
      return this.refuse(id, e);
    }
    this.status.textContent = 'starting…';
    await this.afterPrevious(); // the cancelled run before this one lets go of the device
    if (id !== this.runId) return;
    const abort = (this.runAbort = new AbortController());
    try {
      // A run that no longer speaks for the page (cancelled, or another run or Tune started) says nothing more.
      const say = (text: string) => { if (id === this.runId) this.status.textContent = text; };
      // Steps done over all steps: the forward's count is known as it runs, the backward's (p2p: one more, its dK/dV
      // sent home) once it starts, taken as the forward's until then. p2p at R = 2 (2 + 3 steps) reads 0.25, 0.5, then
      // 0.6, 0.8, 1; it read 0.67, 0.83, 1 (the backward's count taken for the forward's too).
      let fwdSteps = 0;
      const seen: number[] = (this.hooks.liveProgress = []);
      const onStep: NonNullable<RingOptions['onStep']> = ({ phase, step, steps }) => {
        if (id !== this.runId) throw new Cancelled('cancelled');
        if (phase !== 'backward') fwdSteps = steps;
        const bwdSteps = !cfg.backward ? 0 : phase === 'backward' ? steps : fwdSteps;
        seen.push((this.progress.value = ((phase === 'backward' ? fwdSteps : 0) + step + 1) / (fwdSteps + bwdSteps)));
      };
      const out = await liveRun(cfg, this.pool, this.store, say, onStep, () => id === this.runId, abort.signal);
      showResults(out.rows);
      drawTimelines(out.timeline);
      this.finish(id, 'done', out.live);
    } catch (e) {
      if (e instanceof Cancelled || abort.signal.aborted) return;
      showResults([]);
      clearTimeline();
      if (e instanceof FieldError) {
        showFieldErrors(this.form, marksOf(e));
        return this.refuse(id, e); // the status's refusal then follows the form (f16 refused, then f32 chosen: it stayed)
      }
      // Not the form's: the GPU's, the tab's memory, or a page bug; its stack goes to the console, as the planner's do.
      console.error(e);
      const msg = `The run failed: ${(e as Error).message}`;
      this.finish(id, msg, { failed: msg });
    }
  }

  /** Run `id` refused by the form (or the device's precision): said in the status line, which then follows the form's edits. */
  refuse(id: number, e: unknown): void {
    const msg = liveWords(e);
    this.finish(id, msg, { failed: msg });
    if (id === this.runId) shownRefusal = msg;
  }

  /** The adapter lacks shader-f16: precision f16 is refused in the form from now on, at once where it is chosen. */
  lacksF16(): void {
    noF16 = true;
    try {
      checkLiveForm(this.form);
    } catch (e) {
      followRefusal(this.status, e);
    }
  }

  /** Cancel during Tune: the search stops after the candidate being timed and stores nothing; Run and Tune come back when it has. */
  cancelTune(): void {
    this.tuneAbort!.abort();
    this.setButtons({ cancel: false }, this.tuneBtn);
    this.status.textContent = 'cancelling the tuning after the candidate being timed…';
  }

  /** No adapter behind navigator.gpu: said, and Run and Tune kept off. */
  none(): void {
    this.noAdapter = true;
    describeSupport(true, true);
    this.runBtn.disabled = this.tuneBtn.disabled = true;
    this.hooks.liveNoAdapter = true;
  }
}

/** The live form's fields in the URL hash, each as `l` + its name ("lN=4096&lscheme=a2a&lcausal=0"). */
const LIVE_VIEW = ['N', 'D', 'H', 'R', 'layout', 'precision', 'causal', 'window', 'docs', 'backward', 'tuned', 'scheme', 'hcp', 'link', 'gbps', 'lat'];
const liveField = (n: string) => $<HTMLFormElement>('live-form').elements.namedItem(n) as HTMLInputElement | HTMLSelectElement;

/** Writes the live form into the view's hash parameters (web/main.ts's saveView, and each edit of the form). */
export function saveLiveView(q: URLSearchParams): void {
  for (const n of LIVE_VIEW) {
    const el = liveField(n);
    q.set(`l${n}`, el instanceof HTMLInputElement && el.type === 'checkbox' ? (el.checked ? '1' : '0') : el.value);
  }
}

/**
 * Reads the live form from the view's hash parameters (a field the hash leaves out takes the page's
 * default); a value the page does not know (a select's option it lacks, a non-number in a number
 * field) is set aside for the default and returned (`lscheme=xyz`) for the view note to name; a bad
 * value of a known kind (R 99) is kept in its field and refused there, and in the status line, in
 * the form's words, as Run would.
 */
export function loadLiveView(q: URLSearchParams): string[] {
  const ignored: string[] = [];
  for (const n of LIVE_VIEW) {
    const el = liveField(n), v = q.get(`l${n}`);
    const unknown = v !== null && (el instanceof HTMLSelectElement ? !Array.from(el.options).some((o) => o.value === v)
      : el.type === 'checkbox' ? v !== '0' && v !== '1'   // a box is ticked by 1, cleared by 0: 'true' is set aside, not read as cleared
        : el.type === 'number' && !Number.isFinite(decimalNumber(v.trim())));   // a number field holds decimals only: '0x10' would come back empty
    if (unknown) ignored.push(`l${n}=${v}`);
    const given = unknown ? null : v;
    if (el instanceof HTMLSelectElement) el.value = given ?? (Array.from(el.options).find((o) => o.defaultSelected) ?? el.options[0])?.value ?? '';
    else if (el.type === 'checkbox') el.checked = given === null ? el.defaultChecked : given === '1';
    else el.value = given ?? el.defaultValue;
  }
  const form = $<HTMLFormElement>('live-form');
  form.dispatchEvent(new Event('change')); // the a2a+p2p sizes and the custom link show where they apply
  try {
    checkLiveForm(form);
    followRefusal($('live-status'), null);
  } catch (e) {
    if (!(e instanceof FieldError || e instanceof FieldErrors)) throw e;
    sayRefusal($('live-status'), e);
  }
  return ignored;
}

/** Each edit of the live form goes into the URL hash, beside the rest of the view. */
function saveLiveEdits(): void {
  const q = new URLSearchParams(location.hash.slice(1));
  saveLiveView(q);
  replaceViewHash(q);
}

/** Wires the live panel (form, Run, Tune, Cancel, timeline drop) and reports through `hooks.live`. */
export function setupLive(hooks: Record<string, unknown>): void {
  const gpu = (navigator as Navigator & { gpu?: GPU }).gpu;
  const p = new LivePanel(gpu, hooks);
  describeSupport(!!gpu);
  p.runBtn.disabled = p.tuneBtn.disabled = !gpu;
  // navigator.gpu can be there with no adapter behind it (or one that fails).
  void gpu?.requestAdapter().then((a) => { if (!a) p.none(); else if (!a.features.has('shader-f16')) p.lacksF16(); }, () => p.none());
  wireSchemeFields(p.form);
  // A wrong field is marked as it is typed (Run says it too), its mark gone once it is right.
  p.form.addEventListener('input', () => {
    saveLiveEdits();
    try {
      checkLiveForm(p.form);
      followRefusal(p.status, null);
    } catch (e) {
      followRefusal(p.status, e); // marked beside its field
    }
  });
  p.form.addEventListener('change', saveLiveEdits);
  wireStepTips(hooks);
  p.runBtn.addEventListener('click', () => {
    const id = ++p.runId;
    // Tune is off while a run goes (pressed, it cancelled the run unsaid): Cancel first, then Tune.
    p.setButtons({ run: false, tune: false, cancel: true }, p.cancelBtn);
    hooks.live = { done: false };
    p.start(p.run(id));
  });
  p.tuneBtn.addEventListener('click', () => {
    ++p.runId; // a cancelled run still ending its step no longer speaks for the page (Tune is off while one runs)
    const abort = (p.tuneAbort = new AbortController());
    p.setButtons({ run: false, tune: false, cancel: true }, p.cancelBtn);
    hooks.tune = { done: false };
    hooks.tuneLines = [];
    p.start(p.afterPrevious().then(() => tune(p.form, p.pool, p.store, p.status, hooks, abort.signal)).finally(() => {
      p.tuneAbort = undefined;
      p.setButtons({ run: !p.noAdapter, tune: !p.noAdapter, cancel: false }, p.tuneBtn);
    }));
  });
  p.cancelBtn.addEventListener('click', (e) => {
    // How long the click waited for the page (a busy main thread delays it): the user's wait for Cancel.
    hooks.cancelWaitMs = performance.now() - e.timeStamp;
    if (p.tuneAbort) return p.cancelTune();
    p.runAbort?.abort(new Cancelled('cancelled'));
    const id = ++p.runId; // the run in flight no longer speaks for the page
    p.progress.value = 0;
    showResults([]);
    clearTimeline();
    p.finish(id, 'cancelled', { cancelled: true });
  });
  wireFileDrop($('timeline-drop'), $<HTMLInputElement>('timeline-file'), (f) => void showTimelineFile(f, p.status, hooks));
  // The timeline drawn (a run's or a dropped file's) as the JSON it is: flashring attention --timeline's kind, which this panel reads back.
  $('timeline-save').addEventListener('click', () => {
    if (shown) download(`flashring-timeline-R${shown.R}${shown.scheme ? `-${shown.scheme}` : ''}.json`, new Blob([JSON.stringify(shown, null, 1)], { type: 'application/json' }));
  });
}

/**
 * Tune: autotune (src/bench/tune.ts) at the form's N, D, heads, precision and mask on this tab's
 * device, always searched afresh, stored in IndexedDB; reports through `hooks.tune`.
 */
async function tune(
  form: HTMLFormElement, pool: DevicePool, store: ReturnType<typeof idbTuneStore>, status: HTMLElement, hooks: Record<string, unknown>, signal: AbortSignal,
): Promise<void> {
  showResults([]);
  clearTimeline();
  status.textContent = 'tuning: preparing the device… (a search of the tile candidates; Cancel stops it and stores nothing)';
  try {
    const cfg = checkLiveForm(form);
    const dev = await pool.get(cfg.precision);
    const kept = keptOrSaid(store);
    const e = await autotune(dev, { robust: true, D: cfg.D, precision: cfg.precision, causal: liveMask(cfg).causal, N: cfg.N, heads: cfg.H, reps: 3 }, kept, {
      fresh: true, signal, progress: (line, trial) => {
        if (signal.aborted) return;
        status.textContent = trial ? trialWords(trial) : line.trim().replace(/\bpins\b/g, 'tiles');
        (hooks.tuneLines as string[] | undefined)?.push(status.textContent);
      },
    });
    showResults(tuneRows(e, adapterName(dev.adapter)));
    status.textContent = kept.failure ? `searched, but not kept: this browser keeps no data for the page (${kept.failure}), so Run cannot use the result`
      : Object.keys(e.tuning).length ? 'tuned: Run uses these tiles while "tuned tiles" is ticked' : 'the defaults were kept (no candidate was 2% faster and exact)';
    hooks.tune = { done: true, key: e.key, tuning: e.tuning, checkErr: e.checkErr, trials: e.trials.length, ...(kept.failure ? { notKept: kept.failure } : {}) };
  } catch (err) {
    if (signal.aborted) {
      status.textContent = 'tuning cancelled: nothing stored (Run keeps the tiles stored before, if any)';
      hooks.tune = { done: true, cancelled: true };
      return;
    }
    const refused = err instanceof FieldError || err instanceof FieldErrors;
    // The library's messages start with their command ('tune: D=7, …'): said once here, as the CLI says it once.
    const msg = refused ? sayRefusal(status, err) : `Tuning failed: ${(err as Error).message.replace(/^tune: /, '')}`;
    if (refused) showFieldErrors(form, marksOf(err));
    status.textContent = msg;
    hooks.tune = { done: true, failed: msg };
  }
}

function tuneRows(e: TuneEntry, adapter: string): [string, string][] {
  const ms = (x: [number, number]) => `forward ${x[0].toFixed(3)} ms, backward ${x[1].toFixed(3)} ms`;
  const timed = e.trials.filter((t) => t.ms !== null).length;
  return [
    ['adapter, path', `${adapter}, ${e.path === 'subgroup-matrix' ? 'tensor cores (subgroup matrices)' : 'portable kernels'}`],
    ['defaults', ms(e.defaultMs)],
    ['tuned', `${ms(e.tunedMs)} (${((e.defaultMs[0] + e.defaultMs[1]) / (e.tunedMs[0] + e.tunedMs[1])).toFixed(3)}× at N=${e.N}, ${counted(e.heads, 'head')})`],
    ['tiles', tilesInWords(e.tuning)],
    ['candidates', `${timed} timed of ${e.trials.length} (the others did not fit this GPU, ran on another path, gave no time, ran once over 3× the fastest, or were the same kernel as another)`],
    ['relative error vs float64 (‖x − ref‖ / ‖ref‖)', `${e.checkErr.toExponential(2)} (largest of O, LSE, dQ, dK, dV at a small shape)`],
  ];
}

/** What the live panel says it can do: run here, or why not and how to enable WebGPU. */
function describeSupport(hasGpu: boolean, noAdapter = false): void {
  $('live-support').textContent = noAdapter
    ? 'This browser has WebGPU but found no GPU adapter for it (a blocklisted GPU or driver, or WebGPU turned off), so the live run cannot start ' +
      '(the planner and replay work without it). Check chrome://gpu, update the GPU driver, or on Linux start Chrome with --enable-unsafe-webgpu.'
    : hasGpu
    ? 'Runs the FlashAttention kernels and the CP ring in this tab, checked against float64 attention on the CPU when the size allows. ' +
      'The R ranks of the chosen scheme share this GPU (one-device mode: each rank\'s compute is timed alone); the second timeline is what R GPUs on the chosen link would show ' +
      '(these step times plus modelled transfers: bytes / bandwidth + latency per message).'
    : 'WebGPU is not available in this browser, so the live run cannot start (the planner and replay work without it). ' +
      'Use Chrome or Edge 113+ (on Linux start it with --enable-unsafe-webgpu), or Safari 26+.';
}

/** A finished run's timeline as the page's test hooks report it (mode, scheme, steps, bytes, prediction). */
function runSummary(tl: RingTimeline): Record<string, unknown> {
  const p = tl.predicted!;
  return {
    mode: tl.mode, scheme: tl.scheme, hierarchy: tl.hierarchy, R: tl.R, steps: stepLabels(tl), peakBytes: tl.ranks.map((r) => r.peakBytes),
    overlap: tl.mode === 'one-device' ? { source: 'predicted', efficiency: p.overlapEfficiency, transferMs: p.transferMs, exposedMs: p.exposedCommMs } : { source: 'measured', efficiency: tl.summary.overlapEfficiency },
    predicted: { link: p.link.name, stepMs: p.stepMs, totalMs: p.totalMs, commFraction: p.commFraction, tflopsPerGpu: p.tflopsPerGpu },
  };
}

async function showTimelineFile(f: File, status: HTMLElement, hooks: Record<string, unknown>): Promise<void> {
  try {
    let tl: unknown;
    try {
      tl = JSON.parse(await f.text());
    } catch {
      throw new Error('it is not JSON');
    }
    checkTimeline(tl);
    drawTimelines(tl);
    const p = tl.predicted;
    const v2 = tl.scheme ? `, ${tl.scheme}${tl.mode ? ` ${tl.mode}` : ''}` : '';
    const pred = p ? `; predicted on ${p.link.name}: ${p.totalMs.toFixed(1)} ms, comm ${(100 * p.commFraction).toFixed(1)}%, ${p.tflopsPerGpu.toPrecision(3)} TFLOP/s per GPU` : '; no predicted timeline in this file';
    status.textContent = `showing ${f.name}: R=${tl.R} ${tl.layout ?? ''}${v2}, ${tl.adapters?.[0] ?? ''}${pred}`;
    hooks.timelineFile = { name: f.name, R: tl.R, scheme: tl.scheme ?? null, mode: tl.mode ?? null, predictedSteps: p?.stepMs.length ?? 0, commFraction: p?.commFraction ?? null };
  } catch (e) {
    status.textContent = `${f.name} could not be read — ${(e as Error).message}`;
  }
}

/** The a2a+p2p sizes and the custom link's bandwidth and latency show only when they apply. */
function wireSchemeFields(form: HTMLFormElement): void {
  const el = (n: string) => form.elements.namedItem(n) as HTMLSelectElement;
  // The schemes as the registry lists them (src/cp/schemes/registry.ts), each with its one line.
  for (const d of schemeDefs()) el('scheme').add(Object.assign(new Option(d.name, d.name), { title: d.about }));
  const sync = () => {
    const scheme = el('scheme').value; // none where the URL named no scheme of the list (refused in the form's words)
    (form.querySelector('.hcp') as HTMLElement).hidden = !(schemeNames().includes(scheme as Scheme) && schemeDef(scheme).defaultSizes);
    (form.querySelector('.custom-link') as HTMLElement).hidden = el('link').value !== 'custom';
  };
  form.addEventListener('change', sync);
  sync();
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

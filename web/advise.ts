/**
 * The page's advisor panel and the planner's step times. The search is src/memory/advise.ts (what
 * `flashring advise` runs): for the planner's model (its preset and fields; the parallel settings
 * advise does not search: micro batch, stack, FlashAttention, fp32 residual, EP) at the panel's
 * sequence length, GPU count, HBM, margin, global batch and link, the layouts that fit, fastest
 * first, with the CLI's "why". This file reads the panel's fields (checked in the page's words,
 * each wrong field marked beside it: web/fields.ts), draws the table, keeps the fields in the URL
 * hash (main.ts's view) and exposes the results as hooks.advisor for the page tests.
 *
 * The search takes a few hundred ms for 8 GPUs and seconds for thousands, so it does not run on
 * every keystroke: typing (in the panel or the planner) searches DEBOUNCE_MS after the last
 * change, Enter or leaving the field at once, and the search runs in a worker (adviseWorker.ts)
 * so that the page stays responsive. Every change takes a sequence number; only the newest input's
 * results are drawn, and a worker still busy with an older input is replaced.
 * hooks.advisorState counts the runs (inputs read) and searches for the tests.
 *
 * When nothing fits, the summary names the smallest layout and then what would fit, as `flashring
 * advise` prints it (src/memory/adviseForward.ts: the same search again with more HBM, more GPUs, a
 * shorter sequence; up to a few seconds more): searched only then, after the summary is drawn, in
 * the worker (its second answer) or, without one, here one search a task; "searching what would
 * fit…" meanwhile, and a newer input drops it.
 *
 * When the model refuses the request itself, whatever the layout (src/memory/advise.ts requestRefusal: every layout
 * refused for one reason, as the expert bias with the softmax score function), the panel says that refusal once,
 * beside its control (the panel's sequence length, else the planner's, which the planner marks as it refuses it too),
 * not as every layout's reason, and searches nothing for what would fit. The worker's errors cross as their fields
 * (src/errors.ts errorFields, rebuildError), so that such a refusal stays an InputError with its flags.
 *
 * timeLines() gives a planner point its predicted step time and what its recomputation costs in
 * full (beside the breakdown), timeTip() the same in a tooltip's few words.
 */
import type { ModelConfig, ParallelConfig } from '../src/memory/model.js';
import { EP_GROUPS, GIB } from '../src/memory/model.js';
import { candidates, fitsText, layoutLabel, layoutTime, leftOutText, nothingFits, reasons, recomputeCost, requestRefusal, setupText, skippedLines, tokensPerSecondText, type AdviseRequest, type AdviseResult, type AdviseWords } from '../src/memory/advise.js';
import { InputError, rebuildError } from '../src/errors.js';
import { H200, timeCheckedLines } from '../src/memory/time/devices.js';
import { GPUS_PER_NODE } from '../src/memory/time/iteration.js';
import { untrainable } from '../src/memory/untrainable.js';
import { LINKS, resolveLink, type Link } from '../src/cp/plan/linkModel.js';
import { FieldError, FieldErrors, bugWords, customLink, fieldNumber, flagField, isInputError, marksOf, showFieldErrors, type FieldMark } from './fields.js';
import { duration, sig3 } from './format.js';
import { counted } from '../src/plural.js';
import { MAX_GPUS, notDividedByEp, notWholeMicroBatches, notWholeNodes, wouldFitLines, wouldFitSteps, type Remedy, type WouldFit } from '../src/memory/adviseForward.js';
import { DEFAULT_MARGIN } from '../src/memory/headroom.js';
import type { AdviseAnswer, AdviseQuery } from './adviseWorker.js';
import type { Cell } from './table.js';
import { linkValue } from './view.js';


/** What the panel borrows from main.ts: the planner, the page's words, its table and field helpers. */
export interface AdvisorDeps {
  hooks: Record<string, unknown>;
  /** The planner's model and parallel settings (throws, in the page's words, when its fields are not valid). */
  planner: () => { model: ModelConfig; par: ParallelConfig };
  pageWords: (e: unknown) => string;
  /** The model's refusal as a FieldError naming the planner's control of its first flag that the planner has (main.ts onModelField); else `e` as it is. */
  onModelField: (e: unknown) => unknown;
  fillTable: (table: HTMLTableElement, caption: string, head: Cell[], rows: Cell[][]) => void;
  /** Field readers: each throws a FieldError naming its input. */
  positiveWhole: (input: HTMLInputElement, label: string, max: number) => number;
  readHbm: (input: HTMLInputElement) => number;
  /** Writes the whole view (the planner's and every panel's fields) into the URL hash. */
  saveView: () => void;
}

export interface Advisor {
  /** The panel's fields from the view; returns the values it did not know and set aside ('alink=xyz'). */
  load(q: URLSearchParams): string[];
  save(q: URLSearchParams): void;
  /** Reads the planner and the panel and searches now (a load, a preset, a changed URL). */
  render(): void;
  /** The same once the typing pauses (DEBOUNCE_MS after the last call). */
  schedule(): void;
  /** A scheduled search now (Enter, or the field left); nothing when none is waiting. */
  flush(): void;
  /** A planner point's predicted step time, TFLOP/s per GPU and comm fraction, and with recompute what it saves and costs. */
  timeLines(model: ModelConfig, par: ParallelConfig): string[];
  /** The same in a tooltip's few words. */
  timeTip(model: ModelConfig, par: ParallelConfig): string[];
}

/**
 * advise's shared lines in the page's words: its fields (the advisor's global batch, GPUs), where the CLI names its flags, and
 * times as the table gives them (duration: '82.8 s', where the CLI says '82800 ms': the what-would-fit lines and the why column); the panel adds the
 * planner's words for the memory model's reasons (main.ts's pageWords).
 */
export const PAGE_WORDS: AdviseWords = {
  hints: { 'global-batch': "the advisor's global batch sets it" },
  allSkipped: null,
  advisor: 'the advisor',
  gpusAtMost: (gpus) => `${gpus.toLocaleString('en-US')} GPUs is as many as the advisor takes`,
  time: duration,
};

const DEFAULTS: Record<string, string> = { aseq: '131072', agpus: '8', ahbm: '80', amargin: String(DEFAULT_MARGIN), agbs: '', atop: '5', alink: 'nvlink-h200', agbps: '800', alat: '5' };
const MAX_SEQ = 2 ** 26;
/** The panel's own controls for the memory model's flags (InputError.flags): the sequence length it searches at. */
const OWN_FLAGS: Record<string, string> = { '--seq-length': 'aseq' };
/** How long after the last keystroke the search runs. */
const DEBOUNCE_MS = 300;

/** `batchPerGpu`: the global batch field is empty (one sequence a GPU), so what-would-fit's search on more GPUs takes more, as advise's. */
interface PanelRequest extends AdviseRequest { top: number; batchPerGpu: boolean }

/**
 * What the tests read: inputs read (runs), searches started, the newest input's number, the one drawn, whether one is waiting
 * (the table stale), and whether what would fit is being searched for the input drawn (nothing fits).
 */
interface AdvisorState { runs: number; searches: number; seq: number; shown: number; pending: boolean; wouldFitPending: boolean }

const gib = (bytes: number) => (bytes / GIB).toFixed(1);
/**
 * What recompute does to the peak, `fmt` writing GiB: 'saves 5.6 GiB', or, where the same layout without it peaks
 * lower (selective recompute of the attention core with FlashAttention keeps Q and K twice), 'saves no memory (0.3 GiB more)'.
 */
const savesText = (bytes: number, fmt: (gib: number) => string) => (bytes >= 0 ? `saves ${fmt(bytes / GIB)} GiB` : `saves no memory (${fmt(-bytes / GIB)} GiB more)`);
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const el = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

/** The table's columns: short names, the full one on hover. */
const HEAD: Cell[] = ['#', 'TP', 'CP', { text: 'scheme', title: 'CP comm type' }, 'PP', 'DP', 'recompute', { text: 'dist. opt.', title: 'distributed optimizer' },
  { text: 'step', title: 'predicted step time', cls: 'num' }, { text: 'TFLOP/s per GPU', title: 'model TFLOP/s per GPU', cls: 'num' }, { text: 'tokens/s', cls: 'num' },
  { text: 'comm %', title: 'communication not hidden, % of the step', cls: 'num' }, { text: 'memory GiB', title: 'predicted peak memory per GPU', cls: 'num' }, 'why'];

export function setupAdvisor(d: AdvisorDeps): Advisor {
  return new AdvisorPanel(d);
}

/** The search's worker, or null where this browser cannot start one (the search then runs on the page). */
function startWorker(): Worker | null {
  try {
    return new Worker(new URL('./adviseWorker.ts', import.meta.url), { type: 'module' });
  } catch {
    return null;
  }
}

class AdvisorPanel implements Advisor {
  private readonly form = el<HTMLFormElement>('advisor-form');
  private readonly linkSelect = this.form.elements.namedItem('alink') as HTMLSelectElement;
  /** The last search's result and its request (without `top`, which only cuts the table); when nothing fits, what would, once searched. */
  private cache: { key: string; res: AdviseResult; would?: WouldFit } | null = null;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private worker: Worker | null = null;
  private noWorker = false;
  /** The input the worker is searching for (null: idle). */
  private busy: number | null = null;
  /** The input whose what-would-fit searches run, in the worker or here (null: none). */
  private wouldSeq: number | null = null;
  private readonly state: AdvisorState = { runs: 0, searches: 0, seq: 0, shown: 0, pending: false, wouldFitPending: false };
  /** advise's shared lines in the page's words, the memory model's reasons in the planner's. */
  private readonly words: AdviseWords;

  constructor(private readonly d: AdvisorDeps) {
    this.words = { ...PAGE_WORDS, modelWords: d.pageWords };
    for (const [k, l] of Object.entries(LINKS)) this.linkSelect.add(new Option(`${k} (${l.gbps} Gbit/s, ${l.latencyUs} µs)`, k));
    this.linkSelect.add(new Option('custom', 'custom'));
    this.form.addEventListener('input', () => {
      this.syncLink();
      d.saveView();
      this.schedule();
    });
    // A select's change comes with its input; a typed field's when it is left.
    this.form.addEventListener('change', () => this.flush());
    this.form.addEventListener('keydown', (e) => {
      if (e.key !== 'Enter') return;
      e.preventDefault();
      this.flush();
    });
    d.hooks.advisorState = this.state;
  }

  private input(n: string): HTMLInputElement {
    return this.form.elements.namedItem(n) as HTMLInputElement;
  }

  private syncLink(): void {
    (this.form.querySelector('.custom-link') as HTMLElement).hidden = this.linkSelect.value !== 'custom';
  }

  /** The panel's fields from the view; returns the values it did not know and set aside ('alink=xyz'). */
  load(q: URLSearchParams): string[] {
    // A value a field cannot hold (agpus=abc, which a number field empties; alink=xyz) is set aside: the default shown.
    const ignored: string[] = [];
    for (const k of Object.keys(DEFAULTS)) linkValue(this.input(k), q, k, DEFAULTS[k], ignored);
    this.syncLink();
    return ignored;
  }

  save(q: URLSearchParams): void {
    for (const k of Object.keys(DEFAULTS)) q.set(k, this.input(k).value);
  }

  schedule(): void {
    this.state.seq++;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.run(), DEBOUNCE_MS);
    this.showPending();
  }

  flush(): void {
    if (this.timer !== undefined) this.run();
  }

  render(): void {
    this.state.seq++;
    this.run();
  }

  /** Whether an input waits for its results: the table dims and the status says so while a search runs. */
  private showPending(): void {
    const layouts = this.busy !== null && this.busy !== this.wouldSeq;
    this.state.pending = this.timer !== undefined || layouts;
    this.state.wouldFitPending = this.wouldSeq !== null;
    el('advisor-table').parentElement!.classList.toggle('stale', this.state.pending);
    el('advisor').setAttribute('aria-busy', String(this.state.pending || this.state.wouldFitPending));
    el('advisor-status').textContent = layouts ? 'searching…' : this.wouldSeq !== null ? 'searching what would fit…' : '';
  }

  private readLink(): Link {
    return this.linkSelect.value === 'custom' ? customLink(this.input('agbps'), this.input('alat')) : resolveLink(this.linkSelect.value);
  }

  /** The panel's request; every field checked on its own, so that each wrong one is marked (a FieldErrors, the first's message first). */
  private readRequest(model: ModelConfig, par: ParallelConfig): PanelRequest {
    const d = this.d, input = (n: string) => this.input(n), errors: FieldError[] = [];
    const take = <T>(f: () => T): T | undefined => {
      try {
        return f();
      } catch (e) {
        errors.push(e instanceof FieldError ? e : new FieldError(e instanceof Error ? e.message : String(e)));
        return undefined;
      }
    };
    const seq = take(() => d.positiveWhole(input('aseq'), 'Sequence length', MAX_SEQ)), gpus = take(() => d.positiveWhole(input('agpus'), 'GPUs', MAX_GPUS));
    // The reasons advise refuses a GPU count for (gpusRefusal's parts), each marked on its own field, so that both fields' are said at once:
    // beyond one node of 8 (the page's nodes, as the CLI's default), whole nodes, and a multiple of the planner's EP; below, a global
    // batch of whole micro batches.
    const nodes = gpus === undefined ? null : notWholeNodes(gpus, GPUS_PER_NODE), ep = gpus === undefined ? null : notDividedByEp(gpus, par.expertParallel ?? 1);
    if (nodes) errors.push(new FieldError(`GPUs (${gpus}) must be whole nodes of ${nodes.perNode} beyond one node, as Megatron-LM runs them: ${nodes.below} or ${nodes.above}.`, input('agpus')));
    else if (ep) errors.push(new FieldError(`GPUs (${gpus}) must be a multiple of the planner's EP (${ep.ep}): ${EP_GROUPS}, which divide the GPUs.`, input('agpus')));
    const hbmGib = take(() => d.readHbm(input('ahbm')));
    const margin = take(() => fieldNumber(input('amargin'), 'Margin', { min: 0, max: 0.9, what: 'a fraction of the HBM kept free, from 0 to 0.9' }));
    const typed = input('agbs').value.trim() !== '' || input('agbs').validity.badInput;
    const gbs = typed ? take(() => d.positiveWhole(input('agbs'), 'Global batch', 1e7)) : gpus;
    const micro = gbs === undefined ? null : notWholeMicroBatches(gbs, par.microBatchSize);
    // Empty, the global batch is one sequence a GPU: said as such and marked on the global batch, the field to set (the GPUs can rarely help).
    if (micro) errors.push(new FieldError(`Global batch (${typed ? micro.gbs : `empty: one sequence a GPU, ${micro.gbs}`}) must be a multiple of the planner's micro batch (${micro.micro}): ` +
      `set ${typed ? 'one that is' : 'one'}${gpus === undefined ? '' : `, e.g. ${gpus * micro.micro} (GPUs × micro batch)`}.`, input('agbs')));
    const top = take(() => d.positiveWhole(input('atop'), 'Show top', 1000));
    const link = take(() => this.readLink());
    if (errors.length) throw new FieldErrors(errors);
    return { model, base: { ...par, seqLength: seq! }, gpus: gpus!, hbmGib: hbmGib!, margin: margin!, gbs: gbs!, link: link!, top: top!, batchPerGpu: !typed };
  }

  /** Nothing drawn, `text` said (`marks`: beside the panel's controls; `field`: the control, the panel's or the planner's, a refusal is about). */
  private clear(text: string, marks: FieldMark[] = [], field?: string): void {
    this.state.shown = this.state.seq;
    showFieldErrors(this.form, marks);
    el('advisor-error').textContent = text;
    el('advisor-summary').textContent = '';
    el('advisor-would').textContent = '';
    el('advisor-checked').textContent = '';
    this.d.fillTable(el<HTMLTableElement>('advisor-table'), '', [], []);
    this.d.hooks.advisor = { error: text, evaluated: 0, fit: 0, rows: [], seq: this.state.seq, ...(field ? { field } : {}) };
  }

  /**
   * The search's error for the newest input, said once: the model's refusal (an InputError: the request's own, requestRefusal)
   * beside the control of its flags, the panel's own first (OWN_FLAGS), else named as the planner's, whose control the planner
   * marks (main.ts onModelField: the planner refuses the same model); anything else as a bug.
   */
  private refused(e: unknown): void {
    if (!(e instanceof InputError)) return this.clear(bugWords(e));
    const words = capital(this.d.pageWords(e)), own = flagField(e.flags, OWN_FLAGS);
    if (own) return this.clear(words, [{ field: this.input(own), message: words }], own);
    const planner = this.d.onModelField(e), field = planner instanceof FieldError ? (planner.field as HTMLInputElement | null)?.name : undefined;
    this.clear(field ? `Fix the planner's fields above first: ${words}` : words, [], field);
  }

  /** Reads the planner and the panel for the newest input and searches (again only when they changed); bad input clears the panel and says why. */
  private run(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.state.runs++;
    // A search still running is for an older input: its results would never be drawn.
    if (this.busy !== null) {
      this.worker?.terminate();
      this.worker = null;
      this.busy = null;
    }
    this.wouldSeq = null;   // (one running here sees the newer input and stops)
    const seq = this.state.seq;
    let planner: ReturnType<AdvisorDeps['planner']>, req: PanelRequest;
    try {
      planner = this.d.planner();
    } catch (e) {
      this.clear(isInputError(e) ? "Fix the planner's fields above first: the advisor searches layouts of their model." : bugWords(e));
      return this.showPending();
    }
    try {
      req = this.readRequest(planner.model, planner.par);
    } catch (e) {
      const words = (x: unknown) => capital(this.d.pageWords(x));
      this.clear(isInputError(e) ? words(e) : bugWords(e), marksOf(e, words));
      return this.showPending();
    }
    showFieldErrors(this.form, []);
    const { top: _, ...search } = req, key = JSON.stringify(search), c = this.cache;
    // (a result that fits nothing is whole only with what would fit, which a newer input may have cut short)
    if (c?.key === key && (c.res.fitting.length || c.would)) this.draw(seq, req, c.res, c.would);
    else this.search(seq, req, key);
    this.showPending();
  }

  /** Searches for input `seq` in the worker (idle: run() has replaced one busy with an older input) or, without one, here. */
  private search(seq: number, req: PanelRequest, key: string): void {
    this.state.searches++;
    this.worker ??= this.noWorker ? null : startWorker();
    const w = this.worker;
    if (!w) return this.searchHere(seq, req, key);
    this.busy = seq;
    w.onmessage = ({ data }: MessageEvent<AdviseAnswer>) => {
      if (data.seq !== this.busy) return;
      this.answer(data, req, key);
      this.showPending();
    };
    // A worker that cannot start (its script refused): this search and the later ones run here.
    w.onerror = (e) => {
      e.preventDefault();
      w.terminate();
      this.noWorker = true;
      this.worker = null;
      if (this.busy !== seq) return;
      this.busy = null;
      this.wouldSeq = null;
      // Only the newest input is searched here (an older one's result would not be drawn: a newer input's run searches it).
      if (seq === this.state.seq) this.searchHere(seq, req, key);
      this.showPending();
    };
    const { top: _, batchPerGpu, ...query } = req;
    w.postMessage({ seq, req: query, batchPerGpu } satisfies AdviseQuery);
  }

  /** One of the worker's answers for the input it searches: the layouts (then, when none fits, what would fit follows), or what would fit, or an error. */
  private answer(data: AdviseAnswer, req: PanelRequest, key: string): void {
    if ('res' in data) {
      this.cache = { key, res: data.res };
      if (data.res.fitting.length) this.busy = null;
      else this.wouldSeq = data.seq;
      return this.draw(data.seq, req, data.res);
    }
    const would = this.wouldSeq === data.seq;
    this.busy = this.wouldSeq = null;
    if ('wouldFit' in data) {
      if (this.cache?.key === key) this.cache.would = data.wouldFit;
      return this.drawWouldFit(data.seq, req, this.cache!.res, data.wouldFit);
    }
    if (data.seq !== this.state.seq) return;
    const e = rebuildError(data.error);
    if (would) el('advisor-would').textContent = `What would fit could not be searched: ${isInputError(e) ? this.d.pageWords(e) : bugWords(e)}`;
    else this.refused(e);
  }

  private searchHere(seq: number, req: PanelRequest, key: string): void {
    let res: AdviseResult;
    try {
      res = candidates(req);
      const refused = requestRefusal(res);
      if (refused) throw refused;
    } catch (e) {
      return this.refused(e);
    }
    this.cache = { key, res };
    this.draw(seq, req, res);
    if (!res.fitting.length) void this.wouldFitHere(seq, req, key, res);
  }

  /**
   * What would fit, searched here (no worker): wouldFit's three searches step by step, one whole search a task (Steps),
   * yielding to the page's events between them; a newer input stops it (its own run searches).
   */
  private async wouldFitHere(seq: number, req: PanelRequest, key: string, res: AdviseResult): Promise<void> {
    this.wouldSeq = seq;
    this.showPending();
    const steps = wouldFitSteps(req, res, req.batchPerGpu);
    let x: IteratorResult<void, WouldFit>;
    do {
      await new Promise((go) => setTimeout(go, 0));
      if (seq !== this.state.seq) return;
      try {
        x = steps.next();
      } catch (e) {
        this.wouldSeq = null;
        el('advisor-would').textContent = `What would fit could not be searched: ${bugWords(e)}`;
        return this.showPending();
      }
    } while (!x.done);
    const w = x.value;
    this.wouldSeq = null;
    if (this.cache?.key === key) this.cache.would = w;
    this.drawWouldFit(seq, req, res, w);
    this.showPending();
  }

  /** Draws input `seq`'s results, unless a newer input has come since (its own search draws it); nothing fitting, what would (`would`) or that it is being searched. */
  private draw(seq: number, r: PanelRequest, res: AdviseResult, would?: WouldFit): void {
    if (seq !== this.state.seq) return;
    this.state.shown = seq;
    el('advisor-error').textContent = '';
    const top = res.fitting.slice(0, r.top), m = r.model;
    const summary = `${res.all} layouts evaluated, ${res.fitting.length} fit${res.fitting.length ? '' : `: ${nothingFits(res, this.words).replace(/^nothing fits: /, '')}`}.` +
      res.untrainable.map((u) => ` ${leftOutText(u, this.d.pageWords)}.`).join('') +
      skippedLines(res.skipped, this.words).map((x) => ` ${x}.`).join('');
    el('advisor-summary').textContent = summary;
    el('advisor-checked').textContent = timeCheckedLines(H200).map((x) => x.trim()).join('\n');
    const why = top.map((c) => reasons(r, c, undefined, PAGE_WORDS.time));
    this.d.fillTable(el<HTMLTableElement>('advisor-table'),
      `${counted(m.numLayers, 'layer')}, h=${m.hiddenSize}, ${counted(m.numAttentionHeads, 'head')} at ${r.base.seqLength.toLocaleString('en-US')} tokens on ${counted(r.gpus, 'GPU')} × ${r.hbmGib} GiB (${fitsText(r.margin)}), ` +
      `${setupText(r)}. Fastest first, the top ${top.length} of ${res.fitting.length}:`,
      HEAD,
      top.map((c, i) => [String(i + 1), c.tp > 1 && !c.sp ? `${c.tp} (no SP)` : String(c.tp), String(c.cp), c.cpCommType ?? '—', c.vp > 1 ? `${c.pp} (VP ${c.vp})` : String(c.pp), String(c.dp),
        { text: c.recompute, cls: 'rc' }, c.distributedOptimizer ? 'yes' : 'no',
        ...[duration(c.iterMs), c.tflopsPerGpu.toFixed(0), c.tokensPerSecond.toFixed(0), (100 * c.commFraction).toFixed(1), gib(c.totalBytes)].map((text) => ({ text, cls: 'num' })),
        { text: why[i].join('\n'), cls: 'why', title: layoutLabel(c) }]));
    this.d.hooks.advisor = {
      evaluated: res.all, fit: res.fitting.length, summary, link: r.link.name, gbs: r.gbs, seq, gpus: r.gpus, seqLength: r.base.seqLength,
      rows: top.map(({ time: _, ...c }, i) => ({ ...c, why: why[i] })), wouldFit: null,
    };
    if (would) this.drawWouldFit(seq, r, res, would);
    else el('advisor-would').textContent = res.fitting.length ? '' : 'What would fit: searching (the same search again with more HBM, with more GPUs, with a shorter sequence)…';
  }

  /** What would fit input `seq`, nothing fitting it (`flashring advise`'s lines, in the page's words: PAGE_WORDS), unless a newer input has come since. */
  private drawWouldFit(seq: number, r: PanelRequest, res: AdviseResult, w: WouldFit): void {
    if (seq !== this.state.seq) return;
    const lines = wouldFitLines(r, res, w, r.batchPerGpu, this.words).map((x) => x.trim());
    el('advisor-would').textContent = capital(lines.join('\n'));
    const brief = (x: Remedy | null) => x && { tried: x.tried, at: x.at, layouts: x.layouts, globalBatch: x.globalBatch, fastest: x.fastest && layoutLabel(x.fastest) };
    (this.d.hooks.advisor as Record<string, unknown>).wouldFit = { lines, hbmGib: brief(w.hbmGib), gpus: { ...brief(w.gpus), between: w.gpus.between }, seqLength: brief(w.seqLength) };
  }

  /** One layout's step time, what its recompute saves and costs, and why Megatron-LM cannot train it (null: it can): timeLines' and timeTip's facts. */
  private timeFacts(model: ModelConfig, par: ParallelConfig) {
    return { t: layoutTime(model, par), rc: recomputeCost(model, par), why: untrainable(model, par) };
  }

  timeLines(model: ModelConfig, par: ParallelConfig): string[] {
    try {
      const { t, rc, why } = this.timeFacts(model, par), it = t.time;
      const lines = [`predicted step ${duration(it.iterMs)}, ${it.tflopsPerGpu.toFixed(0)} TFLOP/s per GPU, ${tokensPerSecondText(it.tokensPerSecond)}, comm ${(100 * it.commFraction).toFixed(1)}%`,
        `  for a global batch of ${t.globalBatch} on ${counted(t.gpus, 'GPU')} (TP ${par.tensorParallel} × CP ${par.contextParallel} × PP ${par.pipelineParallel} × DP ${par.dataParallel}), ${H200.name} profile, nvlink-h200${t.gpus > GPUS_PER_NODE ? ` within nodes of ${GPUS_PER_NODE} GPUs, ib-ndr between them` : ''}`];
      if (why) lines.push(`not trainable: ${this.d.pageWords(why)}`);
      if (rc) lines.push(`recompute ${savesText(rc.savedBytes, (x) => x.toFixed(1))} and costs ${duration(rc.costMs)} per step (+${(100 * rc.costFraction).toFixed(1)}% against no recompute)`);
      return lines;
    } catch (e) {
      return [`no predicted step time: ${isInputError(e) ? this.d.pageWords(e) : bugWords(e)}`];
    }
  }

  timeTip(model: ModelConfig, par: ParallelConfig): string[] {
    try {
      const { t, rc, why } = this.timeFacts(model, par), it = t.time;
      const lines = [`step ${duration(it.iterMs)} · ${sig3(it.tflopsPerGpu)} TFLOP/s per GPU · comm ${(100 * it.commFraction).toFixed(1)}%`];
      if (why) lines.push('not trainable in Megatron-LM (why: under the chart)');
      if (rc) lines.push(`recompute ${savesText(rc.savedBytes, sig3)} for +${duration(rc.costMs)} a step (+${(100 * rc.costFraction).toFixed(1)}%)`);
      return lines;
    } catch (e) {
      return [isInputError(e) ? 'no predicted step time (why: under the chart)' : bugWords(e)];
    }
  }
}

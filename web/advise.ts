/**
 * The page's advisor panel and the planner's step times. The search is src/memory/advise.ts (what
 * `flashring advise` runs): for the planner's model (its preset and fields; the parallel settings
 * advise does not search: micro batch, stack, FlashAttention, fp32 residual, EP) at the panel's
 * sequence length, GPU count, HBM, margin, global batch and link, the layouts that fit, fastest
 * first, with the CLI's "why". This file reads the panel's fields (checked in the page's words),
 * draws the table, keeps the fields in the URL hash (main.ts's view) and exposes the results as
 * hooks.advisor for the page tests. timeLines() gives a planner point its predicted step time and
 * what its recomputation costs, for the tooltip and beside the breakdown.
 */
import type { ModelConfig, ParallelConfig } from '../src/memory/model.js';
import { GIB } from '../src/memory/model.js';
import { candidates, layoutLabel, layoutTime, nothingFits, reasons, recomputeCost, skippedLines, type AdviseRequest, type AdviseResult } from '../src/memory/advise.js';
import { H200, timeCheckedLines } from '../src/memory/time/devices.js';
import { untrainable } from '../src/memory/untrainable.js';
import { LINKS, resolveLink, type Link } from '../src/cp/plan/linkModel.js';

type Cell = string | { text: string; cls?: string; title?: string };

/** What the panel borrows from main.ts: the planner, the page's words, its table and field helpers. */
export interface AdvisorDeps {
  hooks: Record<string, unknown>;
  /** The planner's model and parallel settings (throws, in the page's words, when its fields are not valid). */
  planner: () => { model: ModelConfig; par: ParallelConfig };
  pageWords: (e: unknown) => string;
  fillTable: (table: HTMLTableElement, caption: string, head: string[], rows: Cell[][]) => void;
  positiveWhole: (input: HTMLInputElement, label: string, max: number) => number;
  readHbm: (input: HTMLInputElement) => number;
  /** Writes the whole view (the planner's and every panel's fields) into the URL hash. */
  saveView: () => void;
}

export interface Advisor {
  load(q: URLSearchParams): void;
  save(q: URLSearchParams): void;
  render(): void;
  /** A planner point's predicted step time, TFLOP/s per GPU and comm fraction, and with recompute what it saves and costs. */
  timeLines(model: ModelConfig, par: ParallelConfig): string[];
}

const DEFAULTS: Record<string, string> = { aseq: '131072', agpus: '8', ahbm: '80', amargin: '0.1', agbs: '', atop: '5', alink: 'nvlink-h200', agbps: '800', alat: '5' };
const LINK_CHOICES = [...Object.keys(LINKS), 'custom'];
const MAX_SEQ = 2 ** 26, MAX_GPUS = 65536;

interface PanelRequest extends AdviseRequest { top: number }

const gib = (bytes: number) => (bytes / GIB).toFixed(1);
const capital = (s: string) => s.charAt(0).toUpperCase() + s.slice(1);

const el = <T extends HTMLElement>(id: string) => document.getElementById(id) as T;

export function setupAdvisor(d: AdvisorDeps): Advisor {
  return new AdvisorPanel(d);
}

class AdvisorPanel implements Advisor {
  private readonly form = el<HTMLFormElement>('advisor-form');
  private readonly linkSelect = this.form.elements.namedItem('alink') as HTMLSelectElement;
  private cache: { key: string; res: AdviseResult } | null = null;

  constructor(private readonly d: AdvisorDeps) {
    for (const [k, l] of Object.entries(LINKS)) this.linkSelect.add(new Option(`${k} (${l.gbps} Gbit/s, ${l.latencyUs} µs)`, k));
    this.linkSelect.add(new Option('custom', 'custom'));
    this.form.addEventListener('input', () => {
      this.syncLink();
      d.saveView();
      this.render();
    });
  }

  private input(n: string): HTMLInputElement {
    return this.form.elements.namedItem(n) as HTMLInputElement;
  }

  private syncLink(): void {
    (this.form.querySelector('.custom-link') as HTMLElement).hidden = this.linkSelect.value !== 'custom';
  }

  load(q: URLSearchParams): void {
    for (const k of Object.keys(DEFAULTS)) this.input(k).value = q.get(k) ?? DEFAULTS[k];
    if (!LINK_CHOICES.includes(this.linkSelect.value)) this.linkSelect.value = DEFAULTS.alink;
    this.syncLink();
  }

  save(q: URLSearchParams): void {
    for (const k of Object.keys(DEFAULTS)) q.set(k, this.input(k).value);
  }

  /** A number in [min, max] in a panel field (`above`: min itself excluded), or an error in the page's words. */
  private number(n: string, label: string, min: number, max: number, what: string, above = false): number {
    const raw = this.input(n).value.trim(), v = Number(raw);
    if (raw === '' || !Number.isFinite(v) || v < min || (above && v === min) || v > max) throw new Error(`${label} must be ${what} (it is ${raw === '' ? 'empty or not a number' : raw}).`);
    return v;
  }

  private readLink(): Link {
    if (this.linkSelect.value !== 'custom') return resolveLink(this.linkSelect.value);
    return resolveLink('custom', this.number('agbps', 'Link bandwidth (Gbit/s)', 0, 1e9, 'a positive number', true), this.number('alat', 'Link latency (µs)', 0, 1e9, 'a non-negative number'));
  }

  private readRequest(model: ModelConfig, par: ParallelConfig): PanelRequest {
    const d = this.d, input = (n: string) => this.input(n);
    const seq = d.positiveWhole(input('aseq'), 'Sequence length', MAX_SEQ), gpus = d.positiveWhole(input('agpus'), 'GPUs', MAX_GPUS);
    const hbmGib = d.readHbm(input('ahbm'));
    const margin = this.number('amargin', 'Margin', 0, 0.9, 'a fraction of the HBM kept free, from 0 to 0.9');
    const gbs = input('agbs').value.trim() === '' ? gpus : d.positiveWhole(input('agbs'), 'Global batch', 1e7);
    if (gbs % par.microBatchSize) throw new Error(`Global batch (${gbs}) must be a multiple of the planner's micro batch (${par.microBatchSize}).`);
    const top = d.positiveWhole(input('atop'), 'Show top', 1000);
    return { model, base: { ...par, seqLength: seq }, gpus, hbmGib, margin, gbs, link: this.readLink(), top };
  }

  private clear(text: string): void {
    el('advisor-error').textContent = text;
    el('advisor-summary').textContent = '';
    el('advisor-checked').textContent = '';
    this.d.fillTable(el<HTMLTableElement>('advisor-table'), '', [], []);
    this.d.hooks.advisor = { error: text, evaluated: 0, fit: 0, rows: [] };
  }

  /** Reads the planner and the panel, searches (again only when they changed) and draws; bad input clears the panel and says why. */
  render(): void {
    let planner: ReturnType<AdvisorDeps['planner']>, req: PanelRequest;
    try {
      planner = this.d.planner();
    } catch {
      return this.clear("Fix the planner's fields above first: the advisor searches layouts of their model.");
    }
    try {
      req = this.readRequest(planner.model, planner.par);
      const key = JSON.stringify(req);
      if (this.cache?.key !== key) this.cache = { key, res: candidates(req) };
    } catch (e) {
      return this.clear(capital(this.d.pageWords(e)));
    }
    this.draw(req, this.cache.res);
  }

  private draw(r: PanelRequest, res: AdviseResult): void {
    el('advisor-error').textContent = '';
    const top = res.fitting.slice(0, r.top), m = r.model;
    const summary = `${res.all} layouts evaluated, ${res.fitting.length} fit${res.fitting.length ? '' : `: ${nothingFits(res).replace(/^nothing fits: /, '')}`}.` +
      res.untrainable.map((u) => ` ${u.layouts} layouts left out: ${this.d.pageWords(u.why)}.`).join('') +
      skippedLines(res.skipped).map((x) => ` ${x}.`).join('');
    el('advisor-summary').textContent = summary;
    el('advisor-checked').textContent = timeCheckedLines(H200).map((x) => x.trim()).join('\n');
    const why = top.map((c) => reasons(r, c));
    this.d.fillTable(el<HTMLTableElement>('advisor-table'),
      `${m.numLayers} layers, h=${m.hiddenSize}, ${m.numAttentionHeads} heads at ${r.base.seqLength.toLocaleString('en-US')} tokens on ${r.gpus} GPUs × ${r.hbmGib} GiB (fits ≤ ${(100 * (1 - r.margin)).toFixed(0)}%), ` +
      `link ${r.link.name}${r.gpus > 8 ? ' within nodes of 8 GPUs, ib-ndr between them' : ''}, global batch ${r.gbs} sequences; rates: ${H200.name} profile. Fastest first, the top ${top.length} of ${res.fitting.length}:`,
      ['#', 'TP', 'CP', 'scheme', 'PP', 'DP', 'recompute', 'distributed optimizer', 'step ms', 'TFLOP/s per GPU', 'tokens/s', 'comm %', 'memory GiB', 'why'],
      top.map((c, i) => [String(i + 1), c.tp > 1 && !c.sp ? `${c.tp} (no SP)` : String(c.tp), String(c.cp), c.cpCommType ?? '—', c.vp > 1 ? `${c.pp} (VP ${c.vp})` : String(c.pp), String(c.dp), c.recompute, c.distributedOptimizer ? 'yes' : 'no',
        ...[c.iterMs.toFixed(0), c.tflopsPerGpu.toFixed(0), c.tokensPerSecond.toFixed(0), (100 * c.commFraction).toFixed(1), gib(c.totalBytes)].map((text) => ({ text, cls: 'num' })),
        { text: why[i].join('\n'), cls: 'why', title: layoutLabel(c) }]));
    this.d.hooks.advisor = {
      evaluated: res.all, fit: res.fitting.length, summary, link: r.link.name, gbs: r.gbs,
      rows: top.map(({ time: _, ...c }, i) => ({ ...c, why: why[i] })),
    };
  }

  timeLines(model: ModelConfig, par: ParallelConfig): string[] {
    try {
      const t = layoutTime(model, par), it = t.time;
      const lines = [`predicted step ${it.iterMs.toFixed(0)} ms, ${it.tflopsPerGpu.toFixed(0)} TFLOP/s per GPU, ${(it.tokensPerSecond / 1e3).toFixed(1)}K tokens/s, comm ${(100 * it.commFraction).toFixed(1)}%`,
        `  for a global batch of ${t.globalBatch} on ${t.gpus} GPUs (TP ${par.tensorParallel} × CP ${par.contextParallel} × PP ${par.pipelineParallel} × DP ${par.dataParallel}), ${H200.name} profile, nvlink-h200${t.gpus > 8 ? ' within nodes of 8 GPUs, ib-ndr between them' : ''}`];
      const rc = recomputeCost(model, par), why = untrainable(model, par);
      if (why) lines.push(`not trainable: ${this.d.pageWords(why)}`);
      if (rc) lines.push(`recompute saves ${gib(rc.savedBytes)} GiB and costs ${rc.costMs.toFixed(0)} ms per step (+${(100 * rc.costFraction).toFixed(1)}% against no recompute)`);
      return lines;
    } catch (e) {
      return [`no predicted step time: ${this.d.pageWords(e)}`];
    }
  }
}

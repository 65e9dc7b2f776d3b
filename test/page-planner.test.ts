/**
 * The planner and replay panels in headless Chromium (the harness of page.test.ts, built into a folder of
 * its own): virtual stages without a pipeline refused as the CLI refuses them, replay files (duplicates,
 * removal, a row limit, points of another model left out of the error summary), copy-link feedback, the
 * chart's y range and ticks, messages in the fields' own words, a shared link's ignored values, and the
 * charts' keyboard and screen-reader access.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type PageHarness, collectErrors, hooks, openPage, pageReady, startPage, viewHash } from './page-harness.js';
import { configFromFlags } from '../src/cli/memory.js';
import { readFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { layoutTime, recomputeCost } from '../src/memory/advise.js';
import { MOE_EXPERT_BIASES, untrainable } from '../src/memory/untrainable.js';
import { duration } from '../web/format.js';
import { DEFAULT_PARALLEL, GIB, PRESETS, SELECTIVE_RECOMPUTE, memoryBreakdown, parseRecomputeSpec } from '../src/memory/model.js';

let server: PageHarness | null = null;
let browser: Browser;
const consoleErrors: string[] = [];
const out = join(__dirname, '..', 'test-output');

beforeAll(async () => {
  server = await startPage('test-output/dist-planner', false);
  browser = server.browser;
  mkdirSync(out, { recursive: true });
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** A fresh page at `hash`, ready; console errors collected. */
const open = (hash = ''): Promise<Page> => openPage(server!, consoleErrors, hash);

/** A form's fields marked invalid: each one's name and the message aria-describedby points to. */
const fieldMarks = (p: Page, form: string) => p.$$eval(`${form} [aria-invalid="true"]`, (els) => els.map((e) => {
  const id = e.getAttribute('aria-describedby');
  return { name: (e as HTMLInputElement).name || e.className, message: (id && document.getElementById(id)?.textContent) ?? null };
}));
const plannerOf = (p: Page) => hooks<{ lines: string[]; error?: string; notes?: string }>(p, 'planner');

describe('the planner and replay panels', () => {
  it('virtual stages without a pipeline are refused beside their field, as the CLI refuses them', async () => {
    expect(() => configFromFlags({ preset: 'seed-32L-4096h', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'seq-length': '65536', 'num-layers-per-virtual-pipeline-stage': '4' }))
      .toThrow(/makes 8 virtual stages, and Megatron-LM refuses virtual stages without a pipeline/);
    const p = await open('pp=1&vpp=4');
    const want = 'Layers per virtual stage (4) makes 8 virtual stages, and Megatron-LM refuses virtual stages without a pipeline: set PP above 1, or leave layers per virtual stage empty.';
    expect(await p.textContent('#planner-error')).toBe(want);
    expect((await plannerOf(p)).lines).toEqual([]);
    expect(await fieldMarks(p, '#planner-form')).toEqual([{ name: 'vpp', message: want }]);
    // With a pipeline the same chunks are taken; one virtual stage (all of a stage's layers) is no virtual stage.
    await p.fill('input[name=pp]', '2');
    expect(await p.textContent('#planner-error')).toBe('');
    expect((await plannerOf(p)).lines.length).toBeGreaterThan(0);
    await p.fill('input[name=pp]', '1');
    await p.fill('input[name=vpp]', '32');
    expect(await p.textContent('#planner-error')).toBe('');
    await p.close();
  });

  it('max positions (--max-position-embeddings): the learned table\'s rows, the CLI\'s bytes, kept in the link; below the longest length refused beside it, as the CLI refuses it', async () => {
    const gib = async (p: Page) => Number(/^CP=1 at 4K tokens: ([\d.]+) GiB per GPU/.exec((await p.textContent('#planner-breakdown'))!)![1]);
    const cli = (max?: string) => {
      const { model, par } = configFromFlags({ preset: 'seed-32L-4096h', 'seq-length': '4096', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, ...(max ? { 'max-position-embeddings': max } : {}) });
      return Number((memoryBreakdown(model, par).totalBytes / GIB).toFixed(2));
    };
    const p = await open('preset=seed-32L-4096h&lines=1&seqs=4096&tp=8&sp=1');
    expect(await p.inputValue('input[name=maxpos]')).toBe('');
    expect(await gib(p)).toBe(cli());
    await p.fill('input[name=maxpos]', '65536');
    expect(await gib(p)).toBe(cli('65536'));
    expect(cli('65536')).toBeGreaterThan(cli());
    expect((await viewHash(p)).get('maxpos')).toBe('65536');
    await p.reload();
    await pageReady(p);
    expect([await p.inputValue('input[name=maxpos]'), await gib(p)]).toEqual(['65536', cli('65536')]);
    await p.fill('input[name=seqs]', '4096,131072');
    const want = 'Max positions 65536 is less than the longest sequence length, 131072: Megatron-LM refuses it (max_position_embeddings must be at least seq_length); give at least 131072, or leave it out (the table then has a row a position of the sequence)';
    expect(await p.textContent('#planner-error')).toBe(want);
    expect((await plannerOf(p)).lines).toEqual([]);
    expect(await fieldMarks(p, '#planner-form')).toEqual([{ name: 'maxpos', message: want }]);
    await p.fill('input[name=maxpos]', '0');
    expect(await p.textContent('#planner-error')).toBe('Max positions must be a positive whole number (empty: the sequence length) (it is 0).');
    await p.fill('input[name=maxpos]', '');
    expect(await p.textContent('#planner-error')).toBe('');
    await p.close();
  });

  it('the note on "+ recompute" says what the time model says: both forwards again, a cost that grows with the context', async () => {
    const p = await open();
    const why = (await p.textContent('#recompute-why'))!.replace(/\s+/g, ' ');
    expect(why).not.toMatch(/10–15%/);
    expect(why).toMatch(/the attention core's and the MLP's forwards again .*grows with the context.*hover a point/);
    for (const doc of ['docs/page.md', 'docs/memory.md', 'src/memory/model.ts']) expect(readFileSync(doc, 'utf8'), doc).not.toMatch(/10–15%/);
    // The time model: selective core_attn+mlp costs a larger share of the step at 256K than at 4K.
    const m = { ...PRESETS['seed-32L-4096h'].model, biasLinear: false };
    const share = (s: number) => {
      return recomputeCost(m, { ...DEFAULT_PARALLEL, tensorParallel: 8, sequenceParallel: true, seqLength: s, ...parseRecomputeSpec(SELECTIVE_RECOMPUTE, 'x') })!.costFraction;
    };
    expect(share(262144)).toBeGreaterThan(share(4096));
    await p.close();
  });

  it('a recompute that stores more than none (selective core_attn with FlashAttention on Llama-3) says it saves no memory, not "saves -0.3 GiB"', async () => {
    // The model: with the attention core checkpointed, Q and K after RoPE are kept beside the QKV output.
    const { model, par } = configFromFlags({ preset: 'llama3-8b', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'seq-length': '8192', 'recompute-granularity': 'selective' });
    const rc = recomputeCost(model, par)!, more = (-rc.savedBytes / 2 ** 30);
    expect(more).toBeGreaterThan(0.05);
    const p = await open('preset=llama3-8b&lines=1:selective&seqs=8192');
    const time = (await p.textContent('#planner-time'))!;
    expect(time).toContain(`; recompute saves no memory (${more.toFixed(1)} GiB more) and costs `);
    await p.focus('#planner-chart');
    await p.keyboard.press('ArrowRight');
    const tip = await p.evaluate(() => (window as unknown as { __flashring: { plannerChart: { tooltip(): string[] } } }).__flashring.plannerChart.tooltip());
    expect(tip.at(-1)).toMatch(/^recompute saves no memory \(0\.\d+ GiB more\) for \+[\d.]+ ms a step \(\+[\d.]+%\)$/);
    expect(`${time} ${tip.join(' ')}`).not.toMatch(/saves -/);
    await p.close();
  });

  it('a box in a shared link is ticked by 1 and cleared by 0: any other value (flash=true) is named and set aside, not read as cleared', async () => {
    const boxes = (p: Page) => p.evaluate(() => Object.fromEntries(['flash', 'sp', 'distopt', 'swiglu', 'cpcausal', 'causal'].map((n) => [n, (document.querySelector(`input[name=${n}]`) as HTMLInputElement).checked])));
    const p = await open('flash=true&sp=yes&distopt=on&swiglu=x&cpcausal=2&lcausal=true');
    expect(await p.textContent('#view-note')).toBe("This link's swiglu=x, sp=yes, flash=true, distopt=on, cpcausal=2, lcausal=true are not values the page knows: set aside, the defaults shown instead (swiglu=0, sp=1, flash=1, distopt=0, cpcausal=1, lcausal=1).");
    // The defaults: FlashAttention, SP, causal on; the distributed optimizer and the seed preset's SwiGLU off.
    expect(await boxes(p)).toEqual({ flash: true, sp: true, distopt: false, swiglu: false, cpcausal: true, causal: true });
    // 0 and 1 are read as they are.
    await p.evaluate(() => { location.hash = 'flash=0&sp=0&distopt=1&swiglu=1&cpcausal=0&lcausal=0'; });
    await p.waitForFunction(() => !(document.querySelector('input[name=flash]') as HTMLInputElement).checked);
    expect(await p.textContent('#view-note')).toBe('');
    expect(await boxes(p)).toEqual({ flash: false, sp: false, distopt: true, swiglu: true, cpcausal: false, causal: false });
    await p.close();
  });

  type Axes = { x: number[]; y: number[]; area: { left: number; right: number; top: number; bottom: number } };
  const axes = (p: Page) => p.evaluate(() => (window as unknown as { __flashring: { plannerChart: { axes(): Axes | null } } }).__flashring.plannerChart.axes());
  /** A drawn point's position on the canvas (chartArea's pixels), or null. */
  const pointOnCanvas = (p: Page, label: string, x: number) => p.evaluate(([l, v]) => {
    const probe = (window as unknown as { __flashring: { plannerChart: { pointAt(l: string, x: number): { x: number; y: number } | null } } }).__flashring.plannerChart;
    const at = probe.pointAt(l as string, v as number), r = document.getElementById('planner-chart')!.getBoundingClientRect();
    return at && { x: at.x - r.left, y: at.y - r.top };
  }, [label, x] as const);

  it('the y axis ends on a round tick; one length stands mid-chart; an HBM no line fits shows every line and says so', async () => {
    const p = await open('preset=llama3-70b&pp=4&hbm=141');
    let a = (await axes(p))!;
    const steps = a.y.slice(1).map((v, i) => v - a.y[i]);
    expect(new Set(steps).size, `ticks ${a.y}`).toBe(1); // was 0, 50, …, 200, 226: "226" squeezed over "200"
    await (await p.$('#planner-chart'))!.screenshot({ path: join(out, 'planner-70b-pp4.png') });
    await p.goto(`${server!.url}#seqs=4096`);
    await p.waitForFunction(() => (window as unknown as { __flashring: { planner: { lines: string[] } } }).__flashring.planner.lines.length > 0);
    a = (await axes(p))!;
    expect(a.x.length).toBeGreaterThanOrEqual(3);
    const one = (await pointOnCanvas(p, 'CP=1', 4096))!;
    expect(Math.abs(one.x - (a.area.left + a.area.right) / 2)).toBeLessThan(2);
    await (await p.$('#planner-chart'))!.screenshot({ path: join(out, 'planner-one-length.png') });
    await p.goto(`${server!.url}#hbm=0.5`);
    await p.waitForFunction(() => /HBM 0\.5 GiB/.test((window as unknown as { __flashring: { planner: { lines: string[] } } }).__flashring.planner.lines.join()));
    a = (await axes(p))!;
    for (const l of ['CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']) {
      const at = (await pointOnCanvas(p, l, 4096))!;
      expect(at.y, l).toBeGreaterThan(a.area.top);
      expect(at.y, l).toBeLessThan(a.area.bottom);
    }
    const sub = await p.evaluate(() => ((window as unknown as { __flashring: { plannerChart: { subtitle(): string } } }).__flashring.plannerChart.subtitle()));
    expect(sub).toMatch(/Every line is out of memory from the first length \(4K tokens\): nothing fits in 0\.5 GiB/);
    expect(sub).not.toMatch(/off the scale/);
    await (await p.$('#planner-chart'))!.screenshot({ path: join(out, 'planner-hbm-0.5.png') });
    await p.close();
  });

  it('messages in the fields\' words: a link\'s one limit, lengths no line can take marked on the lengths, a shared link\'s unknown values said', async () => {
    const p = await open('cplink=custom');
    for (const [v, ok] of [['1e-9', false], ['2e6', false], ['5e6', false], ['0.000001', true], ['1000000', true]] as const) {
      await p.fill('#cp-form input[name=cpgbps]', v);
      await p.waitForFunction(() => !(window as unknown as { __flashring: { busy?: number } }).__flashring.busy);
      const err = await p.textContent('#cp-error');
      if (ok) expect(err, v).toBe('');
      else expect(err, v).toBe(`Link bandwidth (Gbit/s) must be a number from 0.000001 to 1,000,000 (it is ${v}).`);
    }
    // Its latency: the link model's range, as the advisor's and the live panel's (it stopped at 10,000,000 µs).
    for (const [v, ok] of [['-1', false], ['2e9', false], ['0', true], ['500000000', true]] as const) {
      await p.fill('#cp-form input[name=cplat]', v);
      await p.waitForFunction(() => !(window as unknown as { __flashring: { busy?: number } }).__flashring.busy);
      const err = await p.textContent('#cp-error');
      if (ok) expect(err, v).toBe('');
      else expect(err, v).toBe(`Link latency (µs) must be a number from 0 to 1,000,000,000 (it is ${v}).`);
    }
    await p.fill('#cp-form input[name=cplat]', '3');
    await p.selectOption('#advisor-form select[name=alink]', 'custom');
    await p.fill('#advisor-form input[name=agbps]', '1e-9');
    await p.press('#advisor-form input[name=agbps]', 'Enter');
    await p.waitForFunction(() => /Link bandwidth/.test(document.getElementById('advisor-error')!.textContent ?? ''));
    expect(await p.textContent('#advisor-error')).toMatch(/^Link bandwidth \(Gbit\/s\) must be a number from 0\.000001 to 1,000,000 \(it is 1e-9\)\./);
    await p.close();
    const q = await open('seqs=1000,3000,5000');
    const marks = await fieldMarks(q, '#planner-form');
    expect(marks.map((m) => m.name)).toEqual(['seqs']);
    expect(marks[0].message).toMatch(/^Sequence lengths: lines 'CP=2', 'CP=4' and 'CP=4 \+ recompute' have no point at any of them\. Line 'CP=2': none of the sequence lengths \(1000, 3000, 5000\) splits over CP 2/);
    await q.close();
    const r = await open('preset=nope&stack=xyz&cplink=xyz&alink=xyz&tp=4');
    expect(await r.textContent('#view-note')).toBe('This link\'s preset=nope, stack=xyz, cplink=xyz, alink=xyz are not values the page knows: set aside, the defaults shown instead (preset=seed-32L-4096h, stack=megatron, cplink=nvlink-h200, alink=nvlink-h200).');
    expect(await r.inputValue('input[name=tp]')).toBe('4');
    await r.goto(`${server!.url}#tp=4`);
    await r.waitForFunction(() => document.getElementById('view-note')!.textContent === '');
    await r.close();
  });

  it('"Copy link to this view" says it copied, or shows the link to copy by hand where there is no clipboard', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1100, height: 1800 } });
    await ctx.grantPermissions(['clipboard-read', 'clipboard-write']);
    const p = await ctx.newPage();
    await p.goto(`${server!.url}#tp=4`);
    await p.waitForFunction(() => (window as unknown as { __flashring?: { ready?: boolean } }).__flashring?.ready === true);
    await p.click('#copy-link');
    await p.waitForFunction(() => document.getElementById('copy-status')!.textContent !== '');
    expect(await p.textContent('#copy-status')).toBe('Link copied.');
    expect(await p.evaluate(() => navigator.clipboard.readText())).toBe(p.url());
    expect(await p.isHidden('#copy-by-hand')).toBe(true);
    // A changed view: the old "copied" goes.
    await p.fill('input[name=tp]', '2');
    expect(await p.textContent('#copy-status')).toBe('');
    await ctx.close();
    const q = await browser.newPage();
    await q.addInitScript(() => { Object.defineProperty(Navigator.prototype, 'clipboard', { get: () => undefined }); });
    await q.goto(`${server!.url}#tp=4`);
    await q.waitForFunction(() => (window as unknown as { __flashring?: { ready?: boolean } }).__flashring?.ready === true);
    await q.click('#copy-link');
    await q.waitForSelector('#copy-by-hand', { state: 'visible' });
    expect(await q.inputValue('#copy-by-hand')).toBe(q.url());
    expect(await q.textContent('#copy-status')).toBe('This browser gives the page no clipboard here (plain http from a host other than localhost has none): copy the link below by hand.');
    // An edit of the live form changes the view too (its fields are in the hash): the link shown goes.
    await q.fill('#live-form input[name=N]', '512');
    await q.dispatchEvent('#live-form input[name=N]', 'input');
    expect(await q.isHidden('#copy-by-hand')).toBe(true);
    expect(await q.textContent('#copy-status')).toBe('');
    expect((await viewHash(q)).get('lN')).toBe('512');
    await q.close();
    // A clipboard that refuses the write: said as that, not as "no clipboard".
    const r = await browser.newPage();
    await r.addInitScript(() => { Object.defineProperty(Clipboard.prototype, 'writeText', { value: () => Promise.reject(new DOMException('denied', 'NotAllowedError')) }); });
    await r.goto(`${server!.url}#tp=4`);
    await pageReady(r);
    await r.click('#copy-link');
    await r.waitForSelector('#copy-by-hand', { state: 'visible' });
    expect(await r.textContent('#copy-status')).toBe('The browser refused to let the page copy (clipboard permission denied, or the page not focused): copy the link below by hand.');
    await r.close();
  });

  it('a preset switch moves the recompute controls to the new model\'s "+ recompute" (a stale control would rewrite the lines)', async () => {
    const p = await open('preset=seed-32L-4096h');
    const controls = async () => [await p.inputValue('select[name=rc]'), await p.inputValue('select[name=rcmethod]'), await p.inputValue('input[name=rcn]')];
    expect(await controls()).toEqual(['full', 'uniform', '1']);   // the seed has linear biases
    await p.selectOption('select[name=preset]', 'llama3-8b');
    expect(await p.inputValue('select[name=rc]')).toBe('selective');
    expect([await p.isChecked('input[name=rc_core_attn]'), await p.isChecked('input[name=rc_mlp]')]).toEqual([true, true]);
    // A control changed now rewrites the lines from what they show: selective, not the seed's full recompute.
    await p.check('input[name=rc_layernorm]');
    expect(await p.inputValue('input[name=lines]')).toBe('1,1:selective:core_attn+mlp+layernorm,2,4,4:selective:core_attn+mlp+layernorm');
    await p.fill('input[name=lines]', '1,1:recompute,2,4,4:recompute');
    await p.selectOption('select[name=preset]', 'seed-32L-4096h');
    expect(await controls()).toEqual(['full', 'uniform', '1']);
    await p.close();
  });

  it('recompute controls set back to the model\'s default write `recompute` into the lines, which then follow the model', async () => {
    const p = await open('preset=seed-32L-4096h');
    await p.fill('input[name=rcn]', '2');
    expect(await p.inputValue('input[name=lines]')).toBe('1,1:full:uniform/2,2,4,4:full:uniform/2');
    await p.fill('input[name=rcn]', '1');
    expect(await p.inputValue('input[name=lines]')).toBe('1,1:recompute,2,4,4:recompute'); // was 1,1:full:uniform/1,…
    await p.check('input[name=nobias]');
    expect(await p.inputValue('select[name=rc]')).toBe('selective'); // the model's default now: selective core_attn+mlp
    expect((await plannerOf(p)).lines.join()).toMatch(/CP=4 \+ recompute/);
    await p.close();
  });

  it('the legend shows each line as a line sample in its own dash with its mark (not a box with a dashed border), a measured series as its mark', async () => {
    type Legend = { usePointStyle: boolean; items: { text: string; pointStyle: string | false; mark: string | null; lineDash: number[]; color: string; box: { left: number; top: number; width: number; height: number } }[] };
    const legendOf = (p: Page, chart: string) => p.evaluate((k) => (window as unknown as { __flashring: Record<string, { legend(): Legend | null }> }).__flashring[k].legend(), chart);
    const p = await open();
    const legend = (await legendOf(p, 'plannerChart'))!;
    expect(legend.usePointStyle).toBe(true);
    const item = (t: string) => legend.items.find((i) => i.text === t)!;
        expect([item('CP=1').pointStyle, item('CP=1').lineDash, item('CP=1').mark]).toEqual(['line', [], 'circle']);
        expect([item('CP=1 + recompute').pointStyle, item('CP=1 + recompute').lineDash, item('CP=1 + recompute').mark]).toEqual(['line', [6, 3], 'circle']);
        expect([item('CP=2').mark, item('CP=4').mark, item('CP=4 + recompute').mark]).toEqual(['rect', 'rectRot', 'rectRot']);
        expect([item('HBM 80 GiB').pointStyle, item('HBM 80 GiB').lineDash, item('HBM 80 GiB').mark]).toEqual(['line', [2, 4], null]);
    // As drawn: the sample is a line (a few pixel rows of its colour at its ends) with its mark in the middle, dashed
    // where its line is; a box was 12 rows, filled.
    for (const [text, runs] of [['CP=1', 1], ['CP=1 + recompute', 2]] as const) {
      const { color, box } = item(text);
      const drawn = await p.evaluate(([c, b]) => {
        const canvas = document.getElementById('planner-chart') as HTMLCanvasElement, k = canvas.width / canvas.getBoundingClientRect().width;
        const x0 = Math.round((b.left - 4) * k), y0 = Math.round(b.top * k), w = Math.round(44 * k), h = Math.round(b.height * k);
        const px = canvas.getContext('2d')!.getImageData(x0, y0, w, h).data;
        const want = [1, 3, 5].map((i) => parseInt(c.slice(i, i + 2), 16));
        const hit = (x: number, y: number) => { const o = 4 * (y * w + x); return px[o + 3] > 128 && want.every((v, j) => Math.abs(px[o + j] - v) < 40); };
        const rows = Array.from({ length: h }, (_, y) => Array.from({ length: w }, (_, x) => hit(x, y)));
        const inked = rows.map((r) => r.some(Boolean));
        const count = (r: boolean[]) => r.filter(Boolean).length;
        const mid = rows.reduce((a, r) => (count(r) > count(a) ? r : a), rows[0] ?? []); // the sample's fullest row
        const runs = mid.filter((v, x) => v && !mid[x - 1]).length;
        const cols = Array.from({ length: w }, (_, x) => rows.filter((r) => r[x]).length), ink = cols.flatMap((c, x) => (c ? [x] : []));
        return { rows: inked.filter(Boolean).length, runs, endRows: Math.max(cols[ink[0]], cols[ink.at(-1)!]), midRows: cols[Math.round((ink[0] + ink.at(-1)!) / 2)] };
      }, [color, box] as const);
      expect(drawn.endRows, text).toBeGreaterThan(0);
      expect(drawn.endRows, text).toBeLessThanOrEqual(4);
      expect(drawn.midRows, text).toBeGreaterThanOrEqual(6); // its circle (radius 4)
      expect(drawn.runs, text).toBeGreaterThanOrEqual(runs);
      if (runs === 1) expect(drawn.runs, text).toBe(1);
    }
    await (await p.$('#planner-chart'))!.screenshot({ path: join(out, 'planner-legend.png') });
    // The replay's measured series: marks, not lines, and no dash.
    const replay = (await legendOf(p, 'replayChart'))!;
    const measured = replay.items.filter((i) => i.text.startsWith('measured'));
    expect(measured.length).toBeGreaterThan(0);
    for (const m of measured) expect([m.pointStyle, m.mark === null || m.mark === 'crossRot', m.lineDash], m.text).toEqual([false, false, []]);
    expect(replay.items.filter((i) => !i.text.startsWith('measured')).every((i) => i.pointStyle === 'line')).toBe(true);
    await p.close();
  });

  it('the recompute controls live in the URL: a box unticked, the granularity, method and N survive a reload, with a recomputing line or none', async () => {
    const names = ['rc_core_attn', 'rc_mlp', 'rc_layernorm', 'rc_moe', 'rc_shared_experts'];
    const controls = (p: Page) => p.evaluate((ns) => ({
      boxes: ns.map((n) => (document.querySelector(`input[name=${n}]`) as HTMLInputElement).checked),
      rc: (document.querySelector('select[name=rc]') as HTMLSelectElement).value,
      method: (document.querySelector('select[name=rcmethod]') as HTMLSelectElement).value,
      n: (document.querySelector('input[name=rcn]') as HTMLInputElement).value,
    }), names);
    const reload = async (p: Page) => { await p.reload(); await pageReady(p); };
    // No line recomputes: the controls hold a setting the lines do not (they take it once a line recomputes).
    const p = await open('preset=llama3-8b&lines=1,2');
    expect((await controls(p)).boxes).toEqual([true, true, false, false, false]);
    await p.uncheck('input[name=rc_mlp]');
    await p.check('input[name=rc_layernorm]');
    await p.selectOption('select[name=rc]', 'full');
    await p.selectOption('select[name=rcmethod]', 'block');
    await p.fill('input[name=rcn]', '4');
    await p.selectOption('select[name=rc]', 'selective');
    const before = await controls(p);
    expect(before).toEqual({ boxes: [true, false, true, false, false], rc: 'selective', method: 'block', n: '4' });
    const h = await viewHash(p);
    expect([h.get('rc_mlp'), h.get('rc_layernorm'), h.get('rcmethod'), h.get('rcn')]).toEqual(['0', '1', 'block', '4']);
    await reload(p);
    expect(await controls(p)).toEqual(before); // mlp came back ticked, layernorm unticked, method and N their defaults
    expect(await p.inputValue('input[name=lines]')).toBe('1,2');
    await p.close();
    // Recomputing lines: mlp unticked, then full layers; the modules, hidden now, are kept for a switch back.
    const q = await open('preset=llama3-8b');
    await q.uncheck('input[name=rc_mlp]');
    await q.selectOption('select[name=rc]', 'full');
    await q.fill('input[name=rcn]', '2');
    expect(await q.inputValue('input[name=lines]')).toBe('1,1:full:uniform/2,2,4,4:full:uniform/2');
    await reload(q);
    expect(await controls(q)).toEqual({ boxes: [true, false, false, false, false], rc: 'full', method: 'uniform', n: '2' });
    await q.selectOption('select[name=rc]', 'selective');
    expect(await q.inputValue('input[name=lines]')).toBe('1,1:selective,2,4,4:selective'); // core_attn alone; was 1:recompute (core_attn+mlp): the untick lost
    // A link without them (an older one) shows the defaults, then what its lines say; a value the page does not know is named.
    await q.close();
    const r = await open('preset=llama3-8b&lines=1,2&rc_mlp=yes&rcmethod=xyz');
    expect(await controls(r)).toEqual({ boxes: [true, true, false, false, false], rc: 'selective', method: 'uniform', n: '1' });
    expect(await r.textContent('#view-note')).toBe("This link's rcmethod=xyz, rc_mlp=yes are not values the page knows: set aside, the defaults shown instead (rcmethod=uniform, rc_mlp=1).");
    await r.close();
  });

  it('a 390 px window: the page does not scroll sideways (charts draw at its width, inputs and tables fit); at 1100 px the charts draw as before', async () => {
    const p = await browser.newPage({ viewport: { width: 390, height: 900 } });
    collectErrors(p, consoleErrors);
    await p.goto(server!.url);
    await pageReady(p);
    // Every element whose right edge passes the window, for the message.
    const wider = await p.evaluate(() => Array.from(document.querySelectorAll('body *')).filter((e) => e.getBoundingClientRect().right > 391 && !e.closest('.scroll'))
      .map((e) => `${e.tagName.toLowerCase()}#${e.id}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`).slice(0, 12));
    expect(wider).toEqual([]);
    expect(await p.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    for (const id of ['planner-chart', 'replay-chart', 'timeline', 'timeline-predicted']) {
      const box = (await p.$eval(`#${id}`, (c) => { const r = c.getBoundingClientRect(); return { w: r.width, h: r.height, cw: (c as HTMLCanvasElement).width, ch: (c as HTMLCanvasElement).height }; }));
      expect(box.w, id).toBeLessThanOrEqual(358);
      if (box.h) expect(Math.abs(box.w / box.h - box.cw / box.ch), id).toBeLessThan(0.02); // its aspect kept
    }
    await p.screenshot({ path: join(out, 'page-390-top.png') });
    await p.locator('#planner-chart').scrollIntoViewIfNeeded();
    await p.screenshot({ path: join(out, 'page-390-chart.png') });
    await p.close();
    const q = await open();
    for (const id of ['planner-chart', 'replay-chart']) expect((await q.$eval(`#${id}`, (c) => c.getBoundingClientRect().width)), id).toBe(960);
    await q.close();
  });

  it('a 390 px window: the charts draw at its width, their ticks, legend and titles at 12 CSS px (scaled down from 960 px they were 4.5 px); the PNG export is the full-width image it was', async () => {
    type Text = { scale: number; xTicks: number; yTicks: number; legend: number; title: number; width: number; height: number };
    const text = (p: Page, chart: string) => p.evaluate((k) => (window as unknown as { __flashring: Record<string, { text(): Text | null }> }).__flashring[k].text(), chart);
    const png = async (p: Page) => {
      const [dl] = await Promise.all([p.waitForEvent('download'), p.click('#export-png')]);
      const bytes = readFileSync((await dl.path())!);
      return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20), base64: bytes.toString('base64') };
    };
    const wide = await open();
    const before = await png(wide);
    expect([before.width, before.height]).toEqual([960, 520]);
    // The export is what the page at full width shows (the canvas on white), as it was when it copied the canvas.
    const shown = await wide.evaluate(() => {
      const canvas = document.getElementById('planner-chart') as HTMLCanvasElement;
      const c = Object.assign(document.createElement('canvas'), { width: canvas.width, height: canvas.height }), g = c.getContext('2d')!;
      g.fillStyle = '#ffffff';
      g.fillRect(0, 0, c.width, c.height);
      g.drawImage(canvas, 0, 0);
      return c.toDataURL('image/png').split(',')[1];
    });
    expect(before.base64 === shown, 'the export at 1100 px is the chart as shown').toBe(true);
    await wide.close();
    for (const deviceScaleFactor of [1, 2]) {
      const p = await browser.newPage({ viewport: { width: 390, height: 900 }, deviceScaleFactor });
      collectErrors(p, consoleErrors);
      await p.goto(server!.url);
      await pageReady(p);
      for (const chart of ['plannerChart', 'replayChart']) {
        const t = (await text(p, chart))!;
        for (const k of ['xTicks', 'yTicks', 'legend', 'title'] as const) expect(t[k], `${chart} ${k} at ${deviceScaleFactor}x`).toBeGreaterThanOrEqual(10);
        expect(t.width, chart).toBeLessThanOrEqual(358);
      }
      // Drawn at the device's pixels: the canvas holds pixel ratio × its CSS size.
      const canvas = await p.$eval('#planner-chart', (c) => ({ w: (c as HTMLCanvasElement).width, css: c.getBoundingClientRect().width }));
      expect(canvas.w).toBe(Math.floor(canvas.css * deviceScaleFactor));
      await p.locator('#planner-chart').scrollIntoViewIfNeeded();
      await p.screenshot({ path: join(out, `page-390-chart-${deviceScaleFactor}x.png`) });
      // The export: the full-width chart, whatever the window (at the device's pixel ratio, as the page's canvas was).
      const narrow = await png(p);
      expect([narrow.width, narrow.height]).toEqual([960 * deviceScaleFactor, 520 * deviceScaleFactor]);
      if (deviceScaleFactor === 1) expect(narrow.base64 === before.base64, 'the export at 390 px is the one at 1100 px').toBe(true);
      // A window made wider (a phone turned): the charts follow it, up to their 960 px.
      await p.setViewportSize({ width: 700, height: 900 });
      await p.waitForFunction(() => (window as unknown as { __flashring: { plannerChart: { text(): { width: number } } } }).__flashring.plannerChart.text().width === 668);
      expect((await text(p, 'plannerChart'))!.scale).toBe(1);
      await p.setViewportSize({ width: 1100, height: 900 });
      await p.waitForFunction(() => (window as unknown as { __flashring: { replayChart: { text(): { width: number } } } }).__flashring.replayChart.text().width === 960);
      await p.close();
    }
  });

  it('a 390 px window: hovering a point of the narrow chart shows that point (Chart.js read the pointer as if the canvas showed at 960 px when CSS scaled it down)', async () => {
    const p = await browser.newPage({ viewport: { width: 390, height: 900 } });
    collectErrors(p, consoleErrors);
    await p.goto(server!.url);
    await pageReady(p);
    await p.locator('#planner-chart').scrollIntoViewIfNeeded();
    type Probe = { pointAt(l: string, x: number): { x: number; y: number } | null; tooltip(): string[] };
    const tooltip = () => p.evaluate(() => (window as unknown as { __flashring: { plannerChart: Probe } }).__flashring.plannerChart.tooltip());
    for (const [label, x, tokens] of [['CP=2', 65536, '64K'], ['CP=4 + recompute', 1048576, '1M']] as const) {
      const { at, box } = await p.evaluate(([l, v]) => {
        const r = document.getElementById('planner-chart')!.getBoundingClientRect();
        const probe = (window as unknown as { __flashring: { plannerChart: Probe } }).__flashring.plannerChart;
        return { at: probe.pointAt(l as string, v as number), box: { left: r.left, right: r.right, bottom: r.bottom } };
      }, [label, x] as const);
      expect(at, `${label} at ${x}`).not.toBeNull();
      // Where the point shows: inside the scaled-down canvas.
      expect(at!.x).toBeGreaterThan(box.left);
      expect(at!.x).toBeLessThan(box.right);
      expect(at!.y).toBeLessThan(box.bottom);
      await p.mouse.move(0, 0);
      await p.mouse.move(at!.x, at!.y);
      await expect.poll(tooltip, { timeout: 5000 }).not.toEqual([]);
      expect((await tooltip())[0].startsWith(`${label}, ${tokens} tokens:`), (await tooltip())[0]).toBe(true);
      expect((await p.textContent('#planner-breakdown caption'))!.startsWith(`${label} at ${tokens} tokens:`)).toBe(true);
    }
    await p.close();
  });

  type Replay = { rows: { origin: string }[]; files: { name: string; points: number }[] };
  const replayOf = (p: Page) => hooks<Replay>(p, 'replay');
  const LOG = join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log');
  const csv = (rows: number, model = '8L h=4096 a=32 vocab=8192') => 'seq_len,tp,cp,recompute,total_gib,fits,source\n' +
    Array.from({ length: rows }, (_, i) => `${4096 * (1 + (i % 8))},1,1,none,${(38 + i / 1000).toFixed(3)},true,"measured: elsewhere, GPT ${model}"`).join('\n') + '\n';
  const drop = async (p: Page, files: string | { name: string; mimeType: string; buffer: Buffer }) => {
    // Each drop adds a line to the list (or, replacing a file, changes it).
    const before = await p.textContent('#replay-messages');
    await p.setInputFiles('#replay-files', files);
    await p.waitForFunction((k) => document.getElementById('replay-messages')!.textContent !== k, before);
  };

  it('replay: a file dropped twice is added once, one of the same name replaces it, each has a remove control; the page says files are not kept', async () => {
    const p = await open();
    expect((await p.textContent('#replay'))!.replace(/\s+/g, ' ')).toMatch(/Dropped files stay in this tab only: a reload or a shared link does not bring them back/);
    const base = (await replayOf(p)).rows.length;
    await drop(p, LOG);
    await drop(p, LOG);
    expect((await replayOf(p)).rows.length).toBe(base + 1); // was base + 2: the same row twice
    expect(await p.$$eval('#replay-messages li', (l) => l.at(-1)!.textContent)).toBe('core_0.16_tp4_cp2_sp_selective.log: already added (the same name and content): nothing added again');
    await drop(p, { name: 'a.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(1)) });
    await drop(p, { name: 'a.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(2)) });
    expect((await replayOf(p)).files).toEqual([{ name: 'core_0.16_tp4_cp2_sp_selective.log', points: 1 }, { name: 'a.csv', points: 2 }]);
    expect((await replayOf(p)).rows.length).toBe(base + 3);
    expect(await p.textContent('#replay-messages')).toMatch(/a\.csv: 2 points added \(it replaces the file of this name dropped before\)/);
    expect(await p.textContent('#replay-messages')).not.toMatch(/a\.csv: 1 point/);
    // Remove the log: its point, its line and its warnings go; focus stays in the panel.
    const remove = p.getByRole('button', { name: 'remove core_0.16_tp4_cp2_sp_selective.log and its 1 point' });
    await remove.focus();
    await p.keyboard.press('Enter');
    await p.waitForFunction(() => /removed/.test(document.getElementById('replay-status')!.textContent ?? ''));
    expect((await replayOf(p)).files).toEqual([{ name: 'a.csv', points: 2 }]);
    expect((await replayOf(p)).rows.length).toBe(base + 2);
    expect(await p.textContent('#replay-messages')).not.toMatch(/core_0\.16/);
    expect(await p.textContent('#replay-status')).toBe('core_0.16_tp4_cp2_sp_selective.log removed, with its 1 point.');
    expect(await p.evaluate(() => document.activeElement?.id)).toBe('replay-files');
    expect(consoleErrors).toEqual([]);
    await p.close();
  });

  it('replay: dropped series take colours none of the model lines have, and the legend says they are measured', async () => {
    const p = await open();
    for (let i = 0; i < 6; i++) await drop(p, { name: `m${i}.csv`, mimeType: 'text/csv', buffer: Buffer.from(csv(1).replace('elsewhere', `site ${i}`)) });
    const { datasets, colors } = await hooks<{ datasets: string[]; colors: string[] }>(p, 'replay');
    const lines = datasets.map((l, i) => ({ l, c: colors[i] })).filter((d) => /^CP=/.test(d.l));
    const measured = datasets.map((l, i) => ({ l, c: colors[i] })).filter((d) => !/^CP=|^HBM/.test(d.l));
    expect(lines.length).toBe(4);
    expect(measured.length).toBe(8); // 2 shipped sources and 6 dropped
    for (const m of measured) {
      expect(m.l).toMatch(/^measured: /);
      expect(lines.map((x) => x.c), m.l).not.toContain(m.c); // was the lines' red, orange, … again from the 3rd dropped source
    }
    await (await p.$('#replay-chart'))!.screenshot({ path: join(out, 'replay-colours.png') });
    const b = (await (await p.$('#replay-chart'))!.boundingBox())!;
    await p.screenshot({ path: join(out, 'replay-colours-zoom.png'), clip: { x: b.x + 380, y: b.y + 150, width: 300, height: 110 } });
    await p.close();
  });

  it('replay: a log\'s line counts the notes under it right, in plural words; a .npy is named as a tensor file, a compressed log and a UTF-16 CSV as what they are', async () => {
    const p = await open();
    for (const f of ['core_0.4_tp8.log', 'truncated_oom.log', 'core_0.10_tp4_cp2_sp.log']) await drop(p, join(__dirname, 'fixtures/megatron', f));
    await drop(p, { name: 'x.npy', mimeType: 'application/octet-stream', buffer: Buffer.from([1, 2, 3, 4]) });
    const items = await p.$$eval('#replay-messages li', (l) => l.map((x) => ({ text: x.textContent ?? '', warn: x.classList.contains('warn') })));
    let checked = 0;
    items.forEach((it, i) => {
      const m = /: 1 point added(?: \((\d+) notes? below\))?/.exec(it.text);
      if (!m) return;
      let n = 0;
      while (items[i + 1 + n]?.warn) n++;
      expect(Number(m[1] ?? 0), it.text).toBe(n); // was "(3 note(s) below)" over 4
      if (m[1]) expect(it.text).toMatch(m[1] === '1' ? /\(1 note below\)/ : /\(\d+ notes below\)/);
      checked += n ? 1 : 0;
    });
    expect(checked).toBeGreaterThan(0);
    expect(items.filter((x) => !x.warn).map((x) => x.text).join('\n')).not.toMatch(/\(s\)/); // the page's own lines (a log's notes are the parser's)
    expect(items.at(-1)!.text).toBe('x.npy: could not be read — it is a tensor file (a NumPy .npy array), not a log or CSV; replay takes Megatron-LM training logs and activation_memory.csv files dismiss');
    // While files are read the status line says which (a drop of 2,000 rows takes a second or more), and clears after.
    await p.evaluate(() => {
      const seen: string[] = ((window as unknown as { __status: string[] }).__status = []);
      new MutationObserver(() => seen.push(document.getElementById('replay-status')!.textContent ?? '')).observe(document.getElementById('replay-status')!, { childList: true, characterData: true, subtree: true });
    });
    await p.setInputFiles('#replay-files', ['core_0.4_tp8.log', 'truncated_oom.log'].map((f) => join(__dirname, 'fixtures/megatron', f)));
    await p.waitForFunction(() => (window as unknown as { __status: string[] }).__status.at(-1) === '');
    expect(await p.evaluate(() => (window as unknown as { __status: string[] }).__status)).toEqual(['reading core_0.4_tp8.log (1 of 2)…', 'reading truncated_oom.log (2 of 2)…', '']);
    // A compressed log and a UTF-16 CSV: named for what they are (read as text, the log had no argument dump, the CSV a garbled header).
    await drop(p, { name: 'run.log', mimeType: 'application/gzip', buffer: gzipSync(readFileSync(join(__dirname, 'fixtures/megatron/core_0.4_tp8.log'))) });
    await drop(p, { name: 'u16.csv', mimeType: 'text/csv', buffer: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('seq_len,total_gib\n4096,10\n', 'utf16le')]) });
    const last = await p.$$eval('#replay-messages li', (l) => l.slice(-2).map((x) => x.firstChild!.textContent));
    expect(last).toEqual([
      'run.log: could not be read — it is gzip-compressed: decompress it first (gunzip); replay takes Megatron-LM training logs and activation_memory.csv files',
      'u16.csv: could not be read — it is UTF-16 text: save it as UTF-8; replay takes Megatron-LM training logs and activation_memory.csv files',
    ]);
    // Each such line has a control that takes it off the list (it stayed until a reload); the focus stays in the panel.
    const lines = async () => p.$$eval('#replay-messages li', (l) => l.map((x) => x.firstChild!.textContent ?? ''));
    const n = (await lines()).length;
    await p.click('button[aria-label="dismiss the note that x.npy could not be read"]');
    expect(await lines()).toHaveLength(n - 1);
    expect((await lines()).some((t) => t.startsWith('x.npy'))).toBe(false);
    expect(await p.evaluate(() => [document.activeElement?.id, document.getElementById('replay-status')!.textContent])).toEqual(['replay-files', 'The note on x.npy dismissed.']);
    await p.close();
  });

  it('replay: a file over the row limit is refused at once, naming the limit and the CLI that takes it', async () => {
    const p = await open();
    const base = (await replayOf(p)).rows.length;
    const limit = await p.textContent('#replay-limit');
    expect(limit).toBe('2,000');
    // Refused from a count of its lines, never parsed (parsing it first held the tab 14.5 s; a wall-clock bound here failed on a busy machine).
    const parses = () => p.evaluate(() => ((window as unknown as { __flashring: { csvParses?: number } }).__flashring.csvParses ?? 0));
    const before = await parses();
    await drop(p, { name: 'big.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(20_000)) });
    expect(await parses()).toBe(before);
    expect(await p.textContent('#replay-messages li.bad')).toBe('big.csv: could not be read — it has 20,000 rows, and the page takes at most 2,000 dropped points in all (2,000 left), as its table and chart hold each one: flashring replay big.csv takes any number dismiss');
    expect((await replayOf(p)).rows.length).toBe(base);
    // At the limit it is taken, and then no more.
    await drop(p, { name: 'full.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(2000)) });
    expect(await parses()).toBe(before + 1);   // the count can tell: a file within the limit is parsed
    expect((await replayOf(p)).rows.length).toBe(base + 2000);
    await drop(p, LOG);
    expect(await p.$$eval('#replay-messages li', (l) => l.at(-1)!.textContent)).toMatch(/core_0\.16_tp4_cp2_sp_selective\.log: could not be read — it has 1 row, .*\(0 left\)/);
    await p.close();
  });

  it('replay: points of another model are left out of the error summary and labelled in the table', async () => {
    const p = await open();
    await drop(p, { name: 'other.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(1, '24L h=2048 a=16 vocab=50257')) });
    const summary = await p.textContent('#replay-summary');
    expect(summary).not.toMatch(/dropped points?: largest total error/);
    expect(summary).toMatch(/; 1 dropped point of another model than the lines' left out of these figures \(the table compares it with/);
    const cells = await p.$$eval('#replay-table tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)));
    expect(cells.find((c) => c[0] === 'other.csv')![1]).toBe('the lines: another model');
    await drop(p, { name: 'same.csv', mimeType: 'text/csv', buffer: Buffer.from(csv(1)) });
    expect(await p.textContent('#replay-summary')).toMatch(/; 1 dropped point: largest total error \d+\.\d%.*; 1 dropped point of another model/);
    await p.close();
  });

  it('charts for keyboards and screen readers: a label and a summary, arrow keys pick a point, errors polite not alerts', async () => {
    const p = await open();
    expect(await p.$$('[role="alert"]')).toEqual([]);
    for (const id of ['planner-error', 'cp-error', 'advisor-error', 'replay-error']) expect(await p.getAttribute(`#${id}`, 'aria-live'), id).toBe('polite');
    for (const [id, summary] of [['planner-chart', 'planner-oom'], ['replay-chart', 'replay-summary']]) {
      const c = await p.$eval(`#${id}`, (el) => ({ label: el.getAttribute('aria-label'), described: el.getAttribute('aria-describedby'), tab: (el as HTMLElement).tabIndex }));
      expect(c.label, id).toMatch(/^Chart: .*Peak memory per GPU \(GiB\) against sequence length/);
      expect(c.described!.split(' '), id).toContain(summary);
      expect(c.tab, id).toBe(0);
    }
    expect(await p.getAttribute('#planner-chart', 'aria-label')).toMatch(/seed-32L-4096h, Megatron-LM: 32 layers/);
    await p.focus('#planner-chart');
    const tip = () => p.evaluate(() => (window as unknown as { __flashring: { plannerChart: { tooltip(): string[] } } }).__flashring.plannerChart.tooltip());
    await p.keyboard.press('ArrowRight');
    expect(await p.textContent('#planner-chart-point')).toMatch(/^CP=1, 4K tokens: \d/);
    await p.keyboard.press('ArrowRight');
    await p.keyboard.press('ArrowDown');
    const said = (await p.textContent('#planner-chart-point'))!;
    expect(said).toMatch(/^CP=1 \+ recompute, 8K tokens: .*; weights\+grads\+Adam/);
    expect((await tip()).join('; ')).toBe(said);
    expect(await p.textContent('#planner-time')).toMatch(/^CP=1 \+ recompute at 8K tokens: /);
    await p.keyboard.press('End');
    expect(await p.textContent('#planner-chart-point')).toMatch(/^CP=1 \+ recompute, 512K tokens: .* — does not fit/); // the line's last point: its cross
    // Escape, or focus leaving the chart, hides the tooltip.
    await p.keyboard.press('Escape');
    expect(await tip()).toEqual([]);
    await p.keyboard.press('ArrowLeft');
    expect((await tip()).length).toBeGreaterThan(0);
    await p.keyboard.press('Tab');
    expect(await tip()).toEqual([]);
    // A freshly drawn chart: End acts on the first press (the first line's last point), not a press to pick a point first.
    await p.fill('input[name=tp]', '4');
    await p.focus('#planner-chart');
    await p.keyboard.press('End');
    expect(await p.textContent('#planner-chart-point')).toMatch(/^CP=1, 64K tokens: .* — does not fit/); // its last point (was its first, 4K)
    // The replay chart: its measured points too.
    await p.focus('#replay-chart');
    await p.keyboard.press('ArrowUp');
    await p.keyboard.press('ArrowUp');
    expect(await p.textContent('#replay-chart-point')).toMatch(/^measured .*tokens: /);
    await p.close();
  });

  it('a line hidden from the legend is not stepped to by the keyboard (its tooltip showed a point not drawn)', async () => {
    const p = await open('preset=llama3-8b');
    type Legend = { items: { text: string; hidden: boolean; box: { left: number; top: number; width: number; height: number } }[] };
    const { items } = (await p.evaluate(() => (window as unknown as { __flashring: { plannerChart: { legend(): Legend } } }).__flashring.plannerChart.legend()));
    const box = items.find((i) => i.text === 'CP=1')!.box;
    const r = await p.$eval('#planner-chart', (e) => { const b = e.getBoundingClientRect(); return { x: b.left, y: b.top, k: b.width / (e as HTMLCanvasElement).width }; });
    await p.mouse.click(r.x + (box.left + box.width / 2) * r.k, r.y + (box.top + box.height / 2) * r.k);
    // Chart.js handles the click on its next animation frame: the line is hidden only then (pressing a key before raced it)
    await p.waitForFunction(() => (window as unknown as { __flashring: { plannerChart: { legend(): Legend } } }).__flashring.plannerChart.legend().items.find((i) => i.text === 'CP=1')?.hidden === true);
    await p.focus('#planner-chart');
    await p.keyboard.press('ArrowRight');
    expect(await p.textContent('#planner-chart-point')).toMatch(/^CP=1 \+ recompute, 4K tokens: /);
    await p.keyboard.press('ArrowUp');
    expect(await p.textContent('#planner-chart-point')).toMatch(/^CP=4 \+ recompute, 4K tokens: /);
    await p.keyboard.press('ArrowDown');
    expect(await p.textContent('#planner-chart-point')).toMatch(/^CP=1 \+ recompute, 4K tokens: /);
    await p.close();
  });

  it('each chart\'s numbers as a table (its aria-details): a row per length, a column per series, GiB, what does not fit said in words; none from bad input', async () => {
    const p = await open();
    const table = (id: string) => p.$eval(`#${id}`, (c) => {
      const t = document.getElementById(c.getAttribute('aria-details') ?? '')?.querySelector('table');
      return t ? { caption: t.caption?.textContent ?? '', head: Array.from(t.tHead?.rows[0]?.cells ?? [], (x) => x.textContent), rows: Array.from(t.tBodies[0]?.rows ?? [], (r) => Array.from(r.cells, (x) => x.textContent)) } : null;
    });
    const t = (await table('planner-chart'))!;
    expect(t.caption).toMatch(/peak memory per GPU \(GiB\).*HBM 80 GiB/i);
    expect(t.head).toEqual(['tokens', 'CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']);
    expect(t.rows.map((r) => r[0])).toEqual(['4K', '8K', '16K', '32K', '64K', '128K', '256K', '512K', '1M']);
    // The cell is the figure the chart's point says (the keyboard's line), and a point past the HBM says so in words.
    await p.focus('#planner-chart');
    await p.keyboard.press('ArrowRight');
    const said = /^CP=1, 4K tokens: ([\d.]+) GiB/.exec((await p.textContent('#planner-chart-point'))!)![1];
    expect(t.rows[0][1]).toBe(said);
    expect(t.rows[5][1]).toMatch(/^[\d.]+ \(does not fit\)$/);
    const replay = (await table('replay-chart'))!;
    expect(replay.head.filter((h) => /^measured: /.test(h!)).length).toBeGreaterThan(0);
    // Two runs of one series at a length (recompute or not) each say their setup; a run out of memory says so.
    expect(replay.rows.flat().some((c) => /^out of memory \[CP=\d+, TP=\d+, recompute=\w+\], /.test(c!))).toBe(true);
    await p.fill('input[name=tp]', '0');
    expect(await table('planner-chart')).toMatchObject({ rows: [] });
    await p.close();
  });

  it('the drop zones\' file inputs are named for what they take (each was a bare "Choose File" button)', async () => {
    const p = await open();
    expect(await p.getByRole('button', { name: /Megatron-LM logs or activation_memory\.csv files/ }).count()).toBe(1);
    expect(await p.getByRole('button', { name: /timeline JSON/ }).count()).toBe(1);
    await p.close();
  });

  it('a link\'s keys the page does not know (a misspelt TP=4) are named at the top, not dropped silently', async () => {
    const p = await open('TP=4&tp=2&foo=1&advisor');
    expect(await p.textContent('#view-note')).toBe('This link\'s TP=4, foo=1, advisor are not keys of a view the page knows: left out.');
    expect(await p.inputValue('input[name=tp]')).toBe('2');
    await p.goto(`${server!.url}#preset=nope&tP=4`);
    await p.waitForFunction(() => /tP=4/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await p.textContent('#view-note')).toBe('This link\'s preset=nope is not a value the page knows: set aside, the default shown instead (preset=seed-32L-4096h). Its tP=4 is not a key of a view the page knows: left out.');
    await p.close();
  });

  it('Enter in a form of one field (the replay\'s HBM) does not submit it: the page stayed, its dropped files with it (it reloaded with ?rhbm=…)', async () => {
    const p = await open();
    await p.evaluate(() => {
      const w = window as unknown as { submits: string[] };
      w.submits = [];
      for (const f of Array.from(document.forms)) f.addEventListener('submit', (e) => w.submits.push(`${f.id}: ${e.defaultPrevented ? 'prevented' : 'sent'}`));
    });
    await p.press('#replay-hbm', 'Enter');
    await p.waitForFunction(() => (window as unknown as { submits?: string[] }).submits?.length);
    expect(await p.evaluate(() => (window as unknown as { submits: string[] }).submits)).toEqual(['replay-form: prevented']);
    expect(await p.evaluate(() => location.search)).toBe('');
    await p.close();
  });

  it('the model\'s own refusals (MLP width over TP, MoE with TP but no SP, EP over DP × CP) are said beside the control they are about, not under the form alone', async () => {
    const p = await open('preset=llama3-8b&ffn=14337&tp=8');
    const want = "MLP width 14337 is not divisible by TP 8 (Megatron-LM splits the MLP's width over the TP ranks and refuses it)";
    expect(await p.textContent('#planner-error')).toBe(want);
    expect(await fieldMarks(p, '#planner-form')).toEqual([{ name: 'ffn', message: want }]);
    await p.fill('input[name=ffn]', '14336');
    expect(await fieldMarks(p, '#planner-form')).toEqual([]);
    await p.fill('input[name=experts]', '8');
    await p.uncheck('input[name=sp]');
    expect((await fieldMarks(p, '#planner-form')).map((m) => m.name)).toEqual(['sp']);
    expect(await p.textContent('#planner-error')).toMatch(/^Megatron-LM trains MoE layers with tensor parallelism only with sequence parallel: add it/);
    await p.check('input[name=sp]');
    await p.fill('input[name=dp]', '1');
    await p.fill('input[name=ep]', '8');
    expect((await fieldMarks(p, '#planner-form')).map((m) => m.name)).toEqual(['ep']);
    await p.close();
  });

  it("unfused GeLU, the router's score function and the expert bias: each gives flashring memory's bytes and step time for the same flags, kept in the link", async () => {
    const p = await open('preset=seed-32L-4096h&lines=1&seqs=4096');
    const bytes = async () => (await hooks<{ totalBytes: Record<string, number> }>(p, 'planner')).totalBytes['CP=1|4096'];
    const step = async () => /predicted step ([^,]+),/.exec((await p.textContent('#planner-time'))!)?.[1];
    /** flashring memory's flags so far (src/cli/memory.ts configFromFlags): the page's figures against the model's for them. */
    const cli: Record<string, string | boolean> = { preset: 'seed-32L-4096h', 'seq-length': '4096', 'tensor-model-parallel-size': '8', 'sequence-parallel': true };
    const asCli = async (more: Record<string, string | boolean>) => {
      Object.assign(cli, more);
      const { model, par } = configFromFlags(cli);
      expect((await plannerOf(p)).error, JSON.stringify(more)).toBeUndefined();
      expect(await bytes(), JSON.stringify(more)).toBe(memoryBreakdown(model, par).totalBytes);
      expect(await step(), JSON.stringify(more)).toBe(duration(layoutTime(model, par).time.iterMs));
      return { model, par };
    };
    // The seed is GeLU with linear biases: unfused, the same tensors kept (the same bytes) and a slower step, as the CLI's.
    expect([await p.isDisabled('input[name=unfused]'), await p.isDisabled('input[name=unfusedgelu]')]).toEqual([true, false]);
    await asCli({});
    const fused = [await bytes(), await step()];
    await p.check('input[name=unfusedgelu]');
    await asCli({ 'no-bias-gelu-fusion': true });
    expect(await bytes()).toBe(fused[0]);
    expect(await step()).not.toBe(fused[1]);
    // MoE with linear biases: untrainable fused; at TP 1 with EP 2 the unfused GeLU has a path, and the page's note goes as the CLI's does.
    expect([await p.isDisabled('select[name=score]'), await p.isDisabled('input[name=expertbias]')]).toEqual([true, true]);
    await p.fill('input[name=experts]', '8');
    await p.fill('input[name=tp]', '1');
    await p.fill('input[name=dp]', '2');
    await p.fill('input[name=ep]', '2');
    const moe = await asCli({ 'num-experts': '8', 'tensor-model-parallel-size': '1', 'data-parallel-size': '2', 'expert-model-parallel-size': '2' });
    expect(untrainable(moe.model, moe.par)).toBeNull();
    expect((await plannerOf(p)).notes).not.toMatch(/cannot train routed experts/);
    await p.uncheck('input[name=unfusedgelu]');
    delete cli['no-bias-gelu-fusion'];
    const fusedMoe = await asCli({});
    expect(untrainable(fusedMoe.model, fusedMoe.par)).toBe(MOE_EXPERT_BIASES);
    expect((await plannerOf(p)).notes).toMatch(/cannot train routed experts with linear biases/);
    // The score function: the router keeps as much for each (the same bytes); the expert bias adds its buffers (kilobytes).
    const softmax = await bytes();
    await p.selectOption('select[name=score]', 'sigmoid');
    await asCli({ 'moe-router-score-function': 'sigmoid' });
    expect(await bytes()).toBe(softmax);
    await p.check('input[name=expertbias]');
    await asCli({ 'moe-router-enable-expert-bias': true });
    expect(await bytes()).toBeGreaterThan(softmax);
    expect(await p.textContent('#planner-breakdown')).toContain('router expert bias (fp32) and tokens per expert (bf16)');
    const q = await viewHash(p);
    expect(['unfusedgelu', 'score', 'expertbias'].map((k) => q.get(k))).toEqual(['0', 'sigmoid', '1']);
    await p.reload();
    await pageReady(p);
    expect([await p.isChecked('input[name=unfusedgelu]'), await p.inputValue('select[name=score]'), await p.isChecked('input[name=expertbias]')]).toEqual([false, 'sigmoid', true]);
    expect(await bytes()).toBe(memoryBreakdown(configFromFlags(cli).model, configFromFlags(cli).par).totalBytes);
    // SwiGLU reads its own box: the GeLU one is greyed.
    await p.check('input[name=swiglu]');
    expect([await p.isDisabled('input[name=unfused]'), await p.isDisabled('input[name=unfusedgelu]')]).toEqual([false, true]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it("the token dispatcher (--moe-token-dispatcher-type): Megatron-LM's default first, greyed on a dense model, each giving flashring memory's step time for the same flags, kept in the link", async () => {
    const p = await open('preset=seed-32L-4096h&lines=1&seqs=4096&nobias=1&dp=4&ep=4');
    const step = async () => /predicted step ([^,]+),/.exec((await p.textContent('#planner-time'))!)?.[1];
    expect([await p.isDisabled('select[name=dispatcher]'), await p.inputValue('select[name=dispatcher]')]).toEqual([true, 'allgather']);
    await p.fill('input[name=experts]', '8');
    expect(await p.isDisabled('select[name=dispatcher]')).toBe(false);
    const cli = { preset: 'seed-32L-4096h', 'seq-length': '4096', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'disable-bias-linear': true,
      'num-experts': '8', 'data-parallel-size': '4', 'expert-model-parallel-size': '4' };
    const steps: Record<string, string | undefined> = {};
    // Megatron-LM's default, allgather (TransformerConfig.moe_token_dispatcher_type, transformer_config.py:891): the CLI without the flag.
    expect(await step()).toBe(duration(layoutTime(configFromFlags(cli).model, configFromFlags(cli).par).time.iterMs));
    for (const d of ['alltoall', 'flex', 'allgather']) {
      await p.selectOption('select[name=dispatcher]', d);
      const { model, par } = configFromFlags({ ...cli, 'moe-token-dispatcher-type': d });
      expect((await plannerOf(p)).error, d).toBeUndefined();
      expect(await hooks<{ totalBytes: Record<string, number> }>(p, 'planner').then((x) => x.totalBytes['CP=1|4096']), d).toBe(memoryBreakdown(model, par).totalBytes);
      steps[d] = await step();
      expect(steps[d], d).toBe(duration(layoutTime(model, par).time.iterMs));
    }
    // At EP 4 and TP 8 the three exchanges differ, and the page says each.
    expect(new Set(Object.values(steps)).size).toBe(3);
    await p.selectOption('select[name=dispatcher]', 'flex');
    expect((await viewHash(p)).get('dispatcher')).toBe('flex');
    await p.reload();
    await pageReady(p);
    expect([await p.inputValue('select[name=dispatcher]'), await step()]).toEqual(['flex', steps.flex]);
    // A value it does not have is set aside for the default, and said.
    await p.evaluate(() => { location.hash = 'preset=seed-32L-4096h&lines=1&seqs=4096&nobias=1&experts=8&dp=4&ep=4&dispatcher=deepep'; });
    await p.waitForFunction(() => /dispatcher=deepep/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await p.textContent('#view-note')).toContain("This link's dispatcher=deepep is not a value the page knows: set aside, the default shown instead (dispatcher=allgather).");
    expect([await p.inputValue('select[name=dispatcher]'), await step()]).toEqual(['allgather', steps.allgather]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it('the expert bias with the softmax score function is refused beside the expert bias, as the model (and so the CLI) refuses it', async () => {
    const flags = { preset: 'seed-32L-4096h', 'seq-length': '4096', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'disable-bias-linear': true, 'num-experts': '8', 'moe-router-enable-expert-bias': true };
    expect(() => configFromFlags(flags)).toThrow("Megatron-LM refuses --moe-router-enable-expert-bias with the softmax score function (TransformerConfig): add --moe-router-score-function sigmoid (or sqrtsoftplus), or leave out --moe-router-enable-expert-bias");
    const p = await open('preset=seed-32L-4096h&lines=1&seqs=4096&nobias=1&experts=8&score=sqrtsoftplus&expertbias=1');
    expect(await p.textContent('#planner-error')).toBe('');
    expect((await plannerOf(p)).lines).toEqual(['CP=1', 'HBM 80 GiB']);
    await p.selectOption('select[name=score]', 'softmax');
    const want = "Megatron-LM refuses 'expert bias' with the softmax score function (TransformerConfig): add score function sigmoid (or sqrtsoftplus), or leave out 'expert bias'";
    expect(await p.textContent('#planner-error')).toBe(want);
    expect(await fieldMarks(p, '#planner-form')).toEqual([{ name: 'expertbias', message: want }]);
    expect((await plannerOf(p)).lines).toEqual([]);
    // A link that asks for it: refused at the top with the link's key.
    await p.evaluate(() => { location.hash = 'preset=seed-32L-4096h&lines=1&seqs=4096&nobias=1&experts=8&expertbias=1'; });
    await p.waitForFunction(() => /expertbias=1/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await p.textContent('#view-note')).toBe(`This link's expertbias=1 is refused: ${want}.`);
    await p.uncheck('input[name=expertbias]');
    expect([await p.textContent('#planner-error'), await fieldMarks(p, '#planner-form')]).toEqual(['', []]);
    await p.close();
    expect(consoleErrors).toEqual([]);
  });

  it('a shared link\'s value a field cannot hold (tp=abc) is set aside and named at the top with what shows instead; one the planner refuses (tp=3) is named at the top with why', async () => {
    // tp=abc: a number field empties it, and the planner said "TP … (it is empty or not a number)" beside an empty TP, the top line nothing.
    const p = await open('tp=abc&cpr=x&agpus=1e&rcn=two&hbm=80');
    expect(await p.textContent('#view-note')).toBe("This link's tp=abc, rcn=two, cpr=x, agpus=1e are not values the page knows: set aside, the defaults shown instead (tp=8, rcn=1, cpr=4, agpus=8).");
    expect(await Promise.all(['tp', 'rcn', 'hbm'].map((n) => p.inputValue(`#planner-form [name=${n}]`)))).toEqual(['8', '1', '80']);
    expect(await p.textContent('#planner-error')).toBe('');
    expect((await plannerOf(p)).lines.length).toBeGreaterThan(0);
    expect((await viewHash(p)).get('tp')).toBe('8');
    // A number the model refuses stays in its field (the user sees what the link said) and the top line names it with why.
    await p.evaluate(() => { location.hash = 'tp=3&cpr=0'; });
    await p.waitForFunction(() => /tp=3/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await p.textContent('#view-note')).toBe("This link's tp=3 is refused: Heads (32) must be divisible by TP (3).");
    expect(await p.inputValue('#planner-form [name=tp]')).toBe('3');
    // A refusal of the link's combination, not of a field it gave (heads=12 against the hidden size of the preset): the view's.
    await p.evaluate(() => { location.hash = 'preset=seed-32L-4096h&heads=12'; });
    await p.waitForFunction(() => /heads=12/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await p.textContent('#view-note')).toBe("This link's heads=12 is refused: Hidden size (4096) must be divisible by heads (12).");
    // The CP panel's and the advisor's refusals too.
    await p.evaluate(() => { location.hash = 'cpr=300&agpus=12'; });
    await p.waitForFunction(() => /cpr=300/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await p.textContent('#view-note')).toBe("This link's cpr=300 is refused: CP size can be at most 256 (it is 300). This link's agpus=12 is refused: GPUs (12) must be whole nodes of 8 beyond one node, as Megatron-LM runs them: 8 or 16.");
    await p.close();
  });
});

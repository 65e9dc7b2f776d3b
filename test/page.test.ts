/**
 * The built page in real headless Chromium (Debian's chromium through playwright-core, WebGPU on
 * SwiftShader): loads without console errors, the planner draws its five lines and the OOM
 * markers, a small live ring run completes within tolerance, the scheme and link pickers run the
 * ring in one-device mode with a predicted timeline, the planner's CP scheme panel, dropped
 * timelines of both versions (each step named on the chart and in its tooltip), a dropped
 * Megatron-LM log adds points, the advisor panel (its inputs, its top choice against `flashring
 * advise`, bad input, its search once typing pauses and never an older input's results, its table
 * within the panel's width), errors beside the fields they are about, the planner's knobs beyond
 * the model's shape and each point's predicted step time in a compact tooltip, and a screenshot is
 * saved under test-output/ for people to look at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { type PageHarness, hooks, openPage, pageReady, pngPixels, startPage, viewHash } from './page-harness.js';
import { ringAttention } from '../src/cp/launch/ringAttention.js';
import { LINKS } from '../src/cp/plan/linkModel.js';
import { randn } from '../src/reference/compare.js';
import { testDevice } from './gpu.js';
import { spawnSync } from 'node:child_process';
import { CP_COMM_TYPES, GIB, memoryBreakdown } from '../src/memory/model.js';
import { layoutConfig, layoutTime, recomputeCost } from '../src/memory/advise.js';
import { MLP_RECOMPUTE_WITH_BIAS } from '../src/memory/untrainable.js';

/** The same reason in the page's words: the CLI's flag becomes the planner's knob. */
const MLP_RECOMPUTE_WITH_BIAS_PAGE = MLP_RECOMPUTE_WITH_BIAS.replace('add --disable-bias-linear', "add 'no linear biases'");
import { configFromFlags } from '../src/cli/memory.js';
import { H200, timeCheckedLines } from '../src/memory/time/devices.js';
import { duration } from '../web/format.js';

let server: PageHarness | null = null;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const out = join(__dirname, '..', 'test-output');

beforeAll(async () => {
  server = await startPage('test-output/dist');
  browser = server.browser;
  page = await openPage(server, consoleErrors);
}, 120_000);

afterAll(async () => {
  await server?.close();
});

/** The live form's number fields (by name) and, if given, its precision. */
async function liveForm(p: Page, fields: Record<string, string>, precision?: 'f32' | 'f16'): Promise<void> {
  for (const [k, v] of Object.entries(fields)) await p.fill(`#live-form input[name=${k}]`, v);
  if (precision) await p.selectOption('#live-form select[name=precision]', precision);
}

describe('the page in headless Chromium', () => {
  it('loads with no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });

  it('the planner draws the five default lines, the HBM limit and OOM markers', async () => {
    const p = await hooks<{ lines: string[]; oomMarkers: number; oom: Record<string, number | null> }>(page, 'planner');
    expect(p.lines.slice(0, 5)).toEqual(['CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']);
    expect(p.lines).toContain('HBM 80 GiB');
    // a cross on each line that stops fitting before 1M tokens: all five on the seed (its learned position table, whole on
    // every TP rank, stops even CP=4 + recompute at 512K)
    const stops = Object.values(p.oom).filter((v) => v !== 1048576).length;
    expect(stops).toBe(5);
    expect(p.oom['CP=4 + recompute']).toBe(524288);   // its longest that fits
    expect(p.oomMarkers).toBe(stops);
  });

  it('the view lives in the URL: a changed knob survives a reload', async () => {
    await page.fill('input[name=tp]', '4');
    await page.dispatchEvent('input[name=tp]', 'input');
    expect((await viewHash(page)).get('tp')).toBe('4');
    await page.reload();
    await pageReady(page);
    expect(await page.inputValue('input[name=tp]')).toBe('4');
    await page.fill('input[name=tp]', '8');
    await page.dispatchEvent('input[name=tp]', 'input');
  });

  it('replay shows the shipped measured dataset; a dropped Megatron-LM log adds a point; a bad file is named', async () => {
    const before = await hooks<{ measuredPoints: number }>(page, 'replay');
    expect(before.measuredPoints).toBeGreaterThan(10);
    // The shipped points' hardware, source by source (12 on one H200, 16 with CP on two; it once named the first source only).
    expect(await page.textContent('#replay-about')).toMatch(/measured: 12 on [^;]*single GPU, 1x NVIDIA H200[^;]*; 16 on [^;]*2x NVIDIA H200/);
    await page.setInputFiles('#replay-files', join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log'));
    await page.waitForFunction((n) => (window as unknown as { __flashring: { replay: { measuredPoints: number } } }).__flashring.replay.measuredPoints > n, before.measuredPoints);
    await page.setInputFiles('#replay-files', { name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from('foo,bar\n1,2\n') });
    await page.waitForSelector('#replay-messages li.bad');
    expect(await page.textContent('#replay-messages li.bad')).toMatch(/broken\.csv: could not be read .*missing column/);
    // The page's own export (the model's rows) and a ring timeline are not measurements: named, nothing added.
    const exported = 'seq_len,tp,cp,pp,sp,recompute,micro_batch,activation_gib,total_gib,fits,source\n4096,1,1,1,false,none,1,20,137,false,model\n';
    await page.setInputFiles('#replay-files', { name: 'export.csv', mimeType: 'text/csv', buffer: Buffer.from(exported) });
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#replay-messages li.bad')).some((li) => /export\.csv/.test(li.textContent ?? '')));
    await page.setInputFiles('#replay-files', { name: 't.json', mimeType: 'application/json', buffer: Buffer.from('{"kind":"flashring.timeline","R":2}') });
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#replay-messages li.bad')).some((li) => /t\.json/.test(li.textContent ?? '')));
    await page.setInputFiles('#replay-files', { name: 'q.npy', mimeType: 'application/octet-stream', buffer: Buffer.concat([Buffer.from([0x93]), Buffer.from('NUMPY\x01\x00')]) });
    await page.waitForFunction(() => Array.from(document.querySelectorAll('#replay-messages li.bad')).some((li) => /q\.npy/.test(li.textContent ?? '')));
    const bad = await page.$$eval('#replay-messages li.bad', (lis) => lis.map((li) => li.textContent ?? ''));
    expect(bad.join('\n')).toMatch(/q\.npy: could not be read — it is a tensor file \(a NumPy \.npy array\), not a log or CSV; replay takes/);
    expect(bad.join('\n')).toMatch(/export\.csv: could not be read — export\.csv holds the model's own output \(source 'model'/);
    expect(bad.join('\n')).toMatch(/t\.json: could not be read — it is a ring timeline \(drop it on the live ring panel's timeline input\); replay takes Megatron-LM training logs and activation_memory\.csv files/);
    const after = await hooks<{ measuredPoints: number }>(page, 'replay');
    expect(after.measuredPoints).toBe(before.measuredPoints + 1);
    // A log that sets what the model does not take (FP8): its model figure shown, no error and no verdict taken, and said
    // (as replay --compare; the page compared it silently).
    const fp8 = readFileSync('bench/results/2026-12-02-megatron-campaign/runs/r00.log', 'utf8').replace(/^( {2}fp8 \.+) None$/m, '$1 e4m3');
    await page.setInputFiles('#replay-files', { name: 'r00-fp8.log', mimeType: 'text/plain', buffer: Buffer.from(fp8) });
    await page.waitForFunction(() => /not compared/.test(document.getElementById('replay-summary')!.textContent ?? ''));
    const row = await page.$$eval('#replay-table tr', (trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells).map((c) => [c.textContent ?? '', c.title])).find((cells) => cells[0][0] === 'r00-fp8.log'));
    expect(row![8]).toEqual(['not comparable', 'not modelled: --fp8-format e4m3']);
    expect(row![13][0]).toBe('unknown');
    expect(await page.textContent('#replay-summary')).toMatch(/dropped points?: .*\(1 point not compared: its log sets what the model does not take\)/);
    // A log that ran out of memory because other processes held the GPU (120.65 GiB beside its 18.99): no wrong verdict, counted apart (as replay --compare).
    const shared = readFileSync('bench/results/memory-h200-2026-12-01/megatron-failed/A-s16384-none.log', 'utf8');
    await page.setInputFiles('#replay-files', { name: 'A-s16384-none.log', mimeType: 'text/plain', buffer: Buffer.from(shared) });
    await page.waitForFunction(() => /other processes held the GPU/.test(document.getElementById('replay-summary')!.textContent ?? ''));
    const oomRow = await page.$$eval('#replay-table tr', (trs) => trs.map((tr) => Array.from((tr as HTMLTableRowElement).cells).map((c) => c.textContent ?? '')).find((cells) => cells[0] === 'A-s16384-none.log'));
    // Its log fell back to torch.optim.AdamW: the step's temporary in its own column, as replay --compare's (0.37 GiB), not in the activations'.
    expect([oomRow![6], oomRow![12], oomRow![13]]).toEqual(['OOM (other processes)', '0.4', 'not a verdict: other processes held 120.7 GiB']);
    expect(await page.textContent('#replay-summary')).toMatch(/dropped points?: [^;]*0 wrong out-of-memory verdicts .*\(1 point out of memory because other processes held the GPU: not a verdict\)/);
  });

  /** A form's fields marked invalid: each one's name, the message beside it (its label's .field-error) and whether aria-describedby points there. */
  const fieldMarks = (p: Page, form: string) => p.$$eval(`${form} [aria-invalid="true"]`, (els) => els.map((e) => {
    const id = e.getAttribute('aria-describedby'), note = id ? document.getElementById(id) : null;
    return { name: (e as HTMLInputElement).name || e.className, message: note?.textContent ?? null, describedBy: !!note && note.classList.contains('field-error') && !!e.closest('label')?.contains(note) };
  }));
  const plannerOf = (p: Page) => hooks<{ lines: string[]; oom: Record<string, number | null>; notes?: string; error?: string }>(p, 'planner');
  /** A planner field set to a bad value: the page's words (a string: exactly; a pattern: matching), nothing drawn; the old value back clears it. */
  const refusedThenRestored = async (p: Page, sel: string, value: string, want: string | RegExp) => {
    const old = await p.inputValue(sel);
    await p.fill(sel, value);
    const msg = await p.textContent('#planner-error');
    if (typeof want === 'string') expect(msg).toBe(want);
    else expect(msg).toMatch(want);
    expect((await plannerOf(p)).lines).toEqual([]);
    await p.fill(sel, old);
    expect(await p.textContent('#planner-error')).toBe('');
  };
  /** Moves the mouse onto a drawn point of the planner and returns the tooltip's lines. */
  const hoverPlanner = async (p: Page, label: string, x: number) => {
    const at = await p.evaluate(([l, v]) => (window as unknown as { __flashring: { plannerChart: { pointAt(l: string, x: number): { x: number; y: number } | null } } })
      .__flashring.plannerChart.pointAt(l as string, v as number), [label, x] as const);
    expect(at, `${label} at ${x}`).not.toBeNull();
    await p.mouse.move(0, 0);
    await p.mouse.move(at!.x, at!.y);
    await p.waitForFunction(() => (window as unknown as { __flashring: { plannerChart: { tooltip(): string[] } } }).__flashring.plannerChart.tooltip().length > 2);
    return p.evaluate(() => (window as unknown as { __flashring: { plannerChart: { tooltip(): string[] } } }).__flashring.plannerChart.tooltip().join('\n'));
  };

  it('the hover is a compact tooltip (the point, its memory in one line, its step time) and shows the point\'s whole breakdown under the chart', async () => {
    const tip = await hoverPlanner(page, 'CP=1', 4096);
    expect(tip).toMatch(/^CP=1, 4K tokens: [\d.]+ GiB\n/);
    const mem = /^weights\+grads\+Adam ([\d.]+) · activations ([\d.]+) · transient ([\d.]+) · other ([\d.]+) GiB$/m.exec(tip);
    expect(mem, tip).not.toBeNull();
    // Three significant digits each: they add up to the total to rounding (other: the Megatron-LM stack's two 32 MiB cuBLAS workspaces).
    expect(Number(mem![4])).toBe(0.0625);
    expect(Math.abs(Number(mem![1]) + Number(mem![2]) + Number(mem![3]) + Number(mem![4]) - Number(/([\d.]+) GiB/.exec(tip)![1]))).toBeLessThan(0.3);
    expect(tip).toMatch(/^step [\d.]+ (ms|s) · [\d.]+ TFLOP\/s per GPU · comm [\d.]+%$/m);
    // Small: a few short lines in 11 px type, well inside the chart.
    const lines = tip.split('\n');
    expect(lines.length).toBeLessThanOrEqual(5);
    for (const l of lines) expect(l.length, l).toBeLessThanOrEqual(80);
    const size = await page.evaluate(() => (window as unknown as { __flashring: { plannerChart: { tooltipSize(): { width: number; height: number; font: number; chart: { width: number; height: number } } } } }).__flashring.plannerChart.tooltipSize());
    expect(size.font).toBe(11);
    expect(size.width).toBeLessThan(size.chart.width / 2);
    expect(size.height).toBeLessThan(size.chart.height / 5);
    // The whole breakdown of the hovered point: weights, gradients, optimizer, stored parts, the terms outside the layers, the peak transient.
    const table = (await page.textContent('#planner-breakdown'))!;
    expect(table).toMatch(/^CP=1 at 4K tokens: [\d.]+ GiB per GPU, fits in 80 GiB, [\d.]+ GiB spare \(Megatron-LM stack/);
    for (const t of ['weights (bf16)', 'gradients (fp32)', 'optimizer state', 'cuBLAS workspaces', 'stored layers (32)', 'LayerNorm', 'attention', 'MLP',
      'input ids (and labels)', 'embedding dropout mask', 'final LayerNorm input', 'output layer input', 'cross-entropy fp32 softmax (vocab-parallel)', 'peak transient: cross-entropy backward: bf16 logits gradient'])
      expect(table).toContain(t);
    expect(table).toContain('4·s·b·V/t'); // the cross-entropy's formula
    // PyTorch AMP: fp32 weights, DDP's buckets once CP > 1, PyTorch's cross-entropy.
    const tpWas = await page.inputValue('input[name=tp]');
    await page.selectOption('select[name=stack]', 'torch-amp');
    expect(await page.isChecked('input[name=fp32]')).toBe(true);
    expect(await page.isDisabled('input[name=fp32]')).toBe(true);
    // Megatron-LM's TP, PP, distributed optimizer and CP comm type: held at 1 / off / p2p (the harness has none).
    expect([await page.inputValue('input[name=tp]'), await page.inputValue('input[name=pp]'), await page.inputValue('select[name=cpcomm]')]).toEqual(['1', '1', 'p2p']);
    expect(await page.isDisabled('input[name=tp]')).toBe(true);
    // A reload keeps what Megatron-LM's fields held (the hash holds them, not the fixed 1).
    await page.reload();
    await pageReady(page);
    expect(await page.inputValue('select[name=stack]')).toBe('torch-amp');
    expect([await page.inputValue('input[name=tp]'), await page.isDisabled('input[name=tp]')]).toEqual(['1', true]);
    expect((await viewHash(page)).get('stack')).toBe('torch-amp');
    expect(await hoverPlanner(page, 'CP=2', 4096)).toMatch(/^CP=2, 4K tokens: [\d.]+ GiB( — does not fit)?\nweights\+grads\+Adam /);
    const ampTable = (await page.textContent('#planner-breakdown'))!;
    expect(ampTable).toMatch(/^CP=2 at 4K tokens: .*PyTorch AMP stack/);
    for (const t of ['weights (fp32)', 'gradients (fp32)', 'optimizer state', 'DDP gradient buckets', 'cross-entropy fp32 log-softmax', 'autocast bf16 weight copies']) expect(ampTable).toContain(t);
    await page.selectOption('select[name=stack]', 'megatron');
    expect(await page.isChecked('input[name=fp32]')).toBe(false);
    expect(await page.inputValue('input[name=tp]'), 'TP comes back with Megatron-LM').toBe(tpWas);
    expect(await page.isDisabled('input[name=tp]')).toBe(false);
    await hoverPlanner(page, 'CP=1', 4096);
    expect(await page.textContent('#planner-breakdown')).toContain('weights (bf16)');
  });

  it('SwiGLU toggled: an MLP width at the default follows Megatron-LM\'s (4h ↔ ⌊(4h·2/3)/64⌋·64); a width typed in stays', async () => {
    const ffn = () => page.inputValue('input[name=ffn]');
    const hidden = Number(await page.inputValue('input[name=hidden]')), was = await ffn(), swiglu = await page.isChecked('input[name=swiglu]');
    expect(swiglu).toBe(false);
    expect(was).toBe(String(4 * hidden));
    await page.check('input[name=swiglu]');
    expect(await ffn()).toBe(String(Math.floor((4 * hidden * 2) / 3 / 64) * 64));
    await page.uncheck('input[name=swiglu]');
    expect(await ffn()).toBe(was);
    await page.fill('input[name=ffn]', '12000');
    await page.check('input[name=swiglu]');
    expect(await ffn()).toBe('12000');
    await page.uncheck('input[name=swiglu]');
    await page.fill('input[name=ffn]', was);
    await page.dispatchEvent('input[name=ffn]', 'input');
  });

  it('the lines default to the model\'s "+ recompute" (full layers on the seed, with linear biases; core_attn+mlp without); the recompute controls rewrite every recomputing line', async () => {
    expect(await page.inputValue('input[name=lines]')).toBe('1,1:recompute,2,4,4:recompute');
    expect(await page.textContent('#recompute-why')).toMatch(/core_attn\+mlp, or full layers/);
    // the seed preset has linear biases: Megatron-LM cannot train the MLP's selective recompute there
    expect([await page.inputValue('select[name=rc]'), await page.inputValue('select[name=rcmethod]'), await page.inputValue('input[name=rcn]')]).toEqual(['full', 'uniform', '1']);
    const before = await plannerOf(page);
    expect(before.oom['CP=1 + recompute']!).toBeGreaterThan(before.oom['CP=1']!); // it moves memory
    expect(before.notes).toMatch(/^"\+ recompute" recomputes every layer \(full:uniform\/1\): Megatron-LM cannot train the MLP's selective recompute with this model's linear biases/);
    expect(before.notes).not.toMatch(/the memory such a step would need/);
    // without linear biases the same lines recompute core_attn + mlp, and say nothing against it
    await page.check('input[name=nobias]');
    expect(await page.inputValue('select[name=rc]')).toBe('selective');
    expect([await page.isChecked('input[name=rc_core_attn]'), await page.isChecked('input[name=rc_mlp]'), await page.isChecked('input[name=rc_layernorm]')]).toEqual([true, true, false]);
    const plain = await plannerOf(page);
    expect(plain.notes).toMatch(/^"\+ recompute" is selective recompute of the attention core and the MLP/);
    expect(plain.lines.slice(0, 5)).toEqual(['CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']);
    expect(plain.oom['CP=1 + recompute']!).toBeGreaterThan(plain.oom['CP=1']!);
    await page.uncheck('input[name=nobias]');
    expect(await page.inputValue('select[name=rc]')).toBe('full');
    await page.selectOption('select[name=rc]', 'full');
    await page.selectOption('select[name=rcmethod]', 'block');
    await page.fill('input[name=rcn]', '8');
    expect(await page.inputValue('input[name=lines]')).toBe('1,1:full:block/8,2,4,4:full:block/8');
    const full = await plannerOf(page);
    expect(full.error).toBeUndefined();
    expect(full.lines.slice(0, 5)).toEqual(['CP=1', 'CP=1 + full block/8', 'CP=2', 'CP=4', 'CP=4 + full block/8']);
    expect((await viewHash(page)).get('lines')).toBe('1,1:full:block/8,2,4,4:full:block/8');
    // Typing the lines moves the controls.
    await page.fill('input[name=lines]', '2,2:selective:mlp+layernorm');
    expect(await page.inputValue('select[name=rc]')).toBe('selective');
    expect(await page.isChecked('input[name=rc_core_attn]')).toBe(false);
    expect(await page.isChecked('input[name=rc_layernorm]')).toBe(true);
    expect((await plannerOf(page)).lines.slice(0, 2)).toEqual(['CP=2', 'CP=2 + selective mlp, layernorm']);
    // An invalid N typed into the lines never reaches the hidden N field (it keeps the last valid
    // one, 8): choosing full later shows its controls, not an error about a field out of sight.
    await page.fill('input[name=lines]', '1,4:full:uniform/0');
    await page.fill('input[name=lines]', '1,4:selective');
    await page.selectOption('select[name=rc]', 'full');
    expect((await plannerOf(page)).error).toBeUndefined();
    expect([await page.isVisible('input[name=rcn]'), await page.inputValue('input[name=rcn]'), await page.isVisible('input[name=rc_mlp]')]).toEqual([true, '8', false]);
    expect(await page.inputValue('input[name=lines]')).toBe(`1,4:full:${await page.inputValue('select[name=rcmethod]')}/8`);
    // An empty N when full is chosen is filled with 1.
    await page.selectOption('select[name=rc]', 'selective');
    await page.$eval('input[name=rcn]', (e) => { (e as HTMLInputElement).value = ''; }); // hidden, as a view saved in selective mode leaves it
    await page.selectOption('select[name=rc]', 'full');
    expect([(await plannerOf(page)).error, await page.inputValue('input[name=rcn]')]).toEqual([undefined, '1']);
    // Back to selective with no module ticked (a view saved in full mode): core_attn + mlp.
    await page.$$eval('input[name^=rc_]', (es) => es.forEach((e) => { (e as HTMLInputElement).checked = false; })); // hidden while full
    await page.selectOption('select[name=rc]', 'selective');
    expect((await plannerOf(page)).error).toBeUndefined();
    expect(await page.inputValue('input[name=lines]')).toBe('1,4:selective:core_attn+mlp');
    await page.fill('input[name=lines]', '1,1:recompute,2,4,4:recompute');
    expect((await plannerOf(page)).lines.slice(0, 5)).toEqual(['CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']);
  });

  it('a bad knob is refused in the page\'s words, beside the knob and under the form, with nothing drawn from it (MLP width 0 does not "fit")', async () => {
    // (a bad value the recompute controls show as well, N from the lines, is marked there too: `also`, before it in the form)
    const bad: [string, string, RegExp, { name: string; message: string }?][] = [
      ['input[name=ffn]', '0', /^MLP width must be a positive whole number \(it is 0\)\.$/],
      ['input[name=vocab]', '-5', /^Vocabulary must be a positive whole number \(it is -5\)\.$/],
      ['input[name=heads]', '30', /^Hidden size \(4096\) must be divisible by heads \(30\)\.$/],
      ['input[name=tp]', '3', /^Heads \(32\) must be divisible by TP \(3\)\.$/],
      ['input[name=pp]', '5', /^Layers \(32\) must be divisible by PP \(5\)\.$/],
      ['input[name=hbm]', '-1', /^HBM must be a positive number of GiB/],
      ['input[name=lines]', '1,x', /^Lines: 'x' must start with a CP size/],
      ['input[name=lines]', '1,1:full:uniform/99', /^Lines: '1:full:uniform\/99' recomputes chunks of 99 layers; that must be from 1 to the 32 layers/,
        { name: 'rcn', message: 'Recompute layers N (99) must be from 1 to the 32 layers of a pipeline stage (layers ÷ PP).' }],
      ['input[name=lines]', '1,1:selective:attn', /^Lines: unknown recompute module 'attn'/],
    ];
    for (const [sel, value, want, also] of bad) {
      const old = await page.inputValue(sel);
      await page.fill(sel, value);
      const msg = (await page.textContent('#planner-error'))!;
      expect(msg, `${sel}=${value}`).toMatch(want);
      expect(msg).not.toContain('--');
      // The same message beside the knob (the one it is about), which is marked invalid; no other knob is (but `also`).
      expect(await fieldMarks(page, '#planner-form')).toEqual([...(also ? [{ ...also, describedBy: true }] : []), { name: /name=(\w+)/.exec(sel)![1], message: msg, describedBy: true }]);
      expect(await page.$eval(`#planner-form ${sel}`, (e) => getComputedStyle(e).outlineColor)).toBe('rgb(176, 0, 32)');
      const p = await plannerOf(page);
      expect(p.lines).toEqual([]);
      expect(p.oom).toEqual({});
      expect(await page.textContent('#planner-oom')).toBe('');
      expect(await page.textContent('#planner-breakdown')).toBe('');
      expect(await page.isDisabled('#export-csv')).toBe(true);
      // The link keeps what the form shows (so a reload shows the same message).
      expect((await viewHash(page)).get(/name=(\w+)/.exec(sel)![1])).toBe(value);
      await page.fill(sel, old);
      expect(await page.textContent('#planner-error')).toBe('');
      expect(await fieldMarks(page, '#planner-form')).toEqual([]);
      expect((await plannerOf(page)).lines.length).toBeGreaterThanOrEqual(6);
    }
    await page.selectOption('select[name=rc]', 'selective'); // the seed's lines recompute full layers: show the modules
    await page.uncheck('input[name=rc_core_attn]');
    await page.uncheck('input[name=rc_mlp]');
    expect(await page.textContent('#planner-error')).toBe('Pick at least one module to recompute (core_attn, mlp, layernorm).');
    expect(await page.textContent('#planner-form fieldset.recompute .field-error')).toBe('Pick at least one module to recompute (core_attn, mlp, layernorm).');
    await page.check('input[name=rc_core_attn]');
    await page.check('input[name=rc_mlp]');
    expect(await page.textContent('#planner-error')).toBe('');
    expect(await fieldMarks(page, '#planner-form')).toEqual([]);
    expect(await page.isDisabled('#export-csv')).toBe(false);
    // The exported PNG is on white (the canvas is transparent): its corner pixel is opaque white.
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-png')]);
    const { data } = await pngPixels(page, (await import('node:fs')).readFileSync((await dl.path())!));
    expect(Array.from(data.subarray(0, 4))).toEqual([255, 255, 255, 255]);
  });

  it('the sequence lengths are a field: the lines are drawn over them, a CP that skips some says where, bad lists are refused', async () => {
    await page.fill('input[name=lines]', '1,6');
    await page.fill('input[name=seqs]', '12288, 4096,6144');
    const p = await plannerOf(page);
    expect(p.error).toBeUndefined();
    expect(p.lines.slice(0, 2)).toEqual(['CP=1', 'CP=6']);
    expect(await page.textContent('#planner-oom')).toMatch(/CP=6 has no point at 4K: Megatron-LM cannot split them over CP 6 \(2·CP equal chunks/);
    expect((await viewHash(page)).get('seqs')).toBe('12288, 4096,6144');
    await page.fill('input[name=seqs]', '4096,lots');
    expect(await page.textContent('#planner-error')).toBe("Sequence lengths must be whole numbers of tokens from 1 to 67,108,864, comma-separated, like 4096,8192,16384 ('lots' is not one).");
    // Numbers as memory --seq-lengths reads them (1e3 is 1000 tokens), and spaces around a line's ':' as around its commas.
    await page.fill('input[name=seqs]', '1e3,4096');
    await page.fill('input[name=lines]', ' 1 , 2 : selective ');
    const q = await plannerOf(page);
    expect(q.error).toBeUndefined();
    expect(q.lines.slice(0, 2)).toEqual(['CP=1', 'CP=2 + selective']);
    await page.fill('input[name=seqs]', '4096,8192');
    await page.fill('input[name=lines]', '1,3');
    // Said on the lengths, naming the line that cannot take them.
    expect(await page.textContent('#planner-error')).toMatch(/^Sequence lengths: line 'CP=3' has no point at any of them\. Line 'CP=3': none of the sequence lengths \(4096, 8192\) splits over CP 3/);
    await page.fill('input[name=seqs]', '4096,8192,16384,32768,65536,131072,262144,524288,1048576');
    await page.fill('input[name=lines]', '1,1:recompute,2,4,4:recompute');
    expect((await plannerOf(page)).error).toBeUndefined();
  });

  it('edits of the URL hash in the same tab are followed', async () => {
    await page.evaluate(() => { location.hash = 'preset=llama3-8b&tp=2&lines=1,2&hbm=141'; });
    await page.waitForFunction(() => (document.querySelector('input[name=tp]') as HTMLInputElement).value === '2');
    expect(await page.inputValue('input[name=ffn]')).toBe('14336');
    expect(await page.inputValue('select[name=preset]')).toBe('llama3-8b');
    // Llama 3 has no linear biases and RMSNorm: the preset sets both knobs.
    expect([await page.isChecked('input[name=nobias]'), await page.inputValue('select[name=norm]')]).toEqual([true, 'RMSNorm']);
    expect((await plannerOf(page)).lines).toEqual(['CP=1', 'CP=2', 'HBM 141 GiB']);
    expect(await page.textContent('#rc-note')).toMatch(/No line recomputes/);
    await page.evaluate(() => { location.hash = 'preset=torchcp-8L-4096h&ffn=0'; });
    await page.waitForFunction(() => /MLP width must be a positive whole number/.test(document.getElementById('planner-error')!.textContent ?? ''));
    expect(await page.inputValue('select[name=stack]')).toBe('torch-amp'); // the preset's stack
    expect((await plannerOf(page)).lines).toEqual([]);
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (document.querySelector('input[name=tp]') as HTMLInputElement).value === '8');
    expect(await page.inputValue('select[name=preset]')).toBe('seed-32L-4096h');
    expect(await page.textContent('#planner-error')).toBe('');
    expect((await plannerOf(page)).lines.slice(0, 5)).toEqual(['CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']);
  });

  it('the replay table gives each shipped point\'s error and OOM verdict against the model on the PyTorch AMP stack', async () => {
    type Row = { origin: string; seq: number; totalError: number | null; activationError: number | null; verdict: string; error?: string };
    const rows = (await hooks<{ rows: Row[] }>(page, 'replay')).rows.filter((r) => r.origin.startsWith('CP='));
    expect(rows).toHaveLength(28);
    const ran = rows.filter((r) => r.totalError !== null);
    expect(ran.length).toBe(24);
    for (const r of ran) {
      expect(Math.abs(r.totalError!), `${r.origin} ${r.seq}`).toBeLessThanOrEqual(0.05);
      expect(Math.abs(r.activationError!), `${r.origin} ${r.seq}`).toBeLessThanOrEqual(0.10);
    }
    expect(rows.map((r) => r.verdict)).toEqual(rows.map(() => 'right'));
    const cells = await page.$$eval('#replay-table tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)));
    const oneRan = cells.find((c) => c[0] === 'CP=2' && c[2] === '131072')!;
    expect(oneRan[1]).toBe('the lines');
    expect(oneRan[8]).toMatch(/^[+-]\d+\.\d%$/);
    expect(oneRan[11]).toMatch(/^[+-]\d+\.\d%$/);
    expect(oneRan[12]).toBe('0.0');
    expect(oneRan[13]).toBe('right');
    expect(cells.find((c) => c[0] === 'CP=2' && c[2] === '196608')!.slice(6, 9)).toEqual(['OOM', expect.stringMatching(/^\d+\.\d$/), '']);
    expect(await page.textContent('#replay-summary')).toMatch(/^28 shipped points: largest total error \d+\.\d%, largest activation error \d+\.\d%, 0 wrong out-of-memory verdicts[;.]/);
  });

  it('a dropped log of another model is predicted from its own arguments and says what differs; a CSV of the same model says nothing', async () => {
    // Where the replay test's drop is still in the tab, removed first (the same file dropped again is not added again).
    const earlier = page.getByRole('button', { name: /^remove core_0\.16_tp4_cp2_sp_selective\.log / });
    if (await earlier.count()) {
      await earlier.click();
      await page.waitForFunction(() => /removed/.test(document.getElementById('replay-status')!.textContent ?? ''));
    }
    const warnsBefore = (await page.$$('#replay-messages li.warn')).length;
    await page.setInputFiles('#replay-files', join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log'));
    await page.waitForFunction((n) => document.querySelectorAll('#replay-messages li.warn').length > n, warnsBefore);
    const warn = await page.$$eval('#replay-messages li.warn', (li) => li.at(-1)!.textContent);
    expect(warn).toMatch(/^⚠ core_0\.16_tp4_cp2_sp_selective\.log is another setup than the lines it is drawn over \(torchcp-8L-4096h, PyTorch AMP\): --num-layers 32 \(lines: 8\), .*no --untie-embeddings-and-output-weights \(lines: --untie-embeddings-and-output-weights\), .*--stack megatron \(lines: torch-amp\)\. The table predicts it from its own arguments\./);
    const cells = await page.$$eval('#replay-table tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent)));
    const own = cells.find((c) => c[0] === 'core_0.16_tp4_cp2_sp_selective.log')!;
    expect(own[1]).toBe('its own arguments');
    expect(own[7]).toMatch(/^\d+\.\d$/);
    expect(own[8]).toMatch(/^[+-]\d+\.\d%$/);
    const same = 'seq_len,tp,cp,recompute,total_gib,fits,source\n8192,1,1,none,38.1,true,"measured: elsewhere, GPT 8L h=4096 a=32 vocab=8192"\n';
    await page.setInputFiles('#replay-files', { name: 'same.csv', mimeType: 'text/csv', buffer: Buffer.from(same) });
    await page.waitForFunction(() => /same\.csv: 1 point added/.test(document.getElementById('replay-messages')!.textContent ?? ''));
    expect((await page.$$('#replay-messages li.warn')).length).toBe(warnsBefore + 1);
    const other = same.replace('8L h=4096 a=32 vocab=8192', '24L h=2048 a=16 vocab=50257');
    await page.setInputFiles('#replay-files', { name: 'other.csv', mimeType: 'text/csv', buffer: Buffer.from(other) });
    await page.waitForFunction((n) => document.querySelectorAll('#replay-messages li.warn').length > n, warnsBefore + 1);
    expect(await page.$$eval('#replay-messages li.warn', (li) => li.at(-1)!.textContent)).toMatch(/other\.csv is a different model .*: layers 24 \(lines: 8\), hidden 2048 \(lines: 4096\), heads 16 \(lines: 32\), vocab 50257 \(lines: 8192\)\. Its errors in the table are against the lines' model\./);
    // A file mixing models (as bench/results/memory-h200-2026-12-01's): each model that is not the lines' is named, not just the first row's.
    const mixed = same + other.split('\n')[1] + '\n';
    const warnsMixed = (await page.$$('#replay-messages li.warn')).length;
    await page.setInputFiles('#replay-files', { name: 'mixed.csv', mimeType: 'text/csv', buffer: Buffer.from(mixed) });
    await page.waitForFunction(() => /mixed\.csv: 2 points added/.test(document.getElementById('replay-messages')!.textContent ?? ''));
    expect((await page.$$eval('#replay-messages li.warn', (li) => li.map((x) => x.textContent ?? ''))).slice(warnsMixed)).toEqual([expect.stringMatching(/^⚠ mixed\.csv is a different model .*: layers 24 \(lines: 8\)/)]);
    expect(consoleErrors).toEqual([]);
  });

  it('without WebGPU the planner and replay still work and the live panel says why', async () => {
    const p2 = await browser.newPage();
    const errs: string[] = [];
    p2.on('pageerror', (e) => errs.push(e.message));
    await p2.addInitScript(() => { Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }); });
    await p2.goto(server!.url);
    await pageReady(p2);
    expect(await p2.textContent('#live-support')).toMatch(/WebGPU is not available.*enable-unsafe-webgpu/);
    expect(await p2.isDisabled('#live-run')).toBe(true);
    expect((await hooks<{ lines: string[] }>(p2, 'planner')).lines.length).toBeGreaterThanOrEqual(6);
    expect(errs).toEqual([]);
    await p2.close();
  });

  it('a bug (not bad input) under the CP and advisor panels is said there as an internal error and reaches the console', async () => {
    const p2 = await browser.newPage();
    const errs: string[] = [];
    p2.on('pageerror', (e) => errs.push(e.message));
    await p2.goto(server!.url);
    await pageReady(p2);
    // A preset the page does not have: reading the planner's model fails with a TypeError, which no input can cause.
    await p2.evaluate(() => {
      const form = document.getElementById('planner-form')!;
      (form.querySelector('select[name=preset]') as HTMLSelectElement).value = 'no-such-preset';
      form.querySelector('input[name=hbm]')!.dispatchEvent(new Event('input', { bubbles: true }));
    });
    const bug = /^Internal error of the page \(please report it, with the page's address\): TypeError: /;
    for (const id of ['cp-error', 'advisor-error'])
      await p2.waitForFunction(([i, re]) => new RegExp(re).test(document.getElementById(i)!.textContent ?? ''), [id, bug.source] as const, { timeout: 15_000 });
    expect(errs.some((m) => /Cannot read properties of undefined/.test(m))).toBe(true);
    await p2.close();
  });

  type TimelineSteps = { axis(id: string): string[]; at(id: string, phase: string, step: number, rank: number): { x: number; y: number } | null; tip(id: string): string };
  const stepAxis = (p: Page, id: string) => p.evaluate((i) => (window as unknown as { __flashring: { timelineSteps: TimelineSteps } }).__flashring.timelineSteps.axis(i), id);
  /** Moves the mouse onto a step of a rank on a timeline canvas and returns the tooltip it shows. */
  const hoverStep = async (p: Page, id: string, phase: string, step: number, rank: number) => {
    await p.locator(`#${id}`).scrollIntoViewIfNeeded();
    const at = await p.evaluate(([i, ph, st, r]) => (window as unknown as { __flashring: { timelineSteps: TimelineSteps } }).__flashring.timelineSteps.at(i as string, ph as string, st as number, r as number), [id, phase, step, rank] as const);
    expect(at, `${id} ${phase} step ${step} rank ${rank}`).not.toBeNull();
    await p.mouse.move(at!.x, at!.y);
    return p.evaluate((i) => (window as unknown as { __flashring: { timelineSteps: TimelineSteps } }).__flashring.timelineSteps.tip(i), id);
  };

  it('a bench timeline JSON dropped on the live panel is drawn with its steps named; a wrong JSON is refused by name', async () => {
    const tl = { kind: 'flashring.timeline', version: 1, R: 2, layout: 'zigzag', adapters: ['x'], summary: { overlapEfficiency: 0.5 },
      phases: [{ phase: 'forward', wallMs: 10, steps: [0, 1].flatMap((step) => [0, 1].map((rank) => ({ step, rank, start: step * 5, computeEnd: step * 5 + 3, transferEnd: step * 5 + 4, end: step * 5 + 4, transferMs: 2, idleMs: 1 }))) }] };
    await page.setInputFiles('#timeline-file', { name: 'ring.timeline.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tl)) });
    await page.waitForFunction(() => /showing ring\.timeline\.json: R=2 zigzag/.test(document.getElementById('live-status')!.textContent ?? ''));
    // Each step named on the chart (its column's label above the rank rows), and its own tooltip per rank.
    expect(await stepAxis(page, 'timeline')).toEqual(['step 1 fwd', 'step 2 fwd']); // counted from 1 (the file's step 0 is step 1)
    expect(await hoverStep(page, 'timeline', 'forward', 1, 1)).toBe('step 2 fwd, rank 1\ncompute 3 ms · transfer 2 ms · idle 1 ms');
    expect(await hoverStep(page, 'timeline', 'forward', 0, 0)).toBe('step 1 fwd, rank 0\ncompute 3 ms · transfer 2 ms · idle 1 ms');
    await page.mouse.move(0, 0);
    await page.setInputFiles('#timeline-file', { name: 'other.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') });
    await page.waitForFunction(() => /other\.json could not be read/.test(document.getElementById('live-status')!.textContent ?? ''));
  });

  it('Cancel stops Tune between candidates: nothing stored, Run and Tune back', async () => {
    const count = () => page.evaluate(() => new Promise<number>((resolve, reject) => {
      const r = indexedDB.open('flashring', 1);
      r.onerror = () => reject(r.error);
      r.onupgradeneeded = () => r.result.createObjectStore('tune', { keyPath: 'key' }); // as the page's store (web/tuneStore.ts), where no run made it yet
      r.onsuccess = () => { const c = r.result.transaction('tune').objectStore('tune').count(); c.onsuccess = () => { resolve(c.result); r.result.close(); }; };
    }));
    const before = await count();
    await liveForm(page, { N: '32', D: '16', H: '1', R: '1' }, 'f32');
    await page.click('#live-tune');
    // Cancelled once a candidate has been timed: in the middle of the search, not before it.
    await page.waitForFunction(() => /^(forward|backward) candidate /.test(document.getElementById('live-status')!.textContent ?? ''), null, { timeout: 120_000 });
    expect(await page.isEnabled('#live-cancel')).toBe(true);
    await page.click('#live-cancel');
    await page.waitForFunction(() => (window as unknown as { __flashring: { tune?: { done?: boolean } } }).__flashring.tune?.done === true, null, { timeout: 120_000 });
    expect(await hooks<{ cancelled?: boolean; failed?: string }>(page, 'tune')).toEqual({ done: true, cancelled: true });
    expect(await page.textContent('#live-status')).toMatch(/^tuning cancelled: nothing stored/);
    expect(await count()).toBe(before);
    expect(await page.isEnabled('#live-run')).toBe(true);
    expect(await page.isEnabled('#live-tune')).toBe(true);
    expect(await page.isEnabled('#live-cancel')).toBe(false);
  }, 300_000);

  it('Tune tiles: a search in the tab, kept in IndexedDB, that Run then uses; it drops this adapter\'s entries of other kernels, not another adapter\'s', async () => {
    await liveForm(page, { N: '32', D: '16', H: '1', R: '1' }, 'f32');
    // An entry of this adapter under another kernels' hash (dropped when Tune stores), and another adapter's (kept).
    const keys = await page.evaluate(async () => {
      const i = (await navigator.gpu.requestAdapter())!.info, rest = 'shaders 0badc0de|robust|no pins|scalar|D16|f32|full';
      const old = [i.vendor, i.architecture, i.device, i.description, rest].join('|'), other = `Another vendor|arch|device|another GPU|${rest}`;
      const entry = (key: string) => ({ key, path: 'scalar', tuning: {}, defaultMs: [2, 4], tunedMs: [2, 4], N: 64, heads: 2, checkErr: 3e-7, date: '2026-12-02T16:00:00.000Z', trials: [] });
      await new Promise<void>((resolve, reject) => {
        const r = indexedDB.open('flashring', 1);
        r.onerror = () => reject(r.error);
        r.onupgradeneeded = () => r.result.createObjectStore('tune', { keyPath: 'key' }); // as the page's store (web/tuneStore.ts), where no run made it yet
        r.onsuccess = () => {
          const tx = r.result.transaction('tune', 'readwrite');
          for (const k of [old, other]) tx.objectStore('tune').put(entry(k));
          tx.oncomplete = () => { r.result.close(); resolve(); };
        };
      });
      return { old, other };
    });
    await page.click('#live-tune');
    await page.waitForFunction(() => (window as unknown as { __flashring: { tune?: { done?: boolean } } }).__flashring.tune?.done === true, null, { timeout: 280_000 });
    const t = await hooks<{ failed?: string; key?: string; tuning?: Record<string, unknown>; checkErr?: number; trials?: number }>(page, 'tune');
    expect(t.failed).toBeUndefined();
    expect(t.checkErr!).toBeLessThan(1e-4);
    expect(t.trials).toBeGreaterThan(10);
    expect(await page.textContent('#live-results')).toMatch(/candidates\s*\d+ timed of \d+/);
    const stored = await page.evaluate((key) => new Promise<unknown>((resolve, reject) => {
      const r = indexedDB.open('flashring', 1);
      r.onerror = () => reject(r.error);
      r.onsuccess = () => { const g = r.result.transaction('tune').objectStore('tune').get(key); g.onsuccess = () => { resolve(g.result); r.result.close(); }; };
    }), t.key!);
    expect(stored).toMatchObject({ key: t.key, tuning: t.tuning });
    const all = await page.evaluate(() => new Promise<string[]>((resolve, reject) => {
      const r = indexedDB.open('flashring', 1);
      r.onerror = () => reject(r.error);
      r.onsuccess = () => { const g = r.result.transaction('tune').objectStore('tune').getAllKeys(); g.onsuccess = () => { resolve(g.result.map(String)); r.result.close(); }; };
    }));
    expect(all).toContain(keys.other);
    expect(all).not.toContain(keys.old);
    await page.click('#live-run');
    await liveDone(page);
    const live = await hooks<{ ok?: boolean; tuned?: boolean; failed?: string }>(page, 'live');
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    expect(live.tuned).toBe(Object.keys(t.tuning!).length > 0);
    expect(await page.textContent('#live-results')).toMatch(Object.keys(t.tuning!).length ? /tiles\s*tuned in this browser: (forward|backward|heads|all|row|with|no) / : /tiles\s*defaults \(Tune has stored no pins/);
  }, 300_000);

  it('a small live ring run on WebGPU completes within tolerance', async () => {
    await liveForm(page, { N: '48', D: '16', H: '2', R: '2' }, 'f32');
    await page.click('#live-run');
    await page.waitForFunction(() => (window as unknown as { __flashring: { live?: { done?: boolean } } }).__flashring.live?.done === true, null, { timeout: 240_000 });
    const live = await hooks<{ ok?: boolean; errors?: Record<string, number>; failed?: string }>(page, 'live');
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    for (const [k, e] of Object.entries(live.errors!)) expect(e, k).toBeLessThanOrEqual(k.startsWith('d') ? 1e-4 : 1e-5);
    expect(await page.textContent('#live-results')).toMatch(/within tolerance/);
    // Which kernels ran, and why not the tensor cores (lavapipe has none; f32 data would not take them either).
    expect(await page.textContent('#live-results')).toMatch(/portable \(register-tiled WGSL, no subgroup matrices\), the fastest exact path this browser offers \(tensor cores not used: \w/);
    mkdirSync(out, { recursive: true });
    await page.screenshot({ path: join(out, 'page.png'), fullPage: true });
    expect(consoleErrors).toEqual([]);
  }, 300_000);

  const blank = (p: Page) => p.evaluate(() => {
    const c = document.getElementById('timeline') as HTMLCanvasElement;
    return c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data.every((v) => v === 0);
  });
  const liveDone = (p: Page) => p.waitForFunction(() => (window as unknown as { __flashring: { live?: { done?: boolean } } }).__flashring.live?.done === true, null, { timeout: 120_000 });

  it('a failed run clears the earlier results and says why in the form\'s words', async () => {
    expect(await page.textContent('#live-results')).toMatch(/within tolerance/); // from the run above
    expect(await blank(page)).toBe(false);
    await page.fill('#live-form input[name=D]', '12');
    // Marked beside the field as it is typed, before any run.
    expect(await fieldMarks(page, '#live-form')).toEqual([{ name: 'D', message: 'Head size D must be a multiple of 8 (it is 12).', describedBy: true }]);
    await page.click('#live-run');
    await liveDone(page);
    expect(await page.textContent('#live-status')).toBe('Head size D must be a multiple of 8 (it is 12).');
    expect(await page.textContent('#live-results')).toBe('');
    expect(await blank(page)).toBe(true);
    await page.fill('#live-form input[name=D]', '16');
    await page.fill('#live-form input[name=R]', '9');
    await page.click('#live-run');
    await liveDone(page);
    expect(await page.textContent('#live-status')).toMatch(/^Ranks R must be a whole number from 1 to 8 \(it is 9\)\.$/);
    expect(await fieldMarks(page, '#live-form')).toEqual([{ name: 'R', message: 'Ranks R must be a whole number from 1 to 8 (it is 9).', describedBy: true }]);
    await page.fill('#live-form input[name=R]', '2');
    expect(await fieldMarks(page, '#live-form')).toEqual([]);
  });

  it('a dropped timeline without phases is refused by name and leaves the drawn timeline alone', async () => {
    const tl = { kind: 'flashring.timeline', version: 1, R: 1, layout: 'contiguous', adapters: ['x'], summary: { overlapEfficiency: 1 },
      phases: [{ phase: 'forward', wallMs: 4, steps: [{ step: 0, rank: 0, start: 0, computeEnd: 3, transferEnd: 3, end: 3, transferMs: 0, idleMs: 1 }] }] };
    await page.setInputFiles('#timeline-file', { name: 'good.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tl)) });
    await page.waitForFunction(() => /showing good\.json: R=1/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(await blank(page)).toBe(false);
    const { phases: _, ...noPhases } = tl;
    await page.setInputFiles('#timeline-file', { name: 'nophases.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(noPhases)) });
    await page.waitForFunction(() => /nophases\.json could not be read/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(await page.textContent('#live-status')).toBe('nophases.json could not be read — it has no phases to draw (the "phases" list is missing or empty)');
    expect(await blank(page)).toBe(false);
    await page.setInputFiles('#timeline-file', { name: 'badstep.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ ...tl, phases: [{ phase: 'forward', wallMs: 1, steps: [{ rank: 5 }] }] })) });
    await page.waitForFunction(() => /badstep\.json could not be read — step 1 of phase 1 lacks a valid rank/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(await blank(page)).toBe(false);
    // A one-device file's steps need their time on the device (computeMs): its bars are drawn from it ("NaN ms" before).
    await page.setInputFiles('#timeline-file', { name: 'turns.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify({ ...tl, mode: 'one-device' })) });
    await page.waitForFunction(() => /turns\.json could not be read/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(await page.textContent('#live-status')).toBe('turns.json could not be read — step 1 of phase 1 lacks a valid rank or one of start, computeEnd, transferEnd, end, transferMs, idleMs, computeMs');
    const withCompute = { ...tl, mode: 'one-device', phases: tl.phases.map((ph) => ({ ...ph, steps: ph.steps.map((st) => ({ ...st, computeMs: 2 })) })) };
    await page.setInputFiles('#timeline-file', { name: 'turns2.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(withCompute)) });
    await page.waitForFunction(() => /showing turns2\.json: R=1/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(consoleErrors).toEqual([]);
  });

  it('Cancel acts within a second; the next run reuses the devices', async () => {
    const acquired = await hooks<number>(page, 'liveDevicesAcquired');
    expect(acquired).toBe(1); // one-device mode: the first live run's two ranks share the page's one device
    await page.fill('#live-form input[name=N]', '4096'); // seconds per ring step on SwiftShader
    await page.fill('#live-form input[name=D]', '16');
    await page.fill('#live-form input[name=H]', '2');
    await page.click('#live-run');
    await page.waitForFunction(() => /^running on/.test(document.getElementById('live-status')!.textContent ?? ''), null, { timeout: 60_000 });
    await page.click('#live-cancel');
    await page.waitForFunction(() => document.getElementById('live-status')!.textContent === 'cancelled', null, { timeout: 5_000 });
    // Measured in the page, from the click's timestamp to its handler (which cancels at once): what the user
    // waits, without the test driver's own round trips, which a busy machine stretches past a second.
    const wait = await hooks<number>(page, 'cancelWaitMs');
    expect(wait).toBeGreaterThanOrEqual(0);
    expect(wait).toBeLessThan(1000);
    expect(await page.isDisabled('#live-run')).toBe(false);
    expect(await hooks<{ cancelled?: boolean }>(page, 'live')).toEqual({ done: true, cancelled: true });
    await page.fill('#live-form input[name=N]', '32');
    await page.fill('#live-form input[name=D]', '16');
    await page.fill('#live-form input[name=H]', '1');
    await page.click('#live-run');
    await liveDone(page);
    expect((await hooks<{ ok?: boolean }>(page, 'live')).ok).toBe(true);
    expect(await hooks<number>(page, 'liveDevicesAcquired')).toBe(1);
    expect(consoleErrors).toEqual([]);
  }, 300_000);

  type Live = { ok?: boolean; failed?: string; mode?: string; scheme?: string; hierarchy?: number[]; R?: number; steps?: string; peakBytes?: number[];
    predicted?: { link: string; stepMs: number[]; totalMs: number; commFraction: number; tflopsPerGpu: number } };
  const blankCanvas = (p: Page, id: string) => p.evaluate((i) => {
    const c = document.getElementById(i) as HTMLCanvasElement;
    return c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data.every((v) => v === 0);
  }, id);
  const runLive = async (p: Page, fields: Record<string, string>, selects: Record<string, string>) => {
    for (const [k, v] of Object.entries(selects)) await p.selectOption(`#live-form select[name=${k}]`, v);
    for (const [k, v] of Object.entries(fields)) await p.fill(`#live-form input[name=${k}]`, v);
    await p.click('#live-run');
    await liveDone(p);
    return hooks<Live>(p, 'live');
  };

  it('the scheme and link pickers run a tiny one-device ring and show its predicted timeline, comm fraction and TFLOP/s per GPU', async () => {
    const live = await runLive(page, { N: '40', D: '16', H: '2', R: '2' }, { scheme: 'a2a', link: 'pcie5', precision: 'f32', layout: 'zigzag' });
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    expect(live.mode).toBe('one-device');
    expect(live.scheme).toBe('a2a');
    expect(live.steps).toMatch(/^forward: a2a-in.*; backward: /);
    expect(live.peakBytes).toHaveLength(2);
    for (const b of live.peakBytes!) expect(b).toBeGreaterThan(0);
    const p = live.predicted!;
    expect(p.link).toBe('pcie5');
    expect(p.stepMs.length).toBeGreaterThanOrEqual(4);
    expect(p.totalMs).toBeCloseTo(p.stepMs.reduce((a, b) => a + b, 0), 6);
    expect(p.commFraction).toBeGreaterThan(0); // a2a's all-to-alls do not overlap compute
    expect(p.commFraction).toBeLessThan(1);
    expect(p.tflopsPerGpu).toBeGreaterThan(0);
    const text = (await page.textContent('#live-results'))!;
    for (const want of [/mode, schemeone-device, a2a, zigzag, R=2/, /predicted, 2 GPUs on pcie5/, /comm fraction\d+\.\d%/, /TFLOP\/s per GPU/, /peak bytes per rank[\d.]+ (B|KiB|MiB), [\d.]+ (B|KiB|MiB)work per rank/, /within tolerance/])
      expect(text).toMatch(want);
    expect(await blankCanvas(page, 'timeline')).toBe(false);
    expect(await blankCanvas(page, 'timeline-predicted')).toBe(false);
    // Both timelines name their steps on the chart ("step 1 fwd · a2a-in", or as much as the column leaves room for) and in each step's tooltip.
    // Widths follow the measured compute (the predicted timeline's too: its compute is the measured), which on a busy CPU can
    // leave one step nearly the whole width and the rest too narrow for a name (seen: 1 name, two suites at once).
    for (const id of ['timeline', 'timeline-predicted']) {
      const axis = await stepAxis(page, id);
      expect(axis.length, id).toBeGreaterThanOrEqual(1);
      for (const l of axis) expect(l, id).toMatch(/^(step )?\d+( (fwd|bwd)( · [\w+-]+)?)?$/);
    }
    const t = '[\\d.e+-]+ m?s'; // a duration to three significant digits
    // (A step too short to point at, as the all-to-alls on NVLink, is named with the steps beside it.)
    expect(await hoverStep(page, 'timeline', 'forward', 0, 0)).toMatch(new RegExp(`^step 1 fwd · a2a-in, rank 0\ncompute ${t}( \\(GPU ${t}\\))? · transfer ${t} · idle ${t}`, 'm'));
    expect(await hoverStep(page, 'timeline-predicted', 'backward', 0, 1)).toMatch(new RegExp(`^step 1 bwd · [\\w+-]+, rank 1\ncompute ${t} · transfer ${t}( after it| behind it)? · step ${t}$`, 'm'));
    expect(await hoverStep(page, 'timeline-predicted', 'forward', 1, 0)).toMatch(new RegExp(`^step 2 fwd · [\\w+-]+, rank 0\ncompute ${t} · transfer ${t}( after it| behind it)? · step ${t}$`, 'm'));
    await page.mouse.move(0, 0);
    // a2a+p2p with its group sizes, on a custom link.
    await page.selectOption('#live-form select[name=scheme]', 'a2a+p2p');
    expect(await page.isVisible('#live-form input[name=hcp]')).toBe(true);
    await page.fill('#live-form input[name=hcp]', '2,2');
    await page.selectOption('#live-form select[name=link]', 'custom');
    const h = await runLive(page, { N: '48', H: '4', R: '4', gbps: '100', lat: '10' }, {});
    expect(h.failed).toBeUndefined();
    expect(h.ok).toBe(true);
    expect([h.scheme, h.hierarchy, h.R, h.predicted!.link]).toEqual(['a2a+p2p', [2, 2], 4, 'custom']);
    expect(h.steps).toMatch(/ring/);
    expect(h.peakBytes).toHaveLength(4);
    expect(await hooks<number>(page, 'liveDevicesAcquired')).toBe(1);
    expect(consoleErrors).toEqual([]);
  }, 300_000);

  it('a live run with a sliding window and packed documents matches float64 attention under the same mask', async () => {
    const live = await runLive(page, { N: '40', D: '16', H: '2', R: '2', window: '6,0', docs: '3' }, { precision: 'f32', scheme: 'p2p', link: 'nvlink-h200' });
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    const text = await page.textContent('#live-results');
    expect(text).toMatch(/within tolerance/);
    // 3 documents of 13, 13, 14 tokens (cu_seqlens 0, 13, 26, 40), causal, window 6 back: query i sees key j when
    // both are in one document and i − 6 ≤ j ≤ i. Counted here from those rules, not from the page's mask:
    // Σ over documents of (1 + … + 7) + 7·(L − 7) = 7L − 21, i.e. 70 + 70 + 77 = 217 (259 without the documents).
    const doc = (i: number) => (i < 13 ? 0 : i < 26 ? 1 : 2);
    let visible = 0, noDocs = 0;
    for (let i = 0; i < 40; i++)
      for (let j = 0; j < 40; j++)
        if (j <= i && i - j <= 6) { noDocs++; if (doc(i) === doc(j)) visible++; }
    expect([visible, noDocs]).toEqual([217, 259]);
    const m = /(\d+) of 1600 pairs visible/.exec(text ?? '');
    expect(m && Number(m[1])).toBe(visible);
    const w = /work per rank(\d+), (\d+) visible scores \(imbalance \d\.\d{3}: max \/ mean, under the causal window 6,0 3-document mask, zigzag\)/.exec(text ?? '');
    expect(w).not.toBeNull();
    // The ranks' work (the ring's schedule, from the mask the run used): the visible pairs counted above, split over the 2 ranks.
    expect(Number(w![1]) + Number(w![2])).toBe(visible);
    expect(await page.textContent('#window-note')).toMatch(/change nothing this plot counts/);
    for (const [sel, value, msg] of [['window', '6', /Window must be two whole numbers/], ['window', '-2,0', /Window must be two whole numbers/], ['docs', '0', /Documents must be a whole number from 1 to 40/]] as const) {
      await page.fill(`#live-form input[name=${sel}]`, value);
      await page.click('#live-run');
      await page.waitForFunction(() => (window as unknown as { __flashring: { live?: { failed?: string } } }).__flashring.live?.failed !== undefined, null, { timeout: 20_000 });
      const h = await hooks<Live>(page, 'live');
      expect(h.failed).toMatch(msg);
      expect(h.failed).not.toMatch(/--/);
    }
    await page.fill('#live-form input[name=window]', '-1,-1');
    await page.fill('#live-form input[name=docs]', '1');
  }, 300_000);

  it('the live form refuses a scheme the heads or ranks cannot take, in its own words', async () => {
    const bad: [Record<string, string>, Record<string, string>, RegExp][] = [
      [{ H: '3', R: '2' }, { scheme: 'a2a' }, /^Scheme a2a \(Ulysses\) splits the heads over the ranks: heads \(3\) must be divisible by ranks R \(2\)\.$/],
      [{ H: '4', R: '4', hcp: '3,1' }, { scheme: 'a2a+p2p' }, /^a2a\+p2p sizes 3,1 multiply to 3, not ranks R \(4\)\.$/],
      [{ hcp: '2,2', gbps: '-1' }, { link: 'custom' }, /^Link bandwidth \(Gbit\/s\) must be a number from 0\.000001 to 1,000,000 \(it is -1\)\.$/],
      // Within every field's range but too big to draw in a tab: refused before any tensor exists.
      [{ N: '65536', D: '256', H: '64', R: '1', gbps: '100' }, { scheme: 'p2p' }, /^N × heads × D is 1,073,741,824: a live run draws and holds its tensors in this tab, so keep it at most 16,777,216 \(e\.g\. N 65536 with 1 head at D 256\); larger runs: flashring attention --cp or the bench\.$/],
    ];
    for (const [fields, selects, want] of bad) {
      const live = await runLive(page, fields, selects);
      expect(live.failed).toMatch(want);
      expect(await page.textContent('#live-results')).toBe('');
      expect(await blankCanvas(page, 'timeline-predicted')).toBe(true);
    }
    await page.fill('#live-form input[name=gbps]', '100');
    for (const [k, v] of Object.entries({ N: '48', D: '16', H: '4', R: '4' })) await page.fill(`#live-form input[name=${k}]`, v);
    await page.selectOption('#live-form select[name=scheme]', 'p2p');
    await page.selectOption('#live-form select[name=link]', 'nvlink-h200');
  });

  it('a version-2 timeline file (a Node run with a scheme and a link) loads with its predicted timeline; a broken prediction is refused by name', async () => {
    const dev = await testDevice();
    const s = { B: 1, Hq: 2, Hkv: 2, Nq: 24, Nk: 24, D: 8 };
    const x = { q: randn(2 * 24 * 8, 1), k: randn(2 * 24 * 8, 2), v: randn(2 * 24 * 8, 3), dout: randn(2 * 24 * 8, 4) };
    const { timeline } = await ringAttention([dev], s, x, { ranks: 2, scheme: 'all_gather', causal: true, link: LINKS['ib-ndr'], precision: 'f32' });
    expect(timeline.version).toBe(2);
    await page.setInputFiles('#timeline-file', { name: 'v2.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(timeline)) });
    await page.waitForFunction(() => /showing v2\.json/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(await page.textContent('#live-status')).toMatch(/^showing v2\.json: R=2 zigzag, all_gather one-device, .*; predicted on ib-ndr: [\d.]+ ms, comm [\d.]+%, [\d.e+-]+ TFLOP\/s per GPU$/);
    const shown = await hooks<{ scheme: string; mode: string; predictedSteps: number; commFraction: number }>(page, 'timelineFile');
    expect(shown).toMatchObject({ scheme: 'all_gather', mode: 'one-device', predictedSteps: timeline.predicted!.stepMs.length, commFraction: timeline.predicted!.commFraction });
    expect(await blankCanvas(page, 'timeline-predicted')).toBe(false);
    const broken = { ...timeline, predicted: { ...timeline.predicted!, stepMs: 'x' } };
    await page.setInputFiles('#timeline-file', { name: 'broken.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(broken)) });
    await page.waitForFunction(() => /broken\.json could not be read — its predicted timeline lacks stepMs/.test(document.getElementById('live-status')!.textContent ?? ''));
    // A version-1 file (no prediction) still draws, with the predicted canvas cleared.
    const v1 = { kind: 'flashring.timeline', version: 1, R: 1, layout: 'contiguous', adapters: ['x'], summary: { overlapEfficiency: 1 },
      phases: [{ phase: 'forward', wallMs: 4, steps: [{ step: 0, rank: 0, start: 0, computeEnd: 3, transferEnd: 3, end: 3, transferMs: 0, idleMs: 1 }] }] };
    await page.setInputFiles('#timeline-file', { name: 'v1.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(v1)) });
    await page.waitForFunction(() => /showing v1\.json: R=1 contiguous, x; no predicted timeline/.test(document.getElementById('live-status')!.textContent ?? ''));
    expect(await blankCanvas(page, 'timeline')).toBe(false);
    expect(await blankCanvas(page, 'timeline-predicted')).toBe(true);
    expect(consoleErrors).toEqual([]);
  });

  type CpRows = { error?: string; rows: { scheme: string; sizes: string; error?: string; stepMs?: number; commFraction?: number; tflopsPerGpu?: number }[]; link?: string; tflops?: number };
  it('the planner\'s CP scheme panel predicts one row per scheme for the chosen link and kernel rate, kept in the URL', async () => {
    await page.evaluate(() => { location.hash = 'cpr=4'; });
    await page.waitForFunction(() => new URLSearchParams(location.hash.slice(1)).get('cplink') === 'nvlink-h200');
    const cp = await hooks<CpRows>(page, 'cpSchemes');
    expect(cp.error).toBeUndefined();
    expect(cp.rows.map((r) => r.scheme)).toEqual(['p2p', 'all_gather', 'a2a', 'a2a+p2p']);
    expect(cp.rows.map((r) => r.sizes)).toEqual(['1,4', '1,4', '4,1', '2,2']);
    expect([cp.link, cp.tflops]).toEqual(['nvlink-h200', 300]);
    for (const r of cp.rows) {
      expect(r.error).toBeUndefined();
      expect(r.stepMs!).toBeGreaterThan(0);
      expect(r.commFraction!).toBeGreaterThanOrEqual(0);
      expect(r.tflopsPerGpu!).toBeGreaterThan(0);
      expect(r.tflopsPerGpu!).toBeLessThanOrEqual(300);
    }
    expect(await page.$$eval('#cp-schemes tbody tr', (trs) => trs.length)).toBe(4);
    expect(await page.textContent('#cp-title + p')).toMatch(/FlashAttention-2 class/);
    // A slower link raises every scheme's comm fraction; the choice lands in the URL.
    await page.selectOption('#cp-form select[name=cplink]', 'ib-ndr');
    const ib = await hooks<CpRows>(page, 'cpSchemes');
    expect(ib.link).toBe('ib-ndr');
    ib.rows.forEach((r, i) => expect(r.commFraction!).toBeGreaterThanOrEqual(cp.rows[i].commFraction!));
    expect(ib.rows[0].commFraction!).toBeGreaterThan(cp.rows[0].commFraction!);
    await page.fill('#cp-form input[name=cptflops]', '150');
    const q = await viewHash(page);
    expect([q.get('cplink'), q.get('cptflops')]).toEqual(['ib-ndr', '150']);
    await page.reload();
    await pageReady(page);
    expect(await hooks<CpRows>(page, 'cpSchemes')).toMatchObject({ link: 'ib-ndr', tflops: 150 });
    // A scheme the heads cannot take says why in its row; a bad field clears the table.
    await page.fill('#cp-form input[name=cpr]', '8');
    const r8 = await hooks<CpRows>(page, 'cpSchemes');
    expect(r8.rows[2].error).toMatch(/a2a splits heads over 8 ranks: query heads \(4\)/);
    expect(r8.rows[0].error).toBeUndefined();
    // a2a+p2p's typed sizes, wrong: its row says so, and so does the field (marked beside it); cleared, neither.
    await page.fill('#cp-form input[name=cphcp]', 'x,2');
    const bad = await hooks<CpRows>(page, 'cpSchemes');
    expect(bad.rows[3].error).toBe('a2a+p2p sizes must be two whole numbers A,P, each at least 1 (they are x,2)');
    expect(await fieldMarks(page, '#cp-form')).toEqual([{ name: 'cphcp', message: bad.rows[3].error, describedBy: true }]);
    // Well formed but not this ring's (3 × 2 ranks at R = 8): its row and the field say why.
    await page.fill('#cp-form input[name=cphcp]', '3,2');
    const notR = await hooks<CpRows>(page, 'cpSchemes');
    expect(notR.rows[3].error).toBeDefined();
    expect(await fieldMarks(page, '#cp-form')).toEqual([{ name: 'cphcp', message: notR.rows[3].error, describedBy: true }]);
    await page.fill('#cp-form input[name=cphcp]', '');
    expect((await hooks<CpRows>(page, 'cpSchemes')).rows[3].error).toBeUndefined();
    expect(await fieldMarks(page, '#cp-form')).toEqual([]);
    // An error in a planner field the panel does not read (HBM, the lines) leaves it planning.
    await page.fill('#planner-form input[name=hbm]', '');
    await page.waitForFunction(() => (window as unknown as { __flashring: { planner: { error?: string } } }).__flashring.planner.error !== undefined);
    expect(await page.$$eval('#cp-schemes tbody tr', (trs) => trs.length)).toBe(4);
    expect(await page.textContent('#cp-error')).toBe('');
    await page.fill('#planner-form input[name=hbm]', '80');
    await page.fill('#cp-form input[name=cptflops]', '0');
    expect(await page.textContent('#cp-error')).toBe('Kernel TFLOP/s must be a number from 0.000001 to 10,000,000 (it is 0).');
    expect(await page.$$eval('#cp-schemes tbody tr', (trs) => trs.length)).toBe(0);
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { cpSchemes: CpRows } }).__flashring.cpSchemes.link === 'nvlink-h200');
  });

  it('MoE fields: experts 8, top-k 2 change the lines and the breakdown, live in the URL, a dense preset clears them; moe recompute on a dense model is refused in the page\'s words', async () => {
    await page.evaluate(() => { location.hash = 'preset=seed-32L-4096h&lines=1,1:recompute'; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { planner: { lines: string[] } } }).__flashring.planner.lines.join() === 'CP=1,CP=1 + recompute,HBM 80 GiB');
    expect([await page.inputValue('input[name=experts]'), await page.isDisabled('input[name=topk]'), await page.isDisabled('input[name=unfused]')]).toEqual(['0', true, true]);
    // the two lines' 4K points nearly coincide: the tooltip may be either's
    const total = (tip: string) => {
      const m = /^CP=1(?: \+ recompute)?, 4K tokens: ([\d.]+) GiB/.exec(tip);
      expect(m, tip).not.toBeNull();
      return Number(m![1]);
    };
    const chart = page.locator('#planner-chart');
    await chart.scrollIntoViewIfNeeded(); // an earlier test may have scrolled it away
    const dense = total(await hoverPlanner(page, 'CP=1', 4096));
    expect(await page.textContent('#planner-breakdown')).not.toContain('router input');
    await page.fill('input[name=experts]', '8');
    expect(await page.isDisabled('input[name=topk]')).toBe(false);
    await page.fill('input[name=topk]', '2');
    expect((await plannerOf(page)).error).toBeUndefined();
    await chart.scrollIntoViewIfNeeded();
    const moe = total(await hoverPlanner(page, 'CP=1', 4096));
    expect(moe).toBeGreaterThan(dense); // eight experts' weights and their activations at top-2
    const table = (await page.textContent('#planner-breakdown'))!;
    for (const t of ['router input', "permuted tokens (experts' fc1 input)", 'experts: GeLU input', '2·s·b·k·f_e/t']) expect(table).toContain(t);
    const q = new URLSearchParams(await page.evaluate(() => location.hash.slice(1)));
    expect([q.get('experts'), q.get('topk'), q.get('shared')]).toEqual(['8', '2', '0']);
    // bad MoE input in the page's words, nothing drawn
    for (const [sel, value, want] of [
      ['input[name=topk]', '9', /^Top-k \(9\) can be at most the experts \(8\)/],
      ['input[name=topk]', '0', /^Top-k must be a positive whole number \(empty: 2\) \(it is 0\)\.$/],
      ['input[name=experts]', '-1', /^Experts must be a whole number, 0 for a dense model \(it is -1\)\.$/],
    ] as const) await refusedThenRestored(page, sel, value, want);
    // moe and shared_experts recompute on an MoE model
    await page.check('input[name=rc_moe]');
    expect(await page.inputValue('input[name=lines]')).toBe('1,1:selective:core_attn+mlp+moe');
    expect((await plannerOf(page)).error).toBeUndefined();
    await page.check('input[name=rc_shared_experts]');
    expect(await page.textContent('#planner-error')).toMatch(/^Line 'CP=1 \+ selective core_attn, mlp, moe, shared_experts' recomputes shared_experts, but this model has no shared expert: set experts and a shared expert width above 0/);
    await page.fill('input[name=shared]', '4096');
    // The seed has linear biases, which Megatron-LM refuses in a shared expert: said, then taken without them.
    expect(await page.textContent('#planner-error')).toMatch(/refuses a shared expert with linear biases .*'no linear biases'/);
    await page.check('input[name=nobias]');
    expect((await plannerOf(page)).error).toBeUndefined();
    await page.uncheck('input[name=rc_shared_experts]');
    // A dense preset clears the MoE fields; the lines still recompute moe: refused in the page's words, no exception.
    await page.selectOption('select[name=preset]', 'llama3-8b');
    expect([await page.inputValue('input[name=experts]'), await page.inputValue('input[name=topk]'), await page.inputValue('input[name=shared]'), await page.isDisabled('input[name=topk]')])
      .toEqual(['0', '', '0', true]);
    const err = (await page.textContent('#planner-error'))!;
    expect(err).toBe("Line 'CP=1 + selective core_attn, mlp, moe' recomputes moe, but this model has no MoE layers: set experts above 0, or untick moe.");
    expect(err).not.toContain('--');
    expect((await plannerOf(page)).lines).toEqual([]);
    await page.uncheck('input[name=rc_moe]');
    expect(await page.textContent('#planner-error')).toBe('');
    await page.check('input[name=rc_moe]'); // chosen on a dense model
    expect((await plannerOf(page)).error).toMatch(/recomputes moe, but this model has no MoE layers/);
    await page.uncheck('input[name=rc_moe]');
    // unfused SwiGLU (a SwiGLU preset): two more tensors per MLP
    expect(await page.isDisabled('input[name=unfused]')).toBe(false);
    await page.check('input[name=unfused]');
    expect(await page.textContent('#planner-breakdown')).toContain('SiLU output (unfused SwiGLU)');
    expect(await page.evaluate(() => location.hash)).toMatch(/unfused=1/);
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (document.querySelector('select[name=preset]') as HTMLSelectElement).value === 'seed-32L-4096h');
    expect(await page.isChecked('input[name=unfused]')).toBe(false);
    expect(await page.textContent('#planner-error')).toBe('');
    expect(consoleErrors).toEqual([]);
  });

  it('the CP comm type selector reaches the memory model (all_gather counts the gathered K/V)', async () => {
    // the select offers the memory model's CP comm types, in its order
    expect(await page.$$eval('select[name=cpcomm] option', (os) => os.map((o) => (o as HTMLOptionElement).value))).toEqual([...CP_COMM_TYPES]);
    await page.evaluate(() => { location.hash = 'preset=seed-32L-4096h&vocab=512&lines=4&cpcomm=all_gather'; });
    await page.waitForFunction(() => /all-gathered K\/V/.test(document.getElementById('planner-breakdown')!.textContent ?? ''));
    expect(await page.inputValue('select[name=cpcomm]')).toBe('all_gather');
    await page.selectOption('select[name=cpcomm]', 'p2p');
    expect(await page.textContent('#planner-breakdown')).not.toMatch(/all-gathered/);
    expect((await viewHash(page)).get('cpcomm')).toBe('p2p');
    await page.selectOption('select[name=cpcomm]', 'a2a');
    expect(await page.textContent('#planner-error')).toBe('');
    await page.fill('input[name=lines]', '1,8');
    expect(await page.textContent('#planner-error')).toMatch(/^CP comm type a2a splits the 4 heads of a TP rank over the CP ranks: line 'CP=8' \(CP=8\) does not divide them/);
    // GQA: a2a splits the K/V groups too, and TP must divide them
    await page.evaluate(() => { location.hash = 'preset=llama3-8b&tp=1&lines=1,16&cpcomm=a2a'; });
    await page.waitForFunction(() => /splits the 8 K\/V groups of a TP rank/.test(document.getElementById('planner-error')!.textContent ?? ''));
    await page.evaluate(() => { location.hash = 'preset=llama3-8b&tp=16&lines=1'; });
    await page.waitForFunction(() => document.getElementById('planner-error')!.textContent === 'K/V groups (8) must be divisible by TP (16).');
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (document.querySelector('select[name=cpcomm]') as HTMLSelectElement).value === 'p2p');
    expect(await page.textContent('#planner-error')).toBe('');
    expect(consoleErrors).toEqual([]);
  });

  type AdvisorRow = { tp: number; cp: number; cpCommType: string | null; pp: number; dp: number; recompute: string; distributedOptimizer: boolean;
    iterMs: number; totalBytes: number; tflopsPerGpu: number; tokensPerSecond: number; commFraction: number; why: string[] };
  type AdvisorHook = { error?: string; evaluated: number; fit: number; summary?: string; link?: string; gbs?: number; rows: AdvisorRow[]; seq?: number; gpus?: number; seqLength?: number };
  type AdvisorState = { runs: number; searches: number; seq: number; shown: number; pending: boolean };
  /** Waits until the advisor shows the newest input (its search runs DEBOUNCE_MS after typing, in a worker). */
  const advisorSettled = (p: Page) => p.waitForFunction(() => {
    const s = (window as unknown as { __flashring: { advisorState?: AdvisorState } }).__flashring.advisorState;
    return !!s && !s.pending && s.shown === s.seq;
  }, null, { timeout: 60_000 });
  /** The advisor's results once it shows the newest input. */
  const advisorOf = async (p: Page) => {
    await advisorSettled(p);
    return hooks<AdvisorHook>(p, 'advisor');
  };
  /** The advisor's error area once it shows the newest input. */
  const advisorError = async (p: Page) => {
    await advisorSettled(p);
    return p.textContent('#advisor-error');
  };
  const cliAdvise = (args: string[]) => {
    const r = spawnSync('node', ['bin/flashring.mjs', 'advise', ...args, '--json'], { encoding: 'utf8', maxBuffer: 64 << 20 });
    expect(r.status, r.stderr).toBe(0);
    return JSON.parse(r.stdout) as { evaluated: number; timeChecked: unknown; untrainable: { why: string; layouts: number }[]; candidates: (AdvisorRow & { terms: unknown })[] };
  };
  /**
   * The page's why is the CLI's with each time in the page's words: the CLI's whole ms ('8397 ms') as the page's duration
   * of the same time ('8.4 s'; the CLI's figure is rounded, so duration of it give or take half a ms), the words exactly.
   */
  const sameWhy = (page: string[], cli: string[]) => {
    const TIME = /(\d+(?:\.\d+)?) (ms|s)\b/g, shape = (w: string) => w.replace(TIME, 'T');
    expect(page.map(shape)).toEqual(cli.map(shape));
    page.forEach((w, i) => {
      const cliMs = [...cli[i].matchAll(TIME)].map((m) => Number(m[1])), pageTimes = [...w.matchAll(TIME)].map((m) => m[0]);
      pageTimes.forEach((x, j) => expect([duration(cliMs[j] - 0.49), duration(cliMs[j]), duration(cliMs[j] + 0.49)]).toContain(x));
    });
  };
  /** The page's row is the CLI's candidate: the layout exactly, the why in the page's words (sameWhy), the figures to rounding. */
  const sameCandidate = (row: AdvisorRow, cli: AdvisorRow) => {
    const { iterMs, tflopsPerGpu, tokensPerSecond, commFraction, why, ...layout } = row;
    // (terms and memoryArgs are the CLI's JSON's own: the page shows neither)
    const { iterMs: i, tflopsPerGpu: t, tokensPerSecond: k, commFraction: c, terms: _, memoryArgs: _m, why: cliWhy, ...want } = cli as AdvisorRow & { terms?: unknown; memoryArgs?: string[] };
    expect(layout).toEqual(want);
    sameWhy(why, cliWhy);
    for (const [a, b] of [[iterMs, i], [tflopsPerGpu, t], [tokensPerSecond, k], [commFraction, c]]) expect(a).toBeCloseTo(b, 6);
  };

  it('the advisor panel: for the planner\'s model its top choice is flashring advise\'s; its inputs change the search and live in the URL', async () => {
    await page.evaluate(() => { location.hash = 'vocab=50257'; });
    await page.waitForFunction(() => (document.querySelector('input[name=vocab]') as HTMLInputElement).value === '50257');
    expect([await page.inputValue('select[name=preset]'), await page.inputValue('input[name=aseq]'), await page.inputValue('input[name=agpus]'), await page.inputValue('input[name=ahbm]')])
      .toEqual(['seed-32L-4096h', '131072', '8', '80']);
    // The seed's model with the CLI's default vocabulary: the acceptance line of issue 36.
    const cli = cliAdvise(['--num-layers', '32', '--hidden-size', '4096', '--num-attention-heads', '32', '--seq-length', '131072', '--gpus', '8', '--hbm-gib', '80']);
    const a = await advisorOf(page);
    expect(a.error).toBeUndefined();
    expect([a.evaluated, a.fit, a.rows.length]).toEqual([cli.evaluated, cli.candidates.length, 5]);
    a.rows.forEach((row, i) => sameCandidate(row, cli.candidates[i]));
    expect(a.rows[0].cp).toBeGreaterThan(1);
    const cells = await page.$$eval('#advisor-table tbody tr', (trs) => trs.map((tr) => Array.from(tr.querySelectorAll('td')).map((td) => td.textContent ?? '')));
    const c0 = cli.candidates[0];
    expect(cells).toHaveLength(5);
    expect(cells[0].slice(0, 13)).toEqual(['1', String(c0.tp), String(c0.cp), c0.cpCommType ?? '—', String(c0.pp), String(c0.dp), c0.recompute, c0.distributedOptimizer ? 'yes' : 'no',
      duration(c0.iterMs), c0.tflopsPerGpu.toFixed(0), c0.tokensPerSecond.toFixed(0), (100 * c0.commFraction).toFixed(1), (c0.totalBytes / GIB).toFixed(1)]);
    expect(cells[0][13]).toBe(a.rows[0].why.join('\n'));   // the row's why, which sameCandidate held to the CLI's
    // The seed's model has linear biases: the layouts recomputing mlp selectively are left out, with the reason (src/memory/untrainable.ts).
    expect(cli.untrainable.map((u) => u.why)).toEqual([MLP_RECOMPUTE_WITH_BIAS]);
    // … and how far the step times were checked (the profile's record, as advise prints it and gives it in --json).
    expect(cli.timeChecked).toEqual(H200.timeChecked);
    expect(MLP_RECOMPUTE_WITH_BIAS_PAGE).not.toBe(MLP_RECOMPUTE_WITH_BIAS);
    await advisorSettled(page);
    expect(await page.textContent('#advisor-summary')).toBe(`${cli.evaluated} layouts evaluated, ${cli.candidates.length} fit. ${cli.untrainable[0].layouts} layouts left out: ${MLP_RECOMPUTE_WITH_BIAS_PAGE}.`);
    expect(await page.textContent('#advisor-checked')).toBe(timeCheckedLines(H200).map((x) => x.trim()).join('\n'));
    // A planner line of that layout has that step time (its tooltip's figure: advise's default global batch, one sequence per GPU).
    const seedFlags = configFromFlags({ 'num-layers': '32', 'hidden-size': '4096', 'num-attention-heads': '32', 'seq-length': '131072' });
    expect(layoutTime(seedFlags.model, layoutConfig({ base: seedFlags.par }, { ...c0, cpCommType: (c0.cpCommType ?? undefined) as never })).time.iterMs).toBeCloseTo(c0.iterMs, 6);
    // The seed preset itself (its vocabulary, 128256): `advise --preset seed-32L-4096h`.
    await page.fill('input[name=vocab]', '128256');
    const seed = cliAdvise(['--preset', 'seed-32L-4096h', '--seq-length', '131072', '--gpus', '8', '--hbm-gib', '80']);
    sameCandidate((await advisorOf(page)).rows[0], seed.candidates[0]);
    // Its own inputs: more GPUs, more HBM, a slower link, a global batch, more rows.
    for (const [k, v] of [['agpus', '16'], ['ahbm', '141'], ['agbs', '32'], ['atop', '8']]) await page.fill(`#advisor-form input[name=${k}]`, v);
    await page.selectOption('#advisor-form select[name=alink]', 'pcie5');
    const b = await advisorOf(page);
    expect([b.error, b.link, b.gbs, b.rows.length]).toEqual([undefined, 'pcie5', 32, 8]);
    for (const r of b.rows) {
      expect(r.tp * r.cp * r.pp * r.dp).toBe(16);
      expect(r.totalBytes).toBeLessThanOrEqual(0.9 * 141 * GIB);
    }
    const slow = cliAdvise(['--preset', 'seed-32L-4096h', '--seq-length', '131072', '--gpus', '16', '--hbm-gib', '141', '--global-batch-size', '32', '--link', 'pcie5']);
    sameCandidate(b.rows[0], slow.candidates[0]);
    await page.selectOption('#advisor-form select[name=alink]', 'custom');
    expect(await page.isVisible('#advisor-form input[name=agbps]')).toBe(true);
    expect((await advisorOf(page)).link).toBe('custom');
    // The table's column names: short, the full one on hover.
    expect(await page.$$eval('#advisor-table th', (ths) => ths.map((th) => [th.textContent, (th as HTMLElement).title]).filter(([, t]) => t))).toEqual([
      ['scheme', 'CP comm type'], ['dist. opt.', 'distributed optimizer'], ['step', 'predicted step time'], ['TFLOP/s per GPU', 'model TFLOP/s per GPU'],
      ['comm %', 'communication not hidden, % of the step'], ['memory GiB', 'predicted peak memory per GPU']]);
    const q = new URLSearchParams(await page.evaluate(() => location.hash.slice(1)));
    expect(['agpus', 'ahbm', 'agbs', 'atop', 'alink', 'agbps'].map((k) => q.get(k))).toEqual(['16', '141', '32', '8', 'custom', '800']);
    await page.reload();
    await pageReady(page);
    expect(await page.inputValue('#advisor-form input[name=agbs]')).toBe('32');
    expect(await advisorOf(page)).toMatchObject({ link: 'custom', gbs: 32 });
    // The margin with the decimals it needs: 0.125 keeps 87.5% (not 88%), as advise's header says it.
    await page.fill('#advisor-form input[name=amargin]', '0.125');
    await advisorSettled(page);
    expect(await page.textContent('#advisor-table caption')).toContain(' GiB (fits ≤ 87.5%), ');
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (document.querySelector('#advisor-form select[name=alink]') as HTMLSelectElement).value === 'nvlink-h200');
    expect(await page.isVisible('#advisor-form input[name=agbps]')).toBe(false);
    expect(consoleErrors).toEqual([]);
  });

  it('bad advisor input is refused in the page\'s words with nothing drawn; nothing fitting is said plainly', async () => {
    const bad: [string, string, string][] = [
      ['aseq', '0', 'Sequence length must be a positive whole number (it is 0).'],
      ['agpus', '0', 'GPUs must be a positive whole number (it is 0).'],
      ['agpus', '100000', 'GPUs can be at most 65,536 (it is 100000).'],
      ['agpus', '12', 'GPUs (12) must be whole nodes of 8 beyond one node, as Megatron-LM runs them: 8 or 16.'],
      ['ahbm', '-1', 'HBM must be a positive number of GiB, at most 1,000,000 (it is -1).'],
      ['amargin', '2', 'Margin must be a fraction of the HBM kept free, from 0 to 0.9 (it is 2).'],
      ['agbs', '2.5', 'Global batch must be a positive whole number (it is 2.5).'],
      ['atop', '0', 'Show top must be a positive whole number (it is 0).'],
    ];
    const drawnNothing = async () => {
      const a = await advisorOf(page);
      expect([a.rows, a.fit]).toEqual([[], 0]);
      expect(await page.textContent('#advisor-table')).toBe('');
      expect(await page.textContent('#advisor-summary')).toBe('');
      expect(await page.textContent('#advisor-checked')).toBe('');
      return a;
    };
    for (const [k, value, want] of bad) {
      const sel = `#advisor-form input[name=${k}]`, old = await page.inputValue(sel);
      await page.fill(sel, value);
      expect(await advisorError(page), `${k}=${value}`).toBe(want);
      expect((await drawnNothing()).error).toBe(want);
      // Beside the field too, which is marked invalid (a red outline); no other field is.
      expect(await fieldMarks(page, '#advisor-form')).toEqual([{ name: k, message: want, describedBy: true }]);
      expect(await page.$eval(sel, (e) => getComputedStyle(e).outlineColor)).toBe('rgb(176, 0, 32)');
      expect(new URLSearchParams(await page.evaluate(() => location.hash.slice(1))).get(k)).toBe(value);
      await page.fill(sel, old);
      expect(await advisorError(page)).toBe('');
      expect(await fieldMarks(page, '#advisor-form')).toEqual([]);
      expect(await page.$eval(sel, (e) => getComputedStyle(e).outlineColor)).not.toBe('rgb(176, 0, 32)'); // (focused: the browser's own focus ring)
      expect((await advisorOf(page)).rows.length).toBe(5);
    }
    // Two fields wrong at once (a sequence length that is not a number, 0 GPUs): each marked beside it, the first said under the form.
    await page.fill('#advisor-form input[name=aseq]', '');
    await page.fill('#advisor-form input[name=agpus]', '0');
    expect(await advisorError(page)).toBe('Sequence length must be a positive whole number (it is empty or not a number).');
    expect(await fieldMarks(page, '#advisor-form')).toEqual([
      { name: 'aseq', message: 'Sequence length must be a positive whole number (it is empty or not a number).', describedBy: true },
      { name: 'agpus', message: 'GPUs must be a positive whole number (it is 0).', describedBy: true },
    ]);
    await page.fill('#advisor-form input[name=aseq]', '131072');
    expect(await advisorError(page)).toBe('GPUs must be a positive whole number (it is 0).');
    expect((await fieldMarks(page, '#advisor-form')).map((m) => m.name)).toEqual(['agpus']);
    await page.fill('#advisor-form input[name=agpus]', '8');
    expect(await advisorError(page)).toBe('');
    expect(await fieldMarks(page, '#advisor-form')).toEqual([]);
    await page.selectOption('#advisor-form select[name=alink]', 'custom');
    await page.fill('#advisor-form input[name=agbps]', '0');
    expect(await advisorError(page)).toBe('Link bandwidth (Gbit/s) must be a number from 0.000001 to 1,000,000 (it is 0).');
    expect((await fieldMarks(page, '#advisor-form')).map((m) => m.name)).toEqual(['agbps']);
    await drawnNothing();
    await page.selectOption('#advisor-form select[name=alink]', 'nvlink-h200');
    expect(await fieldMarks(page, '#advisor-form')).toEqual([]);
    // An EP that does not divide the GPUs (the planner's MoE model at EP 16, the advisor's 8 GPUs): refused on the GPUs field, as advise refuses it.
    await page.fill('input[name=experts]', '16');
    await page.fill('input[name=ep]', '16');
    expect(await advisorError(page)).toBe("GPUs (8) must be a multiple of the planner's EP (16): Megatron-LM forms the expert-parallel groups inside the DP × CP ranks (expert tensor parallelism being TP), which divide the GPUs.");
    expect((await fieldMarks(page, '#advisor-form')).map((m) => m.name)).toEqual(['agpus']);
    await drawnNothing();
    await page.fill('#advisor-form input[name=agpus]', '16');
    expect(await advisorError(page)).toBe('');
    await page.fill('#advisor-form input[name=agpus]', '8');
    await page.fill('input[name=ep]', '1');
    await page.fill('input[name=experts]', '0');
    expect(await advisorError(page)).toBe('');
    // The planner's model is not valid: the panel says to fix it (the planner says what, beside its field).
    await page.fill('input[name=heads]', '30');
    expect(await advisorError(page)).toBe("Fix the planner's fields above first: the advisor searches layouts of their model.");
    expect(await fieldMarks(page, '#advisor-form')).toEqual([]);
    expect((await fieldMarks(page, '#planner-form')).map((m) => m.name)).toEqual(['heads']);
    await drawnNothing();
    await page.fill('input[name=heads]', '32');
    // Nothing fits in 2 GiB: no error, the smallest layout named.
    await page.fill('#advisor-form input[name=ahbm]', '2');
    expect(await advisorError(page)).toBe('');
    // (The seed's model has linear biases: the layouts recomputing mlp selectively are left out, said after.)
    const summary = (await page.textContent('#advisor-summary'))!;
    expect(summary).toMatch(/^\d+ layouts evaluated, 0 fit: the smallest is TP=\d+( \(no SP\))? CP=\d+( \(\w+\))? PP=\d+( VP=\d+)? DP=\d+ recompute=\S+( distributed-optimizer)? at [\d.]+ GiB\. \d+ layouts left out: /);
    expect(summary.endsWith(` layouts left out: ${MLP_RECOMPUTE_WITH_BIAS_PAGE}.`)).toBe(true);
    expect((await advisorOf(page)).rows).toEqual([]);
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { advisor: AdvisorHook } }).__flashring.advisor.rows.length === 5);
    expect(consoleErrors).toEqual([]);
  });

  it('the advisor searches once the typing pauses (five quick keystrokes: one search), at once on Enter or leaving the field, and never draws an older input over a newer one', async () => {
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { advisor: AdvisorHook } }).__flashring.advisor.rows.length === 5);
    await advisorSettled(page);
    const state = () => hooks<AdvisorState>(page, 'advisorState');
    const aseq = page.locator('#advisor-form input[name=aseq]');
    // The runs so far, as each keystroke lands (in the page: no round trip of the test's in between).
    await page.evaluate(() => {
      const w = window as unknown as { __flashring: { advisorState: AdvisorState }; runsAtKeys: number[] };
      w.runsAtKeys = [];
      document.querySelector('#advisor-form input[name=aseq]')!.addEventListener('input', () => w.runsAtKeys.push(w.__flashring.advisorState.runs));
    });
    const before = await state();
    // Five keystrokes' input events in one task of the page: no gap between them, however busy the machine.
    await page.evaluate(() => {
      const el = document.querySelector<HTMLInputElement>('#advisor-form input[name=aseq]')!;
      for (const v of ['6', '65', '655', '6553', '65536']) {
        el.value = v;
        el.dispatchEvent(new Event('input', { bubbles: true }));
      }
    });
    await advisorSettled(page);
    const after = await state();
    expect(await page.evaluate(() => (window as unknown as { runsAtKeys: number[] }).runsAtKeys)).toEqual([1, 2, 3, 4, 5].map(() => before.runs));
    expect([after.runs - before.runs, after.searches - before.searches, after.seq - before.seq]).toEqual([1, 1, 5]);
    const a = await advisorOf(page);
    expect([a.seqLength, a.rows.length]).toEqual([65536, 5]);
    expect(await page.textContent('#advisor-table caption')).toMatch(/ at 65,536 tokens on 8 GPUs /);
    // Enter searches at once; so does leaving the field (its change event); neither waits for the pause.
    // Typed, then Enter, in one task of the page (a busy machine cannot let the pause pass in between): no run on the
    // typing, one on the Enter.
    expect(await page.evaluate(() => {
      const el = document.querySelector<HTMLInputElement>('#advisor-form input[name=aseq]')!;
      const st = (window as unknown as { __flashring: { advisorState: AdvisorState } }).__flashring.advisorState;
      el.value = '32768';
      el.dispatchEvent(new Event('input', { bubbles: true }));
      const typed = st.runs;
      el.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true, cancelable: true }));
      return [typed, st.runs];
    })).toEqual([after.runs, after.runs + 1]);
    expect((await advisorOf(page)).seqLength).toBe(32768);
    await aseq.fill('16384');
    await aseq.blur();
    expect((await state()).runs).toBe(after.runs + 2);
    expect((await advisorOf(page)).seqLength).toBe(16384);
    expect((await state()).runs).toBe(after.runs + 2); // the pause after the typing runs nothing more
    // A slow search (65,536 GPUs: seconds) overtaken by a newer input: its results never appear, the newer ones do.
    const agpus = page.locator('#advisor-form input[name=agpus]');
    await page.evaluate(() => {
      const w = window as unknown as { captions: string[] };
      w.captions = [];
      new MutationObserver(() => w.captions.push(document.querySelector('#advisor-table caption')?.textContent ?? '')).observe(document.getElementById('advisor-table')!, { childList: true });
    });
    await agpus.fill('65536');
    await agpus.press('Enter');
    expect((await state()).pending).toBe(true);
    await agpus.fill('16');
    await agpus.press('Enter');
    const b = await advisorOf(page);
    expect(b.gpus).toBe(16);
    await page.waitForTimeout(1000); // time for a late answer of the first search, were it still running
    expect((await advisorOf(page)).gpus).toBe(16);
    const captions = await page.evaluate(() => (window as unknown as { captions: string[] }).captions);
    expect(captions.length).toBeGreaterThan(0);
    for (const c of captions) expect(c).not.toMatch(/65536 GPUs/);
    expect(captions.at(-1)).toMatch(/ on 16 GPUs /);
    const s = await state();
    expect([s.shown, s.pending]).toEqual([s.seq, false]);
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { advisor: AdvisorHook } }).__flashring.advisor.seqLength === 131072);
    expect(consoleErrors).toEqual([]);
  });

  it('the advisor\'s table fits its panel: no horizontal scroll at the page\'s width, a scroll of its own only in a narrow window', async () => {
    await advisorSettled(page);
    const overflow = () => page.$eval('#advisor-table', (t) => {
      const box = t.parentElement!;
      return { table: t.getBoundingClientRect().width, box: box.clientWidth, scroll: box.scrollWidth, section: document.getElementById('advisor')!.clientWidth };
    });
    const wide = await overflow();
    expect(wide.scroll).toBeLessThanOrEqual(wide.box);
    expect(wide.table).toBeLessThanOrEqual(wide.section);
    expect(wide.table).toBeGreaterThan(0.9 * wide.section); // it uses the panel's width
    await page.setViewportSize({ width: 640, height: 1800 });
    try {
      const narrow = await overflow();
      expect(narrow.box).toBeLessThanOrEqual(640);
      expect(narrow.scroll).toBeGreaterThan(narrow.box); // it scrolls inside its box, the page does not
    } finally {
      await page.setViewportSize({ width: 1100, height: 1800 });
    }
  });

  /** The total GiB of the breakdown's point (the first line's last fitting length: one length, one line here). */
  const breakdownGib = async (p: Page) => Number(/^CP=1 at 4K tokens: ([\d.]+) GiB per GPU/.exec((await p.textContent('#planner-breakdown'))!)![1]);

  it('the knobs of flashring memory the planner lacked: each changes the lines, the whole set is the CLI\'s figure, they survive a reload and bad values are refused', async () => {
    await page.evaluate(() => { location.hash = 'preset=seed-32L-4096h&lines=1&seqs=4096'; });
    await page.waitForFunction(() => /^CP=1 at 4K tokens/.test(document.getElementById('planner-breakdown')!.textContent ?? ''));
    expect([await page.inputValue('input[name=attdrop]'), await page.inputValue('input[name=hiddrop]'), await page.inputValue('select[name=pos]'), await page.isChecked('input[name=untie]'),
      await page.isChecked('input[name=nobias]'), await page.inputValue('select[name=norm]')]).toEqual(['0.1', '0.1', '', false, false, 'LayerNorm']);
    const modelOf = async () => (await hooks<{ model: { biasLinear: boolean; rmsNorm: boolean } }>(page, 'planner')).model;
    expect(await modelOf()).toEqual({ biasLinear: true, rmsNorm: false });
    const base = await breakdownGib(page);
    const moves: [string, () => Promise<void>, 'up' | 'down' | 'same' | 'not up'][] = [
      ['DP 4 alone (no sharding)', () => page.fill('input[name=dp]', '4'), 'same'],
      ['distributed optimizer over DP 4', () => page.check('input[name=distopt]'), 'down'],
      ['untied embeddings', () => page.check('input[name=untie]'), 'up'],
      ['fp32 residual', () => page.check('input[name=fp32res]'), 'up'],
      // torch AdamW's step: 4 B a parameter of this GPU's shard, below the activations it follows here
      ['torch AdamW', () => page.check('input[name=torchopt]'), 'same'],
      ['attention dropout 0 (FlashAttention stores no mask anyway)', () => page.fill('input[name=attdrop]', '0'), 'same'],
      ['hidden dropout 0: no dropout masks', () => page.fill('input[name=hiddrop]', '0'), 'down'],
      ['rope: no learned position table', () => page.selectOption('select[name=pos]', 'rope').then(() => undefined), 'down'],
      ['PP 2', () => page.fill('input[name=pp]', '2'), 'down'],
      ['4 layers per virtual stage (interleaved)', () => page.fill('input[name=vpp]', '4'), 'up'],
      ['no FlashAttention: the s² scores stored', () => page.uncheck('input[name=flash]'), 'up'],
      ['attention dropout 0.1 without FlashAttention: its s² mask and output', () => page.fill('input[name=attdrop]', '0.1'), 'up'],
      // Parameters only, a few MiB here: at most a rounding step in GiB to two decimals (the model's fields are checked below).
      ['no linear biases', () => page.check('input[name=nobias]'), 'not up'],
      ['RMSNorm', () => page.selectOption('select[name=norm]', 'RMSNorm').then(() => undefined), 'not up'],
    ];
    let last = base;
    for (const [what, act, dir] of moves) {
      await act();
      expect((await plannerOf(page)).error, what).toBeUndefined();
      const now = await breakdownGib(page);
      if (dir === 'same') expect(now, what).toBe(last);
      else if (dir === 'not up') {
        expect(now, `${what}: ${last} → ${now}`).toBeLessThanOrEqual(last);
        expect(last - now, `${what}: ${last} → ${now}`).toBeLessThan(0.015);
      }
      else expect(dir === 'up' ? now > last : now < last, `${what}: ${last} → ${now}`).toBe(true);
      last = now;
    }
    // The same settings as flashring memory's flags (src/cli/memory.ts configFromFlags): the same bytes.
    const { model, par } = configFromFlags({
      preset: 'seed-32L-4096h', 'seq-length': '4096', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'pipeline-model-parallel-size': '2',
      'num-layers-per-virtual-pipeline-stage': '4', 'data-parallel-size': '4', 'use-distributed-optimizer': true, 'fp32-residual-connection': true, 'torch-optimizer': true,
      'untie-embeddings-and-output-weights': true, 'attention-dropout': '0.1', 'hidden-dropout': '0', 'position-embedding-type': 'rope', 'no-use-flash-attn': true,
      'disable-bias-linear': true, normalization: 'RMSNorm',
    });
    expect(last).toBe(Number((memoryBreakdown(model, par).totalBytes / GIB).toFixed(2)));
    expect(await modelOf()).toEqual({ biasLinear: model.biasLinear, rmsNorm: model.rmsNorm });
    expect(await modelOf()).toEqual({ biasLinear: false, rmsNorm: true });
    const q = new URLSearchParams(await page.evaluate(() => location.hash.slice(1)));
    expect(['dp', 'distopt', 'untie', 'fp32res', 'torchopt', 'attdrop', 'hiddrop', 'pos', 'pp', 'vpp', 'flash', 'nobias', 'norm'].map((k) => q.get(k))).toEqual(['4', '1', '1', '1', '1', '0.1', '0', 'rope', '2', '4', '0', '1', 'RMSNorm']);
    await page.reload();
    await pageReady(page);
    expect([await page.isChecked('input[name=distopt]'), await page.isChecked('input[name=torchopt]'), await page.inputValue('select[name=pos]'), await page.inputValue('input[name=vpp]'), await page.isChecked('input[name=nobias]'), await page.inputValue('select[name=norm]')]).toEqual([true, true, 'rope', '4', true, 'RMSNorm']);
    expect(await breakdownGib(page)).toBe(last);
    // Bad values in the page's words, nothing drawn.
    for (const [sel, value, want] of [
      ['input[name=attdrop]', '1', 'Attention dropout must be a probability, at least 0 and below 1 (it is 1).'],
      ['input[name=hiddrop]', '-0.1', 'Hidden dropout must be a probability, at least 0 and below 1 (it is -0.1).'],
      ['input[name=dp]', '0', 'DP must be a positive whole number (it is 0).'],
      ['input[name=vpp]', '3', 'Layers per virtual stage (3) must divide the 16 layers of a pipeline stage (layers ÷ PP).'],
    ] as const) await refusedThenRestored(page, sel, value, want);
    // MoE: the capacity factor and EP, greyed on a dense model.
    expect([await page.isDisabled('input[name=capacity]'), await page.isDisabled('input[name=ep]')]).toEqual([true, true]);
    await page.fill('input[name=experts]', '8');
    const moe = await breakdownGib(page);
    await page.fill('input[name=ep]', '4');
    expect(await breakdownGib(page)).toBeLessThan(moe); // each GPU holds 2 of the 8 experts
    await page.fill('input[name=ep]', '3');
    expect(await page.textContent('#planner-error')).toBe('Experts (8) must be divisible by EP (3).');
    await page.fill('input[name=ep]', '4');
    await page.fill('input[name=capacity]', '0');
    expect(await page.textContent('#planner-error')).toBe('Capacity factor must be a positive number, at most 1,000,000 (empty: no token dropping) (it is 0).');
    await page.fill('input[name=capacity]', '1');
    expect(await page.textContent('#planner-error')).toBe('');
    expect(new URLSearchParams(await page.evaluate(() => location.hash.slice(1))).get('capacity')).toBe('1');
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (document.querySelector('input[name=dp]') as HTMLInputElement).value === '1');
    expect([await page.isChecked('input[name=distopt]'), await page.isChecked('input[name=torchopt]'), await page.inputValue('select[name=pos]'), await page.inputValue('input[name=experts]')]).toEqual([false, false, '', '0']);
    expect(consoleErrors).toEqual([]);
  });

  it('a planner point\'s tooltip gives its predicted step time and TFLOP/s per GPU; a recomputing line\'s, what recompute saves and costs', async () => {
    await page.evaluate(() => { location.hash = 'preset=seed-32L-4096h&lines=1:recompute&seqs=4096,131072'; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { planner: { lines: string[] } } }).__flashring.planner.lines.join() === 'CP=1 + recompute,HBM 80 GiB');
    await page.locator('#planner-chart').scrollIntoViewIfNeeded();
    const tip = await hoverPlanner(page, 'CP=1 + recompute', 131072);
    const { model, par } = configFromFlags({
      preset: 'seed-32L-4096h', 'seq-length': '131072', 'tensor-model-parallel-size': '8', 'sequence-parallel': true, 'cp-comm-type': 'p2p',
      'recompute-granularity': 'full', 'recompute-method': 'uniform', 'recompute-num-layers': '1', // the seed's "+ recompute": it has linear biases
    });
    const t = layoutTime(model, par), rc = recomputeCost(model, par)!;
    expect(t.globalBatch).toBe(8); // one sequence per GPU of TP 8
    // The tooltip's figures to three significant digits (within half a unit of the third: 0.5%).
    const seconds = (n: string, unit: string) => Number(n) / (unit === 's' ? 1 : 1e3);
    const near = (shown: number, exact: number) => expect(Math.abs(shown - exact) / exact, `${shown} for ${exact}`).toBeLessThanOrEqual(0.005);
    const step = /^step ([\d.]+) (ms|s) · ([\d.]+) TFLOP\/s per GPU · comm [\d.]+%$/m.exec(tip);
    expect(step, tip).not.toBeNull();
    near(seconds(step![1], step![2]), t.time.iterMs / 1e3);
    near(Number(step![3]), t.time.tflopsPerGpu);
    const cost = /^recompute saves ([\d.]+) GiB for \+([\d.]+) (ms|s) a step \(\+([\d.]+)%\)$/m.exec(tip);
    expect(cost, tip).not.toBeNull();
    near(Number(cost![1]), rc.savedBytes / GIB);
    near(seconds(cost![2], cost![3]), rc.costMs / 1e3);
    expect(rc.savedBytes).toBeGreaterThan(0);
    expect(rc.costMs).toBeGreaterThan(0);
    // In full beside the breakdown, for the point hovered: the same figures as the tooltip (one formatter: a step
    // of 4259484 ms was "4260 s" in the tooltip and "4259484 ms" here), the global batch and GPUs they are for.
    const full = (await page.textContent('#planner-time'))!;
    expect(full).toMatch(/^CP=1 \+ recompute at \d+K tokens: predicted step [\d.]+ (ms|s), .*; for a global batch of 8 on 8 GPUs \(TP 8 × CP 1 × PP 1 × DP 1\), NVIDIA H200 profile, nvlink-h200; .*recompute saves [\d.]+ GiB and costs [\d.]+ (ms|s) per step/);
    const fullStep = /predicted step ([\d.]+) (ms|s), (\d+) TFLOP\/s per GPU/.exec(full)!;
    expect(`${fullStep[1]} ${fullStep[2]}`).toBe(`${step![1]} ${step![2]}`);
    expect(Math.abs(Number(fullStep[3]) - t.time.tflopsPerGpu)).toBeLessThanOrEqual(1);
    const fullCost = /recompute saves ([\d.]+) GiB and costs ([\d.]+) (ms|s) per step \(\+([\d.]+)% against no recompute\)/.exec(full)!;
    expect(Number(fullCost[1])).toBeCloseTo(rc.savedBytes / GIB, 1);
    expect(`${fullCost[2]} ${fullCost[3]}`).toBe(`${cost![2]} ${cost![3]}`);
    // A line without recompute: the step time, no recompute cost.
    await page.fill('input[name=lines]', '2');
    await page.locator('#planner-chart').scrollIntoViewIfNeeded();
    const plain = await hoverPlanner(page, 'CP=2', 131072);
    expect(plain).toMatch(/^step [\d.]+ (ms|s) · [\d.]+ TFLOP\/s per GPU · comm [\d.]+%$/m);
    expect(plain).not.toMatch(/recompute saves/);
    expect(await page.textContent('#planner-time')).toMatch(/^CP=2 at \d+K tokens: predicted step [\d.]+ (ms|s), \d+ TFLOP\/s per GPU, .*; for a global batch of 16 on 16 GPUs \(TP 8 × CP 2 × PP 1 × DP 1\)/);
    await page.evaluate(() => { location.hash = ''; });
    await page.waitForFunction(() => (window as unknown as { __flashring: { planner: { lines: string[] } } }).__flashring.planner.lines.length >= 6);
    expect(consoleErrors).toEqual([]);
  });
});

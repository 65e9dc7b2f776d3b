/**
 * The built page in real headless Chromium (Debian's chromium through playwright-core, WebGPU on
 * SwiftShader): loads without console errors, the planner draws its five lines and the OOM
 * markers, a small live ring run completes within tolerance, a dropped Megatron-LM log adds
 * points, and a screenshot is saved under test-output/ for people to look at.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM, CHROMIUM_ARGS } from '../bench/png.js';

let server: { close(): Promise<void>; url: string } | null = null;
let browser: Browser;
let page: Page;
const consoleErrors: string[] = [];
const out = join(__dirname, '..', 'test-output');

beforeAll(async () => {
  const vite = await import('vite');
  await vite.build({ logLevel: 'error', build: { outDir: 'test-output/dist', emptyOutDir: true } });
  const pv = await vite.preview({ logLevel: 'error', preview: { port: 0, host: '127.0.0.1' }, build: { outDir: 'test-output/dist' } });
  const addr = pv.httpServer.address() as { port: number };
  server = { url: `http://127.0.0.1:${addr.port}/`, close: () => new Promise((r) => pv.httpServer.close(() => r())) };
  const { chromium } = await import('playwright-core');
  browser = await chromium.launch({ executablePath: CHROMIUM, args: [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'] });
  page = await browser.newPage({ viewport: { width: 1100, height: 1800 } });
  page.on('console', (m) => { if (m.type() === 'error') consoleErrors.push(m.text()); });
  page.on('pageerror', (e) => consoleErrors.push(e.message));
  await page.goto(server.url);
  await page.waitForFunction(() => (window as unknown as { __flashring?: { ready?: boolean } }).__flashring?.ready === true, null, { timeout: 30_000 });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

const hooks = <T>(p: Page, key: string) => p.evaluate((k) => (window as unknown as { __flashring: Record<string, unknown> }).__flashring[k], key) as Promise<T>;

describe('the page in headless Chromium', () => {
  it('loads with no console errors', () => {
    expect(consoleErrors).toEqual([]);
  });

  it('the planner draws the five default lines, the HBM limit and OOM markers', async () => {
    const p = await hooks<{ lines: string[]; oomMarkers: number }>(page, 'planner');
    expect(p.lines.slice(0, 5)).toEqual(['CP=1', 'CP=1 + recompute', 'CP=2', 'CP=4', 'CP=4 + recompute']);
    expect(p.lines).toContain('HBM 80 GiB');
    expect(p.oomMarkers).toBeGreaterThanOrEqual(5);
  });

  it('the view lives in the URL: a changed knob survives a reload', async () => {
    await page.fill('input[name=tp]', '4');
    await page.dispatchEvent('input[name=tp]', 'input');
    expect(page.url()).toMatch(/tp=4/);
    await page.reload();
    await page.waitForFunction(() => (window as unknown as { __flashring?: { ready?: boolean } }).__flashring?.ready === true);
    expect(await page.inputValue('input[name=tp]')).toBe('4');
    await page.fill('input[name=tp]', '8');
    await page.dispatchEvent('input[name=tp]', 'input');
  });

  it('replay shows the shipped measured dataset; a dropped Megatron-LM log adds a point; a bad file is named', async () => {
    const before = await hooks<{ measuredPoints: number }>(page, 'replay');
    expect(before.measuredPoints).toBeGreaterThan(10);
    await page.setInputFiles('#replay-files', join(__dirname, 'fixtures/megatron/core_0.16_tp4_cp2_sp_selective.log'));
    await page.waitForFunction((n) => (window as unknown as { __flashring: { replay: { measuredPoints: number } } }).__flashring.replay.measuredPoints > n, before.measuredPoints);
    await page.setInputFiles('#replay-files', { name: 'broken.csv', mimeType: 'text/csv', buffer: Buffer.from('foo,bar\n1,2\n') });
    await page.waitForSelector('#replay-messages li.bad');
    expect(await page.textContent('#replay-messages li.bad')).toMatch(/broken\.csv: could not be read .*missing column/);
    const after = await hooks<{ measuredPoints: number }>(page, 'replay');
    expect(after.measuredPoints).toBe(before.measuredPoints + 1);
  });

  it('without WebGPU the planner and replay still work and the live panel says why', async () => {
    const p2 = await browser.newPage();
    const errs: string[] = [];
    p2.on('pageerror', (e) => errs.push(e.message));
    await p2.addInitScript(() => { Object.defineProperty(Navigator.prototype, 'gpu', { get: () => undefined }); });
    await p2.goto(server!.url);
    await p2.waitForFunction(() => (window as unknown as { __flashring?: { ready?: boolean } }).__flashring?.ready === true);
    expect(await p2.textContent('#live-support')).toMatch(/WebGPU is not available.*enable-unsafe-webgpu/);
    expect(await p2.isDisabled('#live-run')).toBe(true);
    expect((await hooks<{ lines: string[] }>(p2, 'planner')).lines.length).toBeGreaterThanOrEqual(6);
    expect(errs).toEqual([]);
    await p2.close();
  });

  it('a bench timeline JSON dropped on the live panel is drawn; a wrong JSON is refused by name', async () => {
    const tl = { kind: 'flashring.timeline', version: 1, R: 2, layout: 'zigzag', adapters: ['x'], summary: { overlapEfficiency: 0.5 },
      phases: [{ phase: 'forward', wallMs: 10, steps: [0, 1].flatMap((step) => [0, 1].map((rank) => ({ step, rank, start: step * 5, computeEnd: step * 5 + 3, transferEnd: step * 5 + 4, end: step * 5 + 4, transferMs: 2, idleMs: 1 }))) }] };
    await page.setInputFiles('#timeline-file', { name: 'ring.timeline.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tl)) });
    await page.waitForFunction(() => /showing ring\.timeline\.json: R=2 zigzag/.test(document.getElementById('live-status')!.textContent ?? ''));
    await page.setInputFiles('#timeline-file', { name: 'other.json', mimeType: 'application/json', buffer: Buffer.from('{"a":1}') });
    await page.waitForFunction(() => /other\.json could not be read/.test(document.getElementById('live-status')!.textContent ?? ''));
  });

  it('a small live ring run on WebGPU completes within tolerance', async () => {
    await page.fill('#live-form input[name=N]', '48');
    await page.fill('#live-form input[name=D]', '16');
    await page.fill('#live-form input[name=H]', '2');
    await page.fill('#live-form input[name=R]', '2');
    await page.selectOption('#live-form select[name=precision]', 'f32');
    await page.click('#live-run');
    await page.waitForFunction(() => (window as unknown as { __flashring: { live?: { done?: boolean } } }).__flashring.live?.done === true, null, { timeout: 240_000 });
    const live = await hooks<{ ok?: boolean; errors?: Record<string, number>; failed?: string }>(page, 'live');
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    for (const [k, e] of Object.entries(live.errors!)) expect(e, k).toBeLessThanOrEqual(k.startsWith('d') ? 1e-4 : 1e-5);
    expect(await page.textContent('#live-results')).toMatch(/within tolerance/);
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
    await page.fill('#live-form input[name=R]', '2');
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
    expect(consoleErrors).toEqual([]);
  });

  it('Cancel acts within a second; the next run reuses the devices', async () => {
    const acquired = await hooks<number>(page, 'liveDevicesAcquired');
    expect(acquired).toBe(2); // the first live run's two ranks
    await page.fill('#live-form input[name=N]', '4096'); // seconds per ring step on SwiftShader
    await page.fill('#live-form input[name=D]', '16');
    await page.fill('#live-form input[name=H]', '2');
    await page.click('#live-run');
    await page.waitForFunction(() => /^running on/.test(document.getElementById('live-status')!.textContent ?? ''), null, { timeout: 60_000 });
    const t0 = Date.now();
    await page.click('#live-cancel');
    await page.waitForFunction(() => document.getElementById('live-status')!.textContent === 'cancelled', null, { timeout: 5_000 });
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(await page.isDisabled('#live-run')).toBe(false);
    expect(await hooks<{ cancelled?: boolean }>(page, 'live')).toEqual({ done: true, cancelled: true });
    await page.fill('#live-form input[name=N]', '32');
    await page.fill('#live-form input[name=D]', '16');
    await page.fill('#live-form input[name=H]', '1');
    await page.click('#live-run');
    await liveDone(page);
    expect((await hooks<{ ok?: boolean }>(page, 'live')).ok).toBe(true);
    expect(await hooks<number>(page, 'liveDevicesAcquired')).toBe(2);
    expect(consoleErrors).toEqual([]);
  }, 300_000);
});

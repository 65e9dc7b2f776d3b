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
});

/**
 * The live panel of the built page in real headless Chromium (WebGPU on SwiftShader), beyond
 * test/page.test.ts: Cancel then Run on a run with long steps (the next run waits, says so, and
 * sees nothing of the cancelled one), what the results say about overlap in one-device mode, the
 * live form in the URL hash, Tune's words, the step numbering, where each timeline's caption
 * sits, and the timelines in a phone's window (drawn at its width, their text full size). The
 * harness is page.test.ts's (its own build folder, so the two files may run at once).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { formatBytes } from '../src/bytes.js';
import { type PageHarness, collectErrors, hooks, openPage, pageReady, startPage, viewHash } from './page-harness.js';

let server: PageHarness | null = null;
let page: Page;
const consoleErrors: string[] = [];
/** WebGPU's validation errors reach Chromium's console as warnings ("… used in submit while destroyed"). */
const gpuWarnings: string[] = [];
const out = join(__dirname, '..', 'test-output');

beforeAll(async () => {
  server = await startPage('test-output/dist-live');
  page = await openPage(server, consoleErrors, '', (p) => p.on('console', (m) => { if (m.type() === 'warning' && /destroyed|WebGPU|GPU/i.test(m.text())) gpuWarnings.push(m.text()); }));
}, 120_000);

afterAll(async () => {
  await server?.close();
});

const ready = pageReady;
const status = (p: Page) => p.textContent('#live-status');
const liveDone = (p: Page, timeout = 240_000) =>
  p.waitForFunction(() => (window as unknown as { __flashring: { live?: { done?: boolean } } }).__flashring.live?.done === true, null, { timeout });
async function fill(p: Page, fields: Record<string, string>, selects: Record<string, string> = {}): Promise<void> {
  for (const [k, v] of Object.entries(selects)) await p.selectOption(`#live-form select[name=${k}]`, v);
  for (const [k, v] of Object.entries(fields)) await p.fill(`#live-form input[name=${k}]`, v);
}
type Live = { done?: boolean; ok?: boolean; failed?: string; cancelled?: boolean };

/**
 * The measured timeline's text as it shows: rank 0's label (the leftmost ink of its row, ±12 CSS px about the middle of
 * its first step's box, up to the blank band before the boxes), its glyphs' height in CSS px, beside "rank 0" drawn in
 * 10 px system-ui; the canvas's CSS and backing widths; ink in its last 2 CSS px of columns (text cut at the right edge).
 */
const timelineText = (p: Page) => p.evaluate(() => {
  const c = document.getElementById('timeline') as HTMLCanvasElement, r = c.getBoundingClientRect(), dpr = window.devicePixelRatio;
  const at = (window as unknown as { __flashring: { timelineSteps: { at(...a: unknown[]): { y: number } } } }).__flashring.timelineSteps.at('timeline', 'forward', 0, 0);
  const tallest = (g: CanvasRenderingContext2D, y0: number, y1: number, xs: (y: number) => boolean) => {
    let best = 0, run = 0;
    for (let y = y0; y < y1; y++) best = Math.max(best, (run = xs(y) ? run + 1 : 0));
    return best;
  };
  const g = c.getContext('2d')!, d = g.getImageData(0, 0, c.width, c.height).data, ink = (x: number, y: number) => d[(y * c.width + x) * 4 + 3] > 64;
  const k = c.height / r.height, y0 = Math.max(0, Math.floor((at.y - r.top - 12) * k)), y1 = Math.min(c.height, Math.ceil((at.y - r.top + 12) * k));
  const inkedColumn = (x: number) => { for (let y = y0; y < y1; y++) if (ink(x, y)) return true; return false; };
  let x0 = 0;
  while (x0 < c.width && !inkedColumn(x0)) x0++;
  let x1 = x0, blank = 0;
  for (; x1 < c.width && blank < 10 * dpr; x1++) blank = inkedColumn(x1) ? 0 : blank + 1;
  const label = tallest(g, y0, y1, (y) => { for (let x = x0; x < x1; x++) if (ink(x, y)) return true; return false; });
  const ref = Object.assign(document.createElement('canvas'), { width: Math.ceil(80 * dpr), height: Math.ceil(30 * dpr) }).getContext('2d')!;
  ref.scale(dpr, dpr);
  ref.font = '10px system-ui';
  ref.fillText('rank 0', 2, 20);
  const rd = ref.getImageData(0, 0, ref.canvas.width, ref.canvas.height).data;
  const ref10 = tallest(ref, 0, ref.canvas.height, (y) => { for (let x = 0; x < ref.canvas.width; x++) if (rd[(y * ref.canvas.width + x) * 4 + 3] > 64) return true; return false; });
  let inkRight = 0;
  for (let x = c.width - Math.round((2 * c.width) / r.width); x < c.width; x++) for (let y = 0; y < c.height; y++) if (ink(x, y)) inkRight++;
  return { ink: label / k, ink10: ref10 / dpr, css: r.width, backing: c.width, inkRight };
});

describe('the live panel in headless Chromium', () => {
  it('Cancel, then Run: the new run says it waits for the cancelled run\'s step, then runs clean (no error of the cancelled run)', async () => {
    // Long ring steps on SwiftShader: each rank's compute takes a while, four ranks take turns.
    await fill(page, { N: '4096', D: '32', H: '4', R: '4' }, { scheme: 'p2p', precision: 'f32' });
    await page.click('#live-run');
    await page.waitForFunction(() => /^running on/.test(document.getElementById('live-status')!.textContent ?? ''), null, { timeout: 120_000 });
    await page.waitForTimeout(1500); // in the ring
    await page.click('#live-cancel');
    expect(await status(page)).toBe('cancelled');
    await fill(page, { N: '256', D: '64', H: '4', R: '2' });
    await page.click('#live-run');
    // Said at once: the run waits for the cancelled one's compute on the GPU, not silently "starting…".
    expect(await status(page)).toMatch(/^waiting for the cancelled run's step to finish…/);
    expect(await hooks<boolean>(page, 'liveWaited')).toBe(true);
    await liveDone(page);
    const live = await hooks<Live>(page, 'live');
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    expect(await status(page)).toBe('done');
    // Nothing of the cancelled run reached the device after it let go (its buffers destroyed, then used).
    await page.waitForTimeout(1000);
    expect(gpuWarnings.filter((w) => /destroyed/.test(w))).toEqual([]);
    expect(consoleErrors).toEqual([]);
  }, 400_000);

  it('Cancel while the device is being prepared: the status line stays "cancelled" (the cancelled run said "running on …" over it once it had the device)', async () => {
    const p = await openPage(server!, consoleErrors, 'lN=256&lH=4&lD=64&lR=2');
    // Every text the status line shows, in order.
    await p.evaluate(() => {
      const s = document.getElementById('live-status')!, seen: string[] = ((window as unknown as { statusSeen: string[] }).statusSeen = []);
      new MutationObserver(() => seen.push(s.textContent ?? '')).observe(s, { childList: true, characterData: true, subtree: true });
    });
    await p.click('#live-run');
    await p.waitForFunction(() => document.getElementById('live-status')!.textContent === 'preparing the device…', null, { timeout: 30_000 });
    await p.click('#live-cancel');
    expect(await status(p)).toBe('cancelled');
    const seenFrom = await p.evaluate(() => (window as unknown as { statusSeen: string[] }).statusSeen.length);
    // The cancelled run gets its device (a fresh page: its first), reads the stored tiles, draws its inputs and would
    // start the ring: it said so 4.5 s after the Cancel here (N = 256; the stored tiles' read takes most of it).
    await p.waitForFunction(() => (window as unknown as { __flashring: { liveDevicesAcquired?: number } }).__flashring.liveDevicesAcquired === 1, null, { timeout: 120_000 });
    await p.waitForTimeout(12_000);
    expect(await status(p)).toBe('cancelled');
    expect(await p.evaluate((n) => (window as unknown as { statusSeen: string[] }).statusSeen.slice(n), seenFrom)).toEqual([]);
    expect(await p.isDisabled('#live-run')).toBe(false);
    await p.close();
  }, 200_000);

  it('the live form reads whole numbers in scientific notation, as the planner and the CLI do (it said "must be a whole number from 1 to 65536 (it is 1e3)")', async () => {
    const p = await openPage(server!, consoleErrors);
    const marks = () => p.$$eval('#live-form [aria-invalid="true"]', (els) => els.map((e) => `${(e as HTMLInputElement).name}: ${document.getElementById(e.getAttribute('aria-describedby')!)?.textContent}`));
    await fill(p, { N: '1e3', D: '6.4e1', H: '4E0' });
    expect(await marks()).toEqual([]);
    await fill(p, { N: '1e30', D: '6.45e1', H: '2.5' });
    expect(await marks()).toEqual([
      'N: Sequence length N must be a whole number from 1 to 65536 (it is 1e30).',
      'D: Head size D must be a whole number from 8 to 256 (it is 6.45e1).',
      'H: Heads must be a whole number from 1 to 64 (it is 2.5).',
    ]);
    await p.close();
  }, 60_000);

  it('one-device mode: the results give the predicted overlap, labelled so, agreeing with the comm fraction (no measured overlap beside it)', async () => {
    type Overlap = { source: string; efficiency: number; transferMs: number; exposedMs: number };
    const run = async (selects: Record<string, string>, fields: Record<string, string> = {}) => {
      await fill(page, { N: '64', D: '16', H: '2', R: '2', ...fields }, { scheme: 'p2p', precision: 'f32', ...selects });
      await page.click('#live-run');
      await liveDone(page);
      const live = await hooks<Live & { mode: string; overlap: Overlap; predicted: { commFraction: number; totalMs: number } }>(page, 'live');
      expect(live.failed).toBeUndefined();
      return { live, text: (await page.textContent('#live-results'))! };
    };
    // NVLink: the overlap is the prediction's exposed communication (the comm fraction's) over its modelled transfer.
    const fast = await run({ link: 'nvlink-h200' });
    expect(fast.live.mode).toBe('one-device');
    expect(fast.live.overlap.source).toBe('predicted');
    expect(fast.text).toMatch(/overlap efficiency, predicted on nvlink-h200[\d.]+% of the modelled transfer hidden behind compute \(exposed [\d.]+ of [\d.]+ ms; not measured: the ranks take turns on this GPU\)/);
    expect(fast.text).not.toMatch(/unhidden transfer/);
    expect(fast.live.overlap.exposedMs).toBeCloseTo(fast.live.predicted.commFraction * fast.live.predicted.totalMs, 9);
    expect(fast.live.overlap.exposedMs).toBeLessThanOrEqual(fast.live.overlap.transferMs + 1e-12);
    expect(fast.live.overlap.efficiency).toBeCloseTo(1 - fast.live.overlap.exposedMs / fast.live.overlap.transferMs, 9);
    // A slow link (10 kbit/s): the transfers show, in both figures. (At 1 Mbit/s the comm fraction was 0.47 once, the
    // compute measured on a CPU busy with two suites.)
    await fill(page, { gbps: '0.00001', lat: '5' }, { link: 'custom' });
    const slow = await run({});
    expect(slow.live.predicted.commFraction).toBeGreaterThan(0.5);
    expect(slow.live.overlap.efficiency).toBeLessThan(0.5);
    expect(slow.text).toMatch(/overlap efficiency, predicted on custom/);
    await page.selectOption('#live-form select[name=link]', 'nvlink-h200');
  }, 300_000);

  it('Tune says its candidates in the page\'s words (tile sizes); one too large for workgroup memory is skipped as that, with no advice to change D', async () => {
    await fill(page, { N: '32', D: '64', H: '1', R: '1' }, { precision: 'f32' });
    await page.click('#live-tune');
    // Until a candidate has been timed after at least one was skipped (the largest tiles come first), or three were timed.
    await page.waitForFunction(() => {
      const lines = (window as unknown as { __flashring: { tuneLines?: string[] } }).__flashring.tuneLines ?? [];
      const timed = lines.filter((l) => / ms$/.test(l)).length;
      return (timed >= 1 && lines.some((l) => /skipped/.test(l))) || timed >= 3;
    }, null, { timeout: 240_000 });
    await page.click('#live-cancel');
    await page.waitForFunction(() => (window as unknown as { __flashring: { tune?: { done?: boolean } } }).__flashring.tune?.done === true, null, { timeout: 240_000 });
    const lines = await hooks<string[]>(page, 'tuneLines');
    for (const l of lines) {
      expect(l).not.toMatch(/FLASHRING_|smaller head dim|\bpins\b/);
      // Skipped as too large, as too many invocations, as sharing nothing (the same kernel as another candidate) or as
      // pruned (its one run over 3× the fastest so far).
      if (/candidate/.test(l)) expect(l).toMatch(/^(forward|backward) candidate tile \d+×\d+(, (with|no) prefetch( of K and V only)?)?(, P~ in (Q's workgroup memory|workgroup memory of its own))?: ([\d.]+ ms|skipped, too large for this GPU's workgroup memory \(needs \d+ bytes, it has \d+\)|skipped, too many invocations per workgroup for this GPU \(\d+, it takes \d+\)|skipped \(P~ can share no array here \(Q staged once, in whole rows of \d+\): the same kernel as with P~ apart\)|skipped \(Q staged once here \(whole rows of \d+\): the prefetch of K and V only is the same kernel as prefetch 1\)|skipped \([\d.]+ ms in one run, over 3× the fastest candidate so far \([\d.]+ ms\): not timed further\))$/);
    }
    expect(lines.some((l) => /^forward candidate tile \d+×\d+.*: [\d.]+ ms$/.test(l))).toBe(true);
  }, 400_000);

  it('timelines count steps from 1, as index.html\'s example and the CLI: a file\'s steps 0 and 1 are drawn as step 1 and step 2', async () => {
    const tl = { kind: 'flashring.timeline', version: 1, R: 2, layout: 'zigzag', adapters: ['x'], summary: { overlapEfficiency: 0.5 },
      phases: [{ phase: 'forward', wallMs: 10, steps: [0, 1].flatMap((step) => [0, 1].map((rank) => ({ step, rank, label: 'ring', start: step * 5, computeEnd: step * 5 + 3, transferEnd: step * 5 + 4, end: step * 5 + 4, transferMs: 2, idleMs: 1 }))) }] };
    await page.setInputFiles('#timeline-file', { name: 'steps.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tl)) });
    await page.waitForFunction(() => /showing steps\.json/.test(document.getElementById('live-status')!.textContent ?? ''));
    type Steps = { axis(id: string): string[]; at(id: string, ph: string, st: number, r: number): { x: number; y: number } | null; tip(id: string): string };
    const steps = (f: string, ...a: unknown[]) => page.evaluate(([fn, args]) => {
      const t = (window as unknown as { __flashring: { timelineSteps: Record<string, (...x: unknown[]) => unknown> } }).__flashring.timelineSteps;
      return t[fn as string](...(args as unknown[]));
    }, [f, a] as const);
    expect(await steps('axis', 'timeline')).toEqual(['step 1 fwd · ring', 'step 2 fwd · ring']);
    await page.locator('#timeline').scrollIntoViewIfNeeded();
    const at = (await steps('at', 'timeline', 'forward', 1, 0)) as ReturnType<Steps['at']>;
    expect(at).not.toBeNull();
    await page.mouse.move(at!.x, at!.y);
    expect(await steps('tip', 'timeline')).toBe('step 2 fwd · ring, rank 0\ncompute 3 ms · transfer 2 ms · idle 1 ms');
    await page.mouse.move(0, 0);
    expect((await page.$$eval('#live p.note', (ps) => ps.map((x) => x.textContent ?? ''))).join(' ')).toMatch(/step 3 fwd · ring/);
  });

  it('timelines: collapsed until drawn, the last tick label whole, focusable with a label, arrow keys pick a step', async () => {
    const p = await openPage(server!, consoleErrors);
    for (const id of ['timeline', 'timeline-predicted']) expect((await p.$eval(`#${id}`, (c) => c.getBoundingClientRect().height)), id).toBe(0); // was 220 px blank each
    const tl = { kind: 'flashring.timeline', version: 1, R: 2, layout: 'zigzag', adapters: ['x'], summary: { overlapEfficiency: 0.5 },
      phases: [{ phase: 'forward', wallMs: 3000, steps: [0, 1].flatMap((step) => [0, 1].map((rank) => ({ step, rank, label: 'ring', start: step * 1500, computeEnd: step * 1500 + 1000, transferEnd: step * 1500 + 1400, end: step * 1500 + 1500, transferMs: 400, idleMs: 100 }))) }] };
    await p.setInputFiles('#timeline-file', { name: 'long.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tl)) });
    await p.waitForFunction(() => /showing long\.json/.test(document.getElementById('live-status')!.textContent ?? ''));
    const c = await p.$eval('#timeline', (el) => ({ h: el.getBoundingClientRect().height, tab: (el as HTMLElement).tabIndex, label: el.getAttribute('aria-label') }));
    expect(c.h).toBeGreaterThan(50);
    expect(c.tab).toBe(0);
    expect(c.label).toMatch(/^Measured ring timeline: 2 rank rows over 3 s/);
    // The tick labels' band: no ink in the canvas's last 8 columns (the "3000 ms" at the right edge was cut to "300").
    const inkRight = await p.evaluate(() => {
      const cv = document.getElementById('timeline') as HTMLCanvasElement, d = cv.getContext('2d')!.getImageData(0, 0, cv.width, cv.height).data;
      let n = 0;
      for (let y = cv.height - 33; y < cv.height - 19; y++) for (let x = cv.width - 8; x < cv.width; x++) if (d[(y * cv.width + x) * 4 + 3]) n++;
      return n;
    });
    expect(inkRight).toBe(0);
    await p.focus('#timeline');
    const tip = () => p.evaluate(() => (window as unknown as { __flashring: { timelineSteps: { tip(id: string): string } } }).__flashring.timelineSteps.tip('timeline'));
    await p.keyboard.press('End');
    expect(await tip()).toMatch(/^step 2 fwd · ring, rank 0\n/);
    await p.keyboard.press('ArrowDown');
    expect(await tip()).toMatch(/^step 2 fwd · ring, rank 1\n/);
    await p.keyboard.press('Escape');
    expect(await tip()).toBe('');
    await (await p.$('#timeline'))!.screenshot({ path: join(out, 'timeline-3000ms.png') });
    await p.close();
  });

  it('a 390 px window: the timelines draw at its width and the device\'s pixel ratio, their text as tall as 10 px text (scaled down from 960 px it was under 5 px), nothing cut; wider again, they draw at 960 px; at another pixel ratio, drawn again for it', async () => {
    const tl = { kind: 'flashring.timeline', version: 1, R: 2, layout: 'zigzag', adapters: ['x'], summary: { overlapEfficiency: 0.5 },
      phases: [{ phase: 'forward', wallMs: 3000, steps: [0, 1].flatMap((step) => [0, 1].map((rank) => ({ step, rank, label: 'ring', start: step * 1500, computeEnd: step * 1500 + 1000, transferEnd: step * 1500 + 1400, end: step * 1500 + 1400, transferMs: 400, idleMs: 100 }))) }] };
    type Steps = { at(id: string, ph: string, st: number, r: number): { x: number; y: number } | null; tip(id: string): string; caption(id: string): string[] };
    const steps = (p: Page) => p.evaluate(() => {
      const t = (window as unknown as { __flashring: { timelineSteps: Steps } }).__flashring.timelineSteps;
      return { at: t.at('timeline', 'forward', 1, 0), tip: t.tip('timeline'), caption: t.caption?.('timeline') ?? null };
    });
    for (const scale of [1, 2]) {
      const p = await server!.browser.newPage({ viewport: { width: 390, height: 900 }, deviceScaleFactor: scale });
      // The media queries the page makes on the pixel ratio, kept so that the test can tell them of a change (below).
      await p.addInitScript(() => {
        const real = window.matchMedia.bind(window), kept: MediaQueryList[] = [];
        Object.assign(window, { __ratioQueries: kept, matchMedia: (q: string) => { const m = real(q); if (q.includes('resolution')) kept.push(m); return m; } });
      });
      collectErrors(p, consoleErrors);
      await p.goto(server!.url);
      await pageReady(p);
      await p.setInputFiles('#timeline-file', { name: 'narrow.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(tl)) });
      await p.waitForFunction(() => /showing narrow\.json/.test(document.getElementById('live-status')!.textContent ?? ''));
      // The rank labels' ink: the tallest glyph run of the leftmost text, in CSS px, beside "rank 0" drawn in 10 px.
      const m = await timelineText(p);
      expect(m.ink, `${scale}x`).toBeGreaterThanOrEqual(m.ink10);
      expect(m.ink, `${scale}x`).toBeLessThan(m.ink10 * 1.6);
      expect(m.css, `${scale}x`).toBeLessThanOrEqual(390 - 32);
      expect(m.backing, `${scale}x`).toBe(Math.round(m.css * scale)); // sharp: a backing pixel per device pixel
      expect(m.inkRight, `${scale}x`).toBe(0); // nothing passes the right edge (the caption broken into lines)
      const narrow = await steps(p);
      expect(narrow.caption!.length, `${scale}x`).toBeGreaterThan(1);
      // Every step's figures in text, in the table its canvas's aria-details names (no prediction here: none drawn).
      const table = (id: string) => p.evaluate((i) => {
        const d = document.getElementById(i)!;
        return { hidden: d.hidden, rows: Array.from(d.querySelectorAll('tr')).map((tr) => Array.from(tr.cells).map((c) => c.textContent)) };
      }, id);
      expect(await p.getAttribute('#timeline', 'aria-details')).toBe('timeline-steps');
      expect(await table('timeline-steps')).toEqual({ hidden: false, rows: [
        ['phase', 'step', 'rank', 'what it does', 'compute', 'transfer', 'idle', 'waited for the device'],
        ['forward', '1', '0', 'ring', '1 s', '400 ms', '100 ms', '-'], ['forward', '1', '1', 'ring', '1 s', '400 ms', '100 ms', '-'],
        ['forward', '2', '0', 'ring', '1 s', '400 ms', '100 ms', '-'], ['forward', '2', '1', 'ring', '1 s', '400 ms', '100 ms', '-']] });
      expect(await table('timeline-predicted-steps')).toEqual({ hidden: true, rows: [] });
      expect(narrow.caption!.join(' ')).toBe('measured: 3000.0 ms · blue compute · orange transfer · grey idle · overlap 50%');
      // A step's tooltip where its box shows.
      await p.locator('#timeline').scrollIntoViewIfNeeded();
      const at = (await steps(p)).at!;
      await p.mouse.move(at.x, at.y);
      expect((await steps(p)).tip).toBe('step 2 fwd · ring, rank 0\ncompute 1 s · transfer 400 ms · idle 100 ms');
      await p.mouse.move(0, 0);
      await (await p.$('#timeline'))!.screenshot({ path: join(out, `timeline-390px-${scale}x.png`) });
      // A wider window: drawn again at 960 px, the caption on one line.
      await p.setViewportSize({ width: 1100, height: 900 });
      await p.waitForFunction(() => document.getElementById('timeline')!.getBoundingClientRect().width === 960);
      const wide = await timelineText(p);
      expect([wide.css, wide.backing]).toEqual([960, 960 * scale]);
      expect((await steps(p)).caption).toEqual(['measured: 3000.0 ms · blue compute · orange transfer · grey idle · overlap 50%']);
      // Only the pixel ratio changes (a screen of the other density, the same width): drawn again for it, sharp. Headless
      // Chromium changes the ratio under emulation but tells no media query of it, so the queries the page made for the
      // ratio are told here, as a browser tells them when a window moves to another screen.
      const other = 3 - scale, cdp = await p.context().newCDPSession(p);
      await cdp.send('Emulation.setDeviceMetricsOverride', { width: 1100, height: 900, deviceScaleFactor: other, mobile: false });
      await p.evaluate(() => { for (const q of [...(window as unknown as { __ratioQueries: MediaQueryList[] }).__ratioQueries]) q.dispatchEvent(new Event('change')); });
      await p.waitForFunction((k) => window.devicePixelRatio === k && (document.getElementById('timeline') as HTMLCanvasElement).width === 960 * k, other);
      expect(await timelineText(p).then((x) => [x.css, x.backing])).toEqual([960, 960 * other]);
      await p.close();
    }
    expect(consoleErrors).toEqual([]);
  });

  it('each timeline\'s caption sits right under its drawing (no blank band between them)', async () => {
    await fill(page, { N: '64', D: '16', H: '2', R: '2', window: '-1,-1', docs: '1' }, { scheme: 'p2p', precision: 'f32', link: 'nvlink-h200' });
    await page.click('#live-run');
    await liveDone(page);
    expect((await hooks<Live>(page, 'live')).failed).toBeUndefined();
    for (const id of ['timeline', 'timeline-predicted']) {
      // The tallest run of blank pixel rows between the first and the last drawn row of the canvas.
      const gap = await page.evaluate((i) => {
        const c = document.getElementById(i) as HTMLCanvasElement, d = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
        const inked = (y: number) => { for (let x = 0; x < c.width; x++) if (d[(y * c.width + x) * 4 + 3]) return true; return false; };
        const rows = Array.from({ length: c.height }, (_, y) => inked(y));
        const first = rows.indexOf(true), last = rows.lastIndexOf(true);
        let best = 0, run = 0;
        for (let y = first; y <= last; y++) { run = rows[y] ? 0 : run + 1; best = Math.max(best, run); }
        return { best, blankBelow: c.height - 1 - last, height: c.height };
      }, id);
      expect(gap.best, id).toBeLessThan(20);
      expect(gap.blankBelow, id).toBeLessThan(10);
    }
    // Both step tables filled: R = 2 ranks' steps of each phase, the predicted one with each step's length.
    const heads = await page.evaluate(() => ['timeline-steps', 'timeline-predicted-steps'].map((i) => {
      const d = document.getElementById(i)!;
      return { hidden: d.hidden, head: Array.from(d.querySelectorAll('th')).map((c) => c.textContent), rows: d.querySelectorAll('tbody tr').length };
    }));
    expect(heads.map((h) => [h.hidden, h.head.at(-1)])).toEqual([[false, 'waited for the device'], [false, 'step']]);
    for (const h of heads) expect(h.rows % 2).toBe(0);
    expect(heads[0].rows).toBeGreaterThanOrEqual(4);
    mkdirSync(out, { recursive: true });
    await page.locator('#live').screenshot({ path: join(out, 'page-live-timelines.png') });
  }, 300_000);

  it('a run\'s step tables agree: the measured one gives each step\'s GPU time, the compute its prediction takes (it gave only the host\'s time, several times the predicted compute)', async () => {
    await fill(page, { N: '64', D: '16', H: '2', R: '2', window: '-1,-1', docs: '1' }, { scheme: 'p2p', precision: 'f32', link: 'nvlink-h200' });
    await page.click('#live-run');
    await liveDone(page);
    expect((await hooks<Live>(page, 'live')).failed).toBeUndefined();
    const table = (id: string) => page.evaluate((i) => Array.from(document.querySelectorAll(`#${i} tr`)).map((tr) => Array.from((tr as HTMLTableRowElement).cells).map((c) => c.textContent ?? '')), id);
    const [measured, predicted] = [await table('timeline-steps'), await table('timeline-predicted-steps')];
    // The page's Chromium (SwiftShader) has timestamp queries: every step has its GPU time.
    expect(measured[0]).toEqual(['phase', 'step', 'rank', 'what it does', 'compute', 'GPU time', 'transfer', 'idle', 'waited for the device']);
    expect(predicted[0]).toEqual(['phase', 'step', 'rank', 'what it does', 'compute', 'transfer', 'step']);
    const key = (r: string[]) => r.slice(0, 4).join('|');
    const predictedCompute = new Map(predicted.slice(1).map((r) => [key(r), r[4]]));
    expect(measured.length).toBe(predicted.length);
    for (const r of measured.slice(1)) expect(r[5], key(r)).toBe(predictedCompute.get(key(r)));
    const caption = await page.evaluate(() => (window as unknown as { __flashring: { timelineSteps: { caption(id: string): string[] } } }).__flashring.timelineSteps.caption('timeline-predicted').join(' '));
    expect(caption).toMatch(/^predicted on nvlink-h200 \(3600 Gbit\/s, 2 µs; each step's measured GPU time\)/);
    expect(await page.textContent('#live-results')).toMatch(/TFLOP\/s per GPU[^;]+; each step's measured GPU time on this GPU, transfers at 3600 Gbit\/s/);
    await page.locator('#timeline').scrollIntoViewIfNeeded();
    const at = await page.evaluate(() => (window as unknown as { __flashring: { timelineSteps: { at(...a: unknown[]): { x: number; y: number } } } }).__flashring.timelineSteps.at('timeline', 'forward', 0, 1));
    await page.mouse.move(at.x, at.y);
    const tip = await page.evaluate(() => (window as unknown as { __flashring: { timelineSteps: { tip(id: string): string } } }).__flashring.timelineSteps.tip('timeline'));
    expect(tip).toMatch(new RegExp(`^step 1 fwd · ring, rank 1\\ncompute [\\d.]+ m?s \\(GPU ${measured.find((r) => key(r) === 'forward|1|1|ring')![5]}\\) · transfer `));
    await page.mouse.move(0, 0);
  }, 300_000);

  it('Save timeline gives the run\'s timeline as the JSON the CLI writes, which the panel draws again when dropped (a run could not be kept)', async () => {
    expect(await page.isDisabled('#timeline-save')).toBe(await page.isHidden('#timeline'));   // nothing drawn, nothing to save
    await fill(page, { N: '32', D: '8', H: '1', R: '2', window: '-1,-1', docs: '1' }, { scheme: 'p2p', precision: 'f32', link: 'nvlink-h200' });
    await page.click('#live-run');
    await liveDone(page);
    expect((await hooks<Live>(page, 'live')).failed).toBeUndefined();
    const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#timeline-save')]);
    expect(dl.suggestedFilename()).toBe('flashring-timeline-R2-p2p.json');
    const file = join(out, 'live-saved-timeline.json');
    await dl.saveAs(file);
    const tl = JSON.parse(readFileSync(file, 'utf8'));
    expect([tl.kind, tl.R, tl.scheme, tl.phases.map((ph: { phase: string }) => ph.phase)]).toEqual(['flashring.timeline', 2, 'p2p', ['forward', 'backward']]);
    expect(tl.predicted.link.name).toBe('nvlink-h200');
    // The progress bar: one increment a step, the backward's at its own count (p2p's backward has a step more than its
    // forward; the bar jumped where the forward's count was taken for it).
    const count = (phase: string) => new Set(tl.phases.find((ph: { phase: string }) => ph.phase === phase).steps.map((st: { step: number }) => st.step)).size;
    const [F, B] = [count('forward'), count('backward')];
    expect(B).toBe(F + 1);
    const want = [...Array.from({ length: F }, (_, k) => (k + 1) / (2 * F)), ...Array.from({ length: B }, (_, k) => (F + k + 1) / (F + B))];
    const got = await hooks<number[]>(page, 'liveProgress');
    expect(got.length).toBe(want.length);
    got.forEach((v, i) => expect(v, String(i)).toBeCloseTo(want[i], 12));
    await page.setInputFiles('#timeline-file', file);
    await page.waitForFunction(() => /^showing live-saved-timeline\.json: R=2 zigzag, p2p one-device/.test(document.getElementById('live-status')!.textContent ?? ''));
    // A new run clears the drawn timeline until it has its own: nothing to save meanwhile (read in the click's own task:
    // a run this small can end before a second round trip to the page).
    expect(await page.evaluate(() => { (document.getElementById('live-run') as HTMLButtonElement).click(); return (document.getElementById('timeline-save') as HTMLButtonElement).disabled; })).toBe(true);
    await liveDone(page);
    expect(await page.isDisabled('#timeline-save')).toBe(false);
  }, 300_000);

  it('the results give each predicted step and peak as the step table does, in units that show them ("0.00 ms", "0.00 MiB" before), and count one GPU as one', async () => {
    const rows = () => page.evaluate(() => Object.fromEntries(Array.from(document.querySelectorAll('#live-results tr')).map((tr) => [(tr as HTMLTableRowElement).cells[0].textContent, tr.children[1].textContent])));
    for (const R of ['2', '1']) {
      await fill(page, { N: '16', D: '8', H: '1', R, window: '-1,-1', docs: '1' }, { scheme: 'p2p', precision: 'f32', link: 'nvlink-h200' });
      await page.click('#live-run');
      await liveDone(page);
      const live = await hooks<Live & { peakBytes: number[]; predicted: { stepMs: number[] } }>(page, 'live');
      expect(live.failed).toBeUndefined();
      const r = await rows();
      // Each rank's peak in the largest unit it reaches (at N = 16, bytes or KiB, not "0.00 MiB").
      expect(r['peak bytes per rank'], R).toBe(live.peakBytes.map(formatBytes).join(', '));
      // The steps as the predicted step table gives each step's length (rank 0's rows, in order).
      const lengths = await page.evaluate(() => Array.from(document.querySelectorAll('#timeline-predicted-steps tbody tr')).filter((tr) => (tr as HTMLTableRowElement).cells[2].textContent === '0').map((tr) => (tr as HTMLTableRowElement).cells[6].textContent));
      const head = R === '1' ? 'predicted, 1 GPU on nvlink-h200' : 'predicted, 2 GPUs on nvlink-h200';
      expect(r[head], R).toMatch(new RegExp(`^[\\d.]+ m?s over ${live.predicted.stepMs.length} steps \\(${lengths.map((l) => l!.replace(/[.]/g, '\\.')).join(', ')}\\)$`));
      // The check's row says its figures are relative errors (‖x − ref‖ / ‖ref‖), each within tolerance.
      expect(r['relative error vs float64 (‖x − ref‖ / ‖ref‖)'], R).toMatch(/^O \d\.\d\de-\d+, LSE .* — within tolerance$/);
    }
    // One token: one pair, one score, counted as one ('1 of 1 pairs visible', '1 visible scores' before).
    await fill(page, { N: '1', D: '8', H: '1', R: '1', window: '-1,-1', docs: '1' }, { scheme: 'p2p', precision: 'f32', link: 'nvlink-h200' });
    await page.click('#live-run');
    await liveDone(page);
    const one = await rows();
    expect(one.achieved).toMatch(/, 1 of 1 pair visible/);
    expect(one['work per rank']).toMatch(/^1 visible score \(/);
  }, 300_000);

  it('the live form: every bad field marked at once, a fixed form clears the refusal, a link\'s unknown values named, a custom link in the link model\'s range', async () => {
    const p = await openPage(server!, consoleErrors, 'lR=99&lD=7&lH=3&lscheme=xyz&llink=foo&lN=abc&lgbps=0x10');
    expect(await p.getAttribute('#live-status', 'aria-live')).toBe('polite');
    const marked = () => p.$$eval('#live-form [aria-invalid="true"]', (els) => els.map((e) => (e as HTMLInputElement).name));
    expect(await marked()).toEqual(['D', 'R']); // was only the first (D)
    expect(await p.textContent('#live-status')).toBe('Head size D must be a whole number from 8 to 256 (it is 7). Ranks R must be a whole number from 1 to 8 (it is 99).');
    expect(await p.textContent('#view-note')).toBe('This link\'s lN=abc, lscheme=xyz, llink=foo, lgbps=0x10 are not values the page knows: set aside, the defaults shown instead (lN=256, lscheme=p2p, llink=nvlink-h200, lgbps=800). This link\'s lD=7 is refused: Head size D must be a whole number from 8 to 256 (it is 7). This link\'s lR=99 is refused: Ranks R must be a whole number from 1 to 8 (it is 99).');
    expect(await Promise.all(['N', 'scheme', 'link'].map((n) => p.inputValue(`#live-form [name=${n}]`)))).toEqual(['256', 'p2p', 'nvlink-h200']);
    // Fixing one field: the status says what is still wrong; fixing the other clears it.
    await p.fill('#live-form input[name=D]', '64');
    expect(await p.textContent('#live-status')).toBe('Ranks R must be a whole number from 1 to 8 (it is 99).');
    await p.fill('#live-form input[name=R]', '2');
    expect(await p.textContent('#live-status')).toBe('');
    expect(await marked()).toEqual([]);
    // A refused Run, then the fix: the refusal goes at once.
    await p.fill('#live-form input[name=R]', '0');
    await p.click('#live-run');
    await p.waitForFunction(() => /^Ranks R must be/.test(document.getElementById('live-status')!.textContent ?? ''));
    await p.fill('#live-form input[name=R]', '2');
    expect(await p.textContent('#live-status')).toBe('');
    // A custom link's bandwidth: the link model's range, in the form's words, beside the field.
    await p.selectOption('#live-form select[name=link]', 'custom');
    for (const [v, ok] of [['', false], ['1e-9', false], ['2e6', false], ['0.000001', true], ['1000000', true]] as const) {
      await p.fill('#live-form input[name=gbps]', v);
      expect(await marked(), v).toEqual(ok ? [] : ['gbps']); // marked as typed
      if (ok) continue;
      await p.click('#live-run');
      await p.waitForFunction(() => /^Link bandwidth/.test(document.getElementById('live-status')!.textContent ?? ''));
      expect(await p.textContent('#live-status'), v).toBe(`Link bandwidth (Gbit/s) must be a number from 0.000001 to 1,000,000 (it is ${v || 'empty or not a number'}).`);
      expect(await marked(), v).toEqual(['gbps']);
    }
    // Its latency likewise: the link model's range (above it, the CLI's words came through resolveLink).
    for (const [v, ok] of [['-1', false], ['2e9', false], ['0', true], ['1000000000', true]] as const) {
      await p.fill('#live-form input[name=lat]', v);
      expect(await marked(), v).toEqual(ok ? [] : ['lat']);
      if (ok) continue;
      await p.click('#live-run');
      await p.waitForFunction(() => /^Link latency/.test(document.getElementById('live-status')!.textContent ?? ''));
      expect(await p.textContent('#live-status'), v).toBe(`Link latency (µs) must be a number from 0 to 1,000,000,000 (it is ${v}).`);
    }
    expect(consoleErrors).toEqual([]);
    await p.close();
  });

  it('a GPU without shader-f16: f16 is refused beside the field as soon as the adapter is known, and the refusal goes once f32 is chosen (it stayed in the status line)', async () => {
    const p = await openPage(server!, consoleErrors, 'lN=64&lH=1&lD=16&lR=1&lprecision=f16', (q) => q.addInitScript(() => {
      const d = Object.getOwnPropertyDescriptor(GPUAdapter.prototype, 'features')!;
      Object.defineProperty(GPUAdapter.prototype, 'features', { get() { return new Set([...(d.get!.call(this) as Set<string>)].filter((f) => f !== 'shader-f16')); } });
    }));
    const marked = () => p.$$eval('#live-form [aria-invalid="true"]', (els) => els.map((e) => `${(e as HTMLSelectElement).name}: ${document.getElementById(e.getAttribute('aria-describedby')!)?.textContent}`));
    const noF16 = 'This GPU does not offer 16-bit floats to WebGPU (shader-f16): choose precision f32.';
    await p.waitForFunction(() => document.querySelector('#live-form select[name=precision]')!.getAttribute('aria-invalid') === 'true', null, { timeout: 10_000 });
    expect(await marked()).toEqual([`precision: ${noF16}`]);
    await p.click('#live-run');
    await liveDone(p);
    expect(await status(p)).toBe(noF16);
    await p.selectOption('#live-form select[name=precision]', 'f32');
    expect(await marked()).toEqual([]);
    expect(await status(p)).toBe('');
    await p.selectOption('#live-form select[name=precision]', 'f16');
    expect(await marked()).toEqual([`precision: ${noF16}`]);
    expect(await status(p)).toBe(noF16);   // the status line's refusal follows the form, as for any field
    await p.close();
  });

  it('the live form lives in the URL hash: kept by a reload and a planner edit, followed on a hash edit, bad values refused in the form\'s words', async () => {
    await fill(page, { N: '512', H: '8', R: '4', window: '128,0', gbps: '100', lat: '3' }, { scheme: 'a2a', link: 'custom', layout: 'striped' });
    await page.uncheck('#live-form input[name=causal]');
    const q = () => viewHash(page);
    const shown = await q();
    expect(Object.fromEntries(['lN', 'lH', 'lR', 'lwindow', 'lscheme', 'llink', 'lgbps', 'llat', 'llayout', 'lcausal'].map((k) => [k, shown.get(k)])))
      .toEqual({ lN: '512', lH: '8', lR: '4', lwindow: '128,0', lscheme: 'a2a', llink: 'custom', lgbps: '100', llat: '3', llayout: 'striped', lcausal: '0' });
    // A planner edit rewrites the hash with the live form in it.
    await page.fill('input[name=tp]', '2');
    expect((await q()).get('tp')).toBe('2');
    expect((await q()).get('lN')).toBe('512');
    await page.reload();
    await ready(page);
    const value = (n: string) => page.inputValue(`#live-form [name=${n}]`);
    expect(await Promise.all(['N', 'H', 'R', 'window', 'scheme', 'link', 'gbps', 'layout'].map(value))).toEqual(['512', '8', '4', '128,0', 'a2a', 'custom', '100', 'striped']);
    expect(await page.isChecked('#live-form input[name=causal]')).toBe(false);
    expect(await page.isVisible('#live-form input[name=gbps]')).toBe(true); // the custom link's fields shown
    // Edited in the same tab: followed; bad values marked beside their fields and said in the status line.
    const edited = await q();
    edited.set('lR', '9');
    await page.evaluate((h) => { location.hash = h; }, edited.toString());
    await page.waitForFunction(() => (document.querySelector('#live-form input[name=R]') as HTMLInputElement).value === '9');
    expect(await page.textContent('#live-status')).toBe('Ranks R must be a whole number from 1 to 8 (it is 9).');
    expect(await page.getAttribute('#live-form input[name=R]', 'aria-invalid')).toBe('true');
    edited.set('lR', '4');
    edited.set('lscheme', 'ring-of-fire');
    await page.evaluate((h) => { location.hash = h; }, edited.toString());
    // A scheme the page does not know: set aside for the default and named at the top, as the planner's values.
    await page.waitForFunction(() => /lscheme=ring-of-fire/.test(document.getElementById('view-note')!.textContent ?? ''));
    expect(await value('scheme')).toBe('p2p');
    expect(await page.textContent('#live-status')).toBe(''); // the form is right again: R's refusal gone
    // A hash without the live form's keys gives its defaults.
    await page.evaluate(() => { location.hash = 'tp=1'; });
    await page.waitForFunction(() => (document.querySelector('#live-form input[name=N]') as HTMLInputElement).value === '256');
    expect(await Promise.all(['N', 'R', 'scheme', 'link'].map(value))).toEqual(['256', '2', 'p2p', 'nvlink-h200']);
    expect(await page.isChecked('#live-form input[name=causal]')).toBe(true);
    expect(consoleErrors).toEqual([]);
  });
  it('a browser that keeps no data for the page (IndexedDB refused): Run runs on the default tiles saying why (it failed; Tune keeps its search shown, saying it was not kept: keptOrSaid, test/tune-page-store.test.ts)', async () => {
    // As Chromium does with the site's data blocked: IndexedDB refuses the page.
    const p = await openPage(server!, consoleErrors, 'lN=32&lH=1&lD=16&lR=1&lprecision=f32', (q) => q.addInitScript(() => {
      IDBFactory.prototype.open = () => { throw new DOMException('The user denied permission to access the database.', 'UnknownError'); };
    }));
    expect(await p.isChecked('#live-form input[name=tuned]')).toBe(true); // the default
    await p.click('#live-run');
    await liveDone(p);
    const live = await hooks<Live & { tuned?: boolean }>(p, 'live');
    expect(live.failed).toBeUndefined();
    expect(live.ok).toBe(true);
    expect(live.tuned).toBe(false);
    expect(await p.textContent('#live-results')).toMatch(/tiles\s*defaults \(this browser keeps no data for the page, so no tuned tiles: UnknownError: The user denied permission to access the database\.\)/);
    expect(consoleErrors).toEqual([]);
    await p.close();
  }, 400_000);

  it('keyboard: Run, Cancel and Tune hand the focus on to the button that takes over (it fell to the page\'s body, or stayed on a disabled Cancel)', async () => {
    const p = await openPage(server!, consoleErrors, 'lN=64&lH=1&lD=16&lR=2&lscheme=p2p');
    const focused = () => p.evaluate(() => document.activeElement?.id ?? '');
    await p.focus('#live-run');
    await p.keyboard.press('Enter');
    expect(await focused()).toBe('live-cancel');
    await liveDone(p);
    expect(await focused()).toBe('live-run');
    // Run again and Cancel at once, in one task of the page: a second run of this size (its pipelines built) can end
    // before a separate look at the focus, which is then back on Run, rightly.
    expect(await p.evaluate(() => {
      const press = (id: string) => { const b = document.getElementById(id) as HTMLButtonElement; b.focus(); b.click(); return document.activeElement?.id ?? ''; };
      const tuneOff = () => (document.getElementById('live-tune') as HTMLButtonElement).disabled;
      return [press('live-run'), tuneOff(), press('live-cancel'), tuneOff()];
    })).toEqual(['live-cancel', true, 'live-run', false]);   // Tune off while the run goes (it cancelled it unsaid); Cancel ends the run at once: the focus is back on Run
    expect(await status(p)).toBe('cancelled');
    expect(await focused()).toBe('live-run');
    // Tune: its Cancel turns off while the candidate being timed ends; the focus then goes to Tune, back on.
    await p.focus('#live-tune');
    await p.keyboard.press('Enter');
    expect(await focused()).toBe('live-cancel');
    await p.waitForFunction(() => /^(forward|backward) candidate /.test(document.getElementById('live-status')!.textContent ?? ''), null, { timeout: 120_000 });
    await p.keyboard.press('Enter');
    await p.waitForFunction(() => (window as unknown as { __flashring: { tune?: { done?: boolean } } }).__flashring.tune?.done === true, null, { timeout: 120_000 });
    expect(await focused()).toBe('live-tune');
    await p.close();
  }, 300_000);
});

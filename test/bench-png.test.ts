/**
 * The bench's PNG chart (src/bench/png.ts: the memory chart drawn in headless Chromium from its JSON configuration):
 * its legend shows each line as the page's does (legendSwatch), a line sample in the line's own dash with its mark and a measured
 * series as its mark, where Chart.js's default item is a box filled with the colour, the dash on its border.
 * The PNG is decoded in Chromium (pngPixels, as page.test.ts reads the page's export) and its legend's pixels counted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath, renderChartPng } from '../src/bench/png.js';
import { LINE_COLORS, memoryChartConfig } from '../src/memory/chart.js';
import type { CsvRow } from '../src/memory/csv.js';
import { pngPixels } from './page-harness.js';

const out = join(__dirname, '..', 'test-output');
let browser: Browser;

beforeAll(async () => {
  browser = await chromium.launch({ executablePath: chromiumPath(), args: CHROMIUM_ARGS });
  mkdirSync(out, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
});

const row = (seq: number, recompute: string, gib: number, source = 'model', line?: string): CsvRow => ({
  seq_len: seq, tp: 8, cp: 1, pp: 1, sp: true, recompute, micro_batch: 1, activation_gib: gib / 2, total_gib: gib, fits: gib <= 80, source, ...(line ? { line } : {}),
});

/**
 * The legend sample of each colour in the PNG: the lowest pixels of that colour (the legend is under the axes) and
 * the rows above them within a legend item's height. Its inked rows, the dashes of its fullest row and the width
 * of its top and bottom inked rows (a triangle is narrow at the top, a box as wide as at the bottom).
 */
async function legendSamples(png: Uint8Array, colors: string[]) {
  const page = await browser.newPage();
  let px: Awaited<ReturnType<typeof pngPixels>>;
  try {
    px = await pngPixels(page, png);
  } finally {
    await page.close();
  }
  const { width, height, data } = px;
  return colors.map((color) => {
    const want = [1, 3, 5].map((i) => parseInt(color.slice(i, i + 2), 16));
    const hit = (x: number, y: number) => { const o = 4 * (y * width + x); return data[o + 3] > 128 && want.every((v, j) => Math.abs(data[o + j] - v) < 40); };
    const rows = Array.from({ length: height }, (_, y) => Array.from({ length: width }, (_, x) => hit(x, y)));
    const count = (r: boolean[]) => r.filter(Boolean).length;
    const bottom = rows.reduce((last, r, y) => (count(r) > 0 ? y : last), -1);
    const band = rows.slice(Math.max(0, bottom - 16), bottom + 1).filter((r) => count(r) > 0);
    const mid = band.reduce((a, r) => (count(r) > count(a) ? r : a), band[0] ?? []);
    const cols = Array.from({ length: width }, (_, x) => band.filter((r) => r[x]).length), inked = cols.flatMap((c, x) => (c ? [x] : []));
    return {
      bottom, height, rows: band.length, runs: mid.filter((v, x) => v && !mid[x - 1]).length,
      topWidth: count(band[0] ?? []), bottomWidth: count(band.at(-1) ?? []),
      // A line sample's ends are its line alone; its middle column passes through its mark.
      endRows: inked.length ? Math.max(cols[inked[0]], cols[inked.at(-1)!]) : 0, midRows: inked.length ? cols[Math.round((inked[0] + inked.at(-1)!) / 2)] : 0,
    };
  });
}

describe("the bench's PNG chart", () => {
  it('its legend shows each line as a line sample in its own dash with its mark (not a box with a dashed border), a measured series as its mark', async () => {
    const seqs = [4096, 8192, 16384, 32768];
    const model = [...seqs.map((s, i) => row(s, 'none', 20 + 10 * i, 'model', 'CP=1')), ...seqs.map((s, i) => row(s, 'selective', 18 + 6 * i, 'model', 'CP=1 + recompute'))];
    const measured = [row(8192, 'none', 31, 'measured: h200'), row(16384, 'none', 41, 'measured: h200')];
    const cfg = memoryChartConfig(model, measured, 80, 'legend samples');
    expect(cfg.data.datasets.map((d) => [d.label, d.borderDash ?? []])).toEqual([['CP=1', []], ['CP=1 + recompute', [6, 3]], ['HBM 80 GiB', [2, 4]], ['measured: h200', []]]);
    const png = await renderChartPng(cfg);
    if (typeof png === 'string') throw new Error(png);
    writeFileSync(join(out, 'bench-png-legend.png'), png);
    const [solid, dashed, measuredMark] = await legendSamples(png, [LINE_COLORS[0], LINE_COLORS[1], LINE_COLORS[2]]);
    for (const [name, s] of [['solid', solid], ['dashed', dashed], ['measured', measuredMark]] as const) {
      expect(s.bottom, name).toBeGreaterThan(s.height - 40); // in the legend, under the axes
    }
    // A line sample: a few pixel rows of its colour at its ends (a box was 12, filled) and its mark in the middle, in one
    // piece where its line is solid, in dashes where it is dashed.
    for (const [name, s, runs] of [['solid', solid, 1], ['dashed', dashed, 2]] as const) {
      expect(s.endRows, name).toBeGreaterThan(0);
      expect(s.endRows, name).toBeLessThanOrEqual(4);
      expect(s.midRows, name).toBeGreaterThanOrEqual(6); // its circle, radius 4
      expect(s.runs, name).toBeGreaterThanOrEqual(runs);
      if (runs === 1) expect(s.runs, name).toBe(1);
    }
    // The measured series: its triangle, narrow at its apex (a box is as wide at the top as at the bottom).
    expect(measuredMark.rows).toBeGreaterThan(4);
    expect(measuredMark.topWidth * 3).toBeLessThanOrEqual(measuredMark.bottomWidth);
  }, 60_000);
});

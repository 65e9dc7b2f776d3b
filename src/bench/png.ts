/**
 * Renders a Chart.js configuration to PNG in headless Chromium (Debian's chromium, driven by
 * playwright-core; no browser download). Where there is no Chromium the reason is returned.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { MemoryChartConfig, drawLegendMarks, legendSwatch } from '../memory/chart.js';

/** The Chromium to drive: FLASHRING_CHROMIUM, else Debian's (read when a chart is drawn, not at import). */
export const chromiumPath = (): string => process.env.FLASHRING_CHROMIUM ?? '/usr/bin/chromium';
export const CHROMIUM_ARGS = ['--no-sandbox', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run'];

/**
 * Browser-side drawing, as text: functions passed to page.evaluate are serialized, and the
 * TypeScript loader adds helpers to them that do not exist in the page. `swatches` are the datasets'
 * legend samples (legendSwatch, as the page draws them), computed in Node: the configuration travels
 * as JSON, which carries no generateLabels function, so the one here only reads them.
 */
const DRAW = `function (cfg, swatches) {
  var __name = function (f) { return f; }; // tsx's keepNames helper, should the serialized hook below carry one
  var fmt = function (n) { return n >= 1048576 && n % 1048576 === 0 ? n / 1048576 + 'M' : n >= 1024 && n % 1024 === 0 ? n / 1024 + 'K' : String(n); };
  cfg.options.scales.x.ticks = { callback: function (v) { return fmt(v); }, autoSkip: false };
  cfg.options.scales.x.afterBuildTicks = function (axis) {
    var t = [];
    for (var v = axis.min; v <= axis.max; v *= 2) t.push({ value: v });
    axis.ticks = t;
  };
  var legend = cfg.options.plugins.legend = cfg.options.plugins.legend || {};
  legend.labels = Object.assign({}, legend.labels, {
    usePointStyle: true,
    generateLabels: function (chart) {
      return Chart.defaults.plugins.legend.labels.generateLabels(chart).map(function (item) { return Object.assign(item, swatches[item.datasetIndex]); });
    },
  });
  var marks = { id: 'legendMarks', afterDraw: function (chart) { (${drawLegendMarks.toString()})(chart, Chart.helpers.drawPoint); } };
  new Chart(document.getElementById('c').getContext('2d'), Object.assign(cfg, { plugins: [marks] }));
}`;

/** The chart as PNG bytes, or why it could not be drawn (a string). */
export async function renderChartPng(config: MemoryChartConfig, width = 1000, height = 620): Promise<Uint8Array | string> {
  const executablePath = chromiumPath();
  if (!existsSync(executablePath)) return `no Chromium at ${executablePath} (install Debian's chromium, or set FLASHRING_CHROMIUM)`;
  let chromium: typeof import('playwright-core').chromium;
  try {
    chromium = (await import('playwright-core')).chromium;
  } catch (e) {
    return `playwright-core is not installed (${(e as Error).message})`;
  }
  const require = createRequire(import.meta.url);
  // chart.js exports only its module entry points; the UMD build sits beside them in dist/.
  const chartJs = await readFile(join(dirname(require.resolve('chart.js')), 'chart.umd.js'), 'utf8');
  // launch() gives a fresh temporary profile each time.
  const browser = await chromium.launch({ executablePath, args: CHROMIUM_ARGS });
  try {
    const page = await browser.newPage({ viewport: { width, height } });
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    await page.setContent(`<!doctype html><html><body style="margin:0;background:#fff"><canvas id="c" width="${width}" height="${height}"></canvas></body></html>`);
    await page.addScriptTag({ content: chartJs });
    // Each legend item as the page's: a line sample in the line's dash with its mark, a measured series' mark (not a box with the dash on its border).
    const swatches = config.data.datasets.map(legendSwatch);
    await page.evaluate(`(${DRAW})(${JSON.stringify(config)}, ${JSON.stringify(swatches)})`);
    if (errors.length) throw new Error(`chart rendering failed: ${errors.join('; ')}`);
    return new Uint8Array(await page.locator('#c').screenshot());
  } finally {
    await browser.close();
  }
}

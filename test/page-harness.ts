/**
 * What the page tests share: the page built into a folder of the file's and the process's own (so
 * files may run at once, and so may two runs of one file in one tree), served by vite preview on a
 * free port, headless Chromium (Debian's, through playwright-core), and the page's test hooks
 * (window.__flashring).
 */
import { rm } from 'node:fs/promises';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_ARGS, chromiumPath } from '../src/bench/png.js';

export interface PageHarness {
  url: string;
  browser: Browser;
  close(): Promise<void>;
}

/**
 * Builds the page into `base`-PID, serves it, and launches Chromium (`webgpu`: with WebGPU on); close() removes
 * the folder. (Into `base` itself, a second run of the same file emptied the folder the first was serving:
 * its pages then lacked their scripts, or their worker's.)
 */
export async function startPage(base: string, webgpu = true): Promise<PageHarness> {
  const vite = await import('vite'), outDir = `${base}-${process.pid}`;
  await vite.build({ logLevel: 'error', build: { outDir, emptyOutDir: true } });
  const pv = await vite.preview({ logLevel: 'error', preview: { port: 0, host: '127.0.0.1' }, build: { outDir } });
  const addr = pv.httpServer.address() as { port: number };
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({ executablePath: chromiumPath(), args: webgpu ? [...CHROMIUM_ARGS, '--enable-unsafe-webgpu'] : CHROMIUM_ARGS });
  return {
    url: `http://127.0.0.1:${addr.port}/`,
    browser,
    close: async () => {
      await browser.close();
      await new Promise<void>((r) => pv.httpServer.close(() => r()));
      await rm(outDir, { recursive: true, force: true });
    },
  };
}

/** Waits until the page says it is ready (its first view drawn). */
export const pageReady = (p: Page) =>
  p.waitForFunction(() => (window as unknown as { __flashring?: { ready?: boolean } }).__flashring?.ready === true, null, { timeout: 30_000 });

/**
 * The view the page holds in its hash, read in the page: page.url() follows history.replaceState a moment late (it
 * learns of it from a protocol event), so right after an edit it can still show the hash before it.
 */
export const viewHash = async (p: Page) => new URLSearchParams(await p.evaluate(() => location.hash.slice(1)));

/** One of the page's test hooks (window.__flashring[key]). */
export const hooks = <T>(p: Page, key: string) =>
  p.evaluate((k) => (window as unknown as { __flashring: Record<string, unknown> }).__flashring[k], key) as Promise<T>;

/** A PNG's pixels as Chromium decodes them in page `p` (as a browser shows the image): its size and RGBA bytes. */
export async function pngPixels(p: Page, png: Uint8Array): Promise<{ width: number; height: number; data: Uint8Array }> {
  const { width, height, b64 } = await p.evaluate(async (src) => {
    const img = new Image();
    img.src = `data:image/png;base64,${src}`;
    await img.decode();
    const c = Object.assign(document.createElement('canvas'), { width: img.width, height: img.height });
    const g = c.getContext('2d')!;
    g.drawImage(img, 0, 0);
    const d = g.getImageData(0, 0, c.width, c.height).data;
    // Back as base64: a fraction of what a list of numbers takes through the protocol.
    let bin = '';
    for (let i = 0; i < d.length; i += 0x8000) bin += String.fromCharCode(...d.subarray(i, i + 0x8000));
    return { width: c.width, height: c.height, b64: btoa(bin) };
  }, Buffer.from(png).toString('base64'));
  return { width, height, data: Buffer.from(b64, 'base64') };
}

/** Console errors and uncaught exceptions of `p`, collected into `into`. */
export function collectErrors(p: Page, into: string[]): void {
  p.on('console', (m) => { if (m.type() === 'error') into.push(m.text()); });
  p.on('pageerror', (e) => into.push(e.message));
}

/**
 * A fresh page (1100 × 1800) at the view `hash`, ready, its console errors collected into `errors`;
 * `watch` sees the page before it loads (more listeners).
 */
export async function openPage(h: PageHarness, errors: string[], hash = '', watch?: (p: Page) => void): Promise<Page> {
  const p = await h.browser.newPage({ viewport: { width: 1100, height: 1800 } });
  collectErrors(p, errors);
  watch?.(p);
  await p.goto(`${h.url}${hash ? `#${hash}` : ''}`);
  await pageReady(p);
  return p;
}

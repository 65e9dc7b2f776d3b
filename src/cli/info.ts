/** `flashring info`, `flashring selftest`, `flashring start`. */
import { acquireDevices, adapterName, AdapterSummary, summarizeAdapter, FlashDevice } from '../gpu/device.js';
import { nodeGPU, robustSource } from '../gpu/node.js';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { InlineConfig } from 'vite';
import { FlashringError, InputError, NoAdapterError } from '../errors.js';
import { freshSeed } from '../reference/compare.js';
import { CheckResult, checkAgainstReference } from '../kernels/check.js';
import { AttentionShape } from '../shape.js';
import { Precision } from '../kernels/precision.js';
import { planTiles } from '../kernels/tiles.js';
import { currentProcessTuning } from '../kernels/tuning.js';
import { numberArg, parseCommand } from './args.js';

/** Every distinct adapter Dawn offers (each power preference, and the fallback adapter). */
async function listAdapters(): Promise<AdapterSummary[]> {
  const gpu = await nodeGPU();
  const seen = new Map<string, AdapterSummary>();
  const tries: GPURequestAdapterOptions[] = [{ powerPreference: 'high-performance' }, { powerPreference: 'low-power' }, { forceFallbackAdapter: true }];
  for (const opts of tries) {
    const a = await gpu.requestAdapter(opts).catch(() => null);
    if (!a) continue;
    const s = summarizeAdapter(a);
    const key = `${s.vendor}|${s.architecture}|${s.device}|${s.description}`;
    if (!seen.has(key)) seen.set(key, s);
  }
  return [...seen.values()];
}

const KEY_LIMITS = ['maxComputeWorkgroupStorageSize', 'maxStorageBufferBindingSize', 'maxBufferSize', 'maxComputeInvocationsPerWorkgroup'];

function formatAdapter(a: AdapterSummary, i: number): string {
  const interesting = ['shader-f16', 'subgroups', 'timestamp-query', 'chromium-experimental-subgroup-matrix'];
  const lines = [
    `adapter ${i}: ${adapterName(a)}`,
    `  vendor: ${a.vendor || '?'}   architecture: ${a.architecture || '?'}   device: ${a.device || '?'}`,
    `  kernel features: ${interesting.map((f) => `${f} ${a.features.includes(f) ? 'yes' : 'no'}`).join(', ')}`,
    `  limits: ${KEY_LIMITS.map((k) => `${k}=${a.limits[k]}`).join(', ')}`,
    `  all features: ${a.features.join(' ')}`,
  ];
  if (a.subgroupMatrixConfigs.length) lines.push(`  subgroup matrix configs: ${JSON.stringify(a.subgroupMatrixConfigs)}`);
  const tiles = adapterTiles(a);
  const text = (ts: HeadTiles[]) => ts.map((t) => (t.fwd && t.bwd
    ? `D=${t.D}: fwd Br×Bc ${t.fwd.Br}×${t.fwd.Bc}${t.fwd.chunk < t.D ? ` (chunk ${t.fwd.chunk}${t.fwd.sharedP ? ', P~ in Q\'s array' : ''})` : ''}, bwd ${t.bwd.Br}×${t.bwd.Bc} (chunk ${t.bwd.chunk})`
    : `D=${t.D}: does not fit`));
  lines.push(`  f32 tiles: ${text(tiles.f32).join('; ')}`);
  if (tiles.f16) {
    lines.push(`  f16 tiles (portable kernels): ${text(tiles.f16).join('; ')}`);
    if (a.features.includes('chromium-experimental-subgroup-matrix'))
      lines.push('  f16 on tensor cores (subgroup matrices): tiles planned per device and head dim; the kernels CSV of `flashring bench` names them (its tiles column)');
  }
  return lines.join('\n');
}

/**
 * One head dim's portable tiles: the forward's Br×Bc and chunk (head-dim columns staged at a time; D for whole rows) and
 * whether its P~ shares Q's workgroup array (tiles.ts shareRule), the backward's (Bc: its streamed rows); null where they
 * do not fit the adapter.
 */
interface HeadTiles {
  D: number;
  fwd: { Br: number; Bc: number; chunk: number; sharedP: boolean } | null;
  bwd: { Br: number; Bc: number; chunk: number } | null;
}

/** The portable kernels' tiles on an adapter at D = 64, 128, 256, f32 and (with shader-f16) f16: what info prints and --json gives. */
function adapterTiles(a: AdapterSummary): { f32: HeadTiles[]; f16: HeadTiles[] | null } {
  const wg = a.limits.maxComputeWorkgroupStorageSize;
  const tiles = (p: Precision): HeadTiles[] => [64, 128, 256].map((D) => {
    try {
      const t = currentProcessTuning(), f = planTiles('fwd', D, p, wg, 256, 0, t), b = planTiles('bwd', D, p, wg, 256, 0, t);
      return { D, fwd: { Br: f.BR, Bc: f.BC, chunk: f.chunk ?? D, sharedP: f.sharedP === true }, bwd: { Br: b.BR, Bc: b.streamRows ?? b.BC, chunk: b.chunk ?? D } };
    } catch (e) {
      if (e instanceof InputError) throw e; // a bad tuning pin (FLASHRING_PORTABLE_*), not a limit
      return { D, fwd: null, bwd: null };
    }
  });
  return { f32: tiles('f32'), f16: a.features.includes('shader-f16') ? tiles('f16') : null };
}

export async function info(argv: string[]): Promise<number> {
  const { values } = parseCommand('info', argv, { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    console.log('usage: flashring info [--json]\n  Lists each WebGPU adapter Dawn finds. FLASHRING_ADAPTER=<name> selects one.');
    return 0;
  }
  const adapters = await listAdapters();
  if (!adapters.length) throw new NoAdapterError('No WebGPU adapter was found. Run `bash scripts/setup-system.sh` as root (Vulkan loader + Mesa lavapipe), or install your GPU\'s Vulkan driver.');
  // --json: each adapter with the portable tiles the text lists (tiles.f16 null without shader-f16).
  if (values.json) console.log(JSON.stringify(adapters.map((a) => ({ ...a, tiles: adapterTiles(a) })), null, 2));
  else console.log(adapters.map(formatAdapter).join('\n\n'));
  const robust = robustSource();
  if (!values.json) console.log(`\nshader robustness (Dawn's index clamps): ${robust ? `on (${robust})` : 'off (disable_robustness; FLASHRING_ROBUST=1 keeps it)'}`);
  return 0;
}

export interface SelftestRow extends CheckResult {
  precision: Precision;
  causal: boolean;
}

/** A small forward+backward per precision, causal and not, against the float64 reference. */
async function runSelftest(dev: FlashDevice, seed = freshSeed()): Promise<SelftestRow[]> {
  const s: AttentionShape = { B: 1, Hq: 4, Hkv: 2, Nq: 100, Nk: 100, D: 64 };
  const rows: SelftestRow[] = [];
  for (const precision of (dev.hasF16 ? ['f32', 'f16'] : ['f32']) as Precision[])
    for (const causal of [false, true]) rows.push({ precision, causal, ...(await checkAgainstReference(dev, s, { causal, precision, seed })) });
  return rows;
}

export async function selftest(argv: string[]): Promise<number> {
  const { values } = parseCommand('selftest', argv, { seed: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    console.log('usage: flashring selftest [--seed S]\n  Forward+backward (B=1, Hq=4, Hkv=2, N=100, D=64) per precision, causal and not, against the float64 reference.\n  Inputs are fresh random numbers; the seed is printed, and --seed S (an integer 0..2³²−1) repeats a run.');
    return 0;
  }
  const seed = values.seed === undefined ? freshSeed() : numberArg('seed', values.seed, { integer: true, min: 0, max: 2 ** 32 - 1, what: 'an integer from 0 to 4294967295' });
  const [dev] = await acquireDevices(await nodeGPU(), 1);
  try {
    console.log(`self-test on ${adapterName(dev.adapter)} (shape B=1 Hq=4 Hkv=2 N=100 D=64, random inputs, seed ${seed})`);
    const rows = await runSelftest(dev, seed);
    const e = (x: number) => x.toExponential(2).padStart(9);
    console.log('precision  causal  err O      err LSE    err dQ     err dK     err dV     result');
    for (const r of rows)
      console.log(`${r.precision.padEnd(9)}  ${String(r.causal).padEnd(6)}  ${e(r.errO)}  ${e(r.errLSE)}  ${e(r.errDQ)}  ${e(r.errDK)}  ${e(r.errDV)}  ${r.ok ? 'ok' : 'FAIL'}`);
    console.log('(relative norm ‖x − ref‖/‖ref‖; tolerances f32 1e-5 O/LSE, 1e-4 grads; f16 5e-3, 2e-2)');
    if (!rows.every((r) => r.ok)) console.log(`repeat this run with: flashring selftest --seed ${seed}`);
    return rows.every((r) => r.ok) ? 0 : 1;
  } finally {
    dev.destroy();
  }
}

/** The package's folder (beside src/): the page's index.html, web/ and vite.config.ts are there, whatever the working folder. */
const PACKAGE_ROOT = fileURLToPath(new URL('../..', import.meta.url));

/**
 * Vite's settings for flashring's own page: the package's root and vite.config.ts, and a build
 * folder of the package's (its dist/, as `npm start` in the repository always had), never the
 * working folder, whose index.html or vite.config is not flashring's and whose dist/ is not ours to empty.
 */
export function pageViteConfig(outDir = join(PACKAGE_ROOT, 'dist')): InlineConfig & { root: string; configFile: string; build: { outDir: string } } {
  return { root: PACKAGE_ROOT, configFile: join(PACKAGE_ROOT, 'vite.config.ts'), build: { outDir } };
}

/** The first line of an error's message, shortened: what a one-line failure says of it. */
const firstLine = (e: unknown) => {
  const line = String((e as Error)?.message ?? e).split('\n').find((l) => l.trim()) ?? 'unknown error';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
};

/** Builds the page (warnings shown; a failure is one line, a FlashringError, not Vite's trace). */
export async function buildPage(outDir?: string): Promise<InlineConfig> {
  const vite = await import('vite');
  const config = pageViteConfig(outDir);
  const logger = vite.createLogger('warn');
  const error = logger.error.bind(logger);
  logger.error = (msg, opts) => { if (!/Build failed/.test(msg)) error(msg, opts); }; // said once, below
  try {
    await vite.build({ ...config, logLevel: 'warn', customLogger: logger });
  } catch (e) {
    throw new FlashringError(`the page did not build (${firstLine(e)}); its sources are in ${config.root}`);
  }
  return config;
}

/** Serving on `port` failed (`given`: the user chose it): one line, the same whether found up front or by Vite. */
const cannotServe = (port: number, e: unknown, given: boolean) =>
  new FlashringError(`cannot serve the page on port ${port} (${(e as NodeJS.ErrnoException)?.code === 'EADDRINUSE' ? `Port ${port} is already in use` : firstLine(e)})${given ? ': give another --port' : ''}`);

/**
 * A port given with --port, tried before the self-test and the page build, so that a taken one
 * fails at once; Vite still binds it strictly later (another program may take it in between).
 */
async function portFree(port: number): Promise<void> {
  const probe = (await import('node:net')).createServer();
  await new Promise<void>((resolve, reject) => {
    probe.once('error', reject);
    probe.listen({ port, host: 'localhost', exclusive: true }, () => probe.close(() => resolve()));
  }).catch((e) => {
    throw cannotServe(port, e, true);
  });
}

/**
 * The main job: the adapters, the self-test against the float64 reference, then the page built
 * and served on localhost (until Ctrl-C). --no-serve stops after the self-test.
 */
export async function start(argv: string[]): Promise<number> {
  const { values } = parseCommand('start', argv, { 'no-serve': { type: 'boolean' }, port: { type: 'string' }, help: { type: 'boolean', short: 'h' } });
  if (values.help) {
    console.log('usage: flashring start [--no-serve] [--port P]\n  Adapters, GPU self-test, then build the page and serve it on http://localhost:P (default 5173,\n  or the next free port when 5173 is taken; a port given with --port is that port or an error).\n  --no-serve  stop after the self-test (the page is neither built nor served)');
    return 0;
  }
  const port = values.port === undefined ? 5173 : numberArg('port', values.port, { integer: true, min: 0, max: 65535, what: 'a port number (0..65535)' });
  if (values['no-serve'] && values.port !== undefined) throw new InputError('--port has no effect with --no-serve (nothing is served): leave one out');
  if (values.port !== undefined && port !== 0) await portFree(port);
  const rc = await info([]);
  if (rc) return rc;
  console.log('');
  const st = await selftest([]);
  if (st || values['no-serve']) return st;
  console.log('\nbuilding the page …');
  const config = await buildPage();
  const vite = await import('vite');
  let server: Awaited<ReturnType<typeof vite.preview>>;
  try {
    server = await vite.preview({ ...config, logLevel: 'warn', preview: { port, strictPort: values.port !== undefined, host: 'localhost' } });
  } catch (e) {
    throw cannotServe(port, e, values.port !== undefined);
  }
  const addr = server.httpServer.address() as { port: number };
  const moved = port !== 0 && addr.port !== port ? ` (port ${port} is taken)` : '';
  console.log(`the page is served at http://localhost:${addr.port}/${moved}  (Ctrl-C to stop)`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', () => server.httpServer.close(() => resolve()));
    process.once('SIGTERM', () => server.httpServer.close(() => resolve()));
  });
  return 0;
}

/**
 * Nothing a user passes loses data or hangs (issue 34): one output rule (collisions refused before
 * any work, temporaries renamed into place, created folders removed on failure, a full or read-only
 * disk as one line), bounded inputs (devices, FIFOs, oversized values refused by stat or by the
 * bound), and a command that dies with its parent. Each case: exit code, one line, inputs
 * byte-identical, nothing left behind.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { main } from '../src/cli/main.js';
import { encodeNpy } from '../src/cli/npy.js';
import { MEMORY_SWEEP_KINDS, OutputPlan } from '../src/cli/files.js';

const dir = mkdtempSync(join(tmpdir(), 'flashring-outputs-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const f = (...p: string[]) => join(dir, ...p);
const BIN = join(__dirname, '..', 'bin', 'flashring.mjs');
const rnd = (n: number) => Float32Array.from({ length: n }, (_, i) => Math.sin(i * 12.9898) * 0.5);
writeFileSync(f('q.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: rnd(512) }));
writeFileSync(f('k.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: rnd(512).reverse() }));
writeFileSync(f('v.npy'), encodeNpy({ dtype: 'f4', shape: [1, 2, 16, 16], data: rnd(512).map((x) => -x) }));
const LOG = join(__dirname, 'fixtures', 'megatron', readdirSync(join(__dirname, 'fixtures', 'megatron')).find((n) => n.endsWith('.log'))!);

/** main() in-process: exit code and what it printed to stderr. */
async function cli(argv: string[]): Promise<{ code: number; err: string[] }> {
  const err: string[] = [];
  const e = vi.spyOn(console, 'error').mockImplementation((...a) => void err.push(a.join(' ')));
  const l = vi.spyOn(console, 'log').mockImplementation(() => {});
  const w = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return { code: await main(argv), err };
  } finally {
    e.mockRestore(); l.mockRestore(); w.mockRestore();
  }
}

/** Runs argv and checks: exit 2, one line matching `msg`, the files in `keep` unchanged, `gone` absent. */
async function refused(argv: string[], msg: RegExp, keep: string[] = [], gone: string[] = []) {
  const before = keep.map((p) => readFileSync(p));
  const r = await cli(argv);
  expect(r.code, r.err.join('\n')).toBe(2);
  expect(r.err).toHaveLength(1);
  expect(r.err[0]).toMatch(msg);
  keep.forEach((p, i) => expect(readFileSync(p).equals(before[i]), `${p} changed`).toBe(true));
  for (const p of gone) expect(existsSync(p), `${p} was left`).toBe(false);
}

const att = (out: string, ...extra: string[]) => ['attention', '--q', f('q.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--out', out, ...extra];
const inputs = [f('q.npy'), f('k.npy'), f('v.npy')];

describe('one output rule: collisions refused before any work', () => {
  it('a --timeline naming an input', () =>
    refused(att(f('o1'), '--cp', '2', '--timeline', f('q.npy')), /--timeline would write .*q\.npy, which is the input --q/, inputs, [f('o1')]));
  it('an input inside --out under the name of an output', async () => {
    mkdirSync(f('o2'));
    writeFileSync(f('o2', 'o.npy'), readFileSync(f('q.npy')));
    await refused(['attention', '--q', f('o2', 'o.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--out', f('o2')], /--out would write .*o2\/o\.npy, which is the input --q/, [f('o2', 'o.npy'), ...inputs]);
  });
  it('an input reached through a symbolic link', async () => {
    symlinkSync(f('q.npy'), f('link.npy'));
    await refused(att(f('o3'), '--cp', '2', '--timeline', f('link.npy')), /--timeline would write .*link\.npy, which is the input --q/, inputs, [f('o3')]);
  });
  it('--timeline as one of --out\'s files, or as the --out folder', async () => {
    await refused(att(f('o4'), '--cp', '2', '--timeline', f('o4', 'lse.npy')), /--timeline .*lse\.npy is also written by --out/, inputs, [f('o4')]);
    await refused(att(f('o5'), '--cp', '2', '--timeline', f('o5')), /--timeline .*o5 is also written by --out/, inputs, [f('o5')]);
  });
  it('an existing file is overwritten only when it is this command\'s earlier output, or with --force; anything else is refused, unchanged', async () => {
    const sweep = (csv: string, ...extra: string[]) => ['memory', '--preset', 'seed-32L-4096h', '--seq-lengths', '4096', '--csv', csv, ...extra];
    writeFileSync(f('notes.md'), 'my notes\n');
    await refused(sweep(f('notes.md')), /--csv .*notes\.md exists and is not a sweep's points CSV written by flashring .*: writing over it would lose it; .*or pass --force/, [f('notes.md')]);
    // The extension is no licence: a user's own CSV, a JSON that is not a timeline, a Markdown file that is not the notes.
    writeFileSync(f('mine.csv'), 'seq_len,gib\n4096,12\n');
    await refused(sweep(f('mine.csv')), /--csv .*mine\.csv exists and is not a sweep's points CSV written by flashring/, [f('mine.csv')]);
    writeFileSync(f('package.json'), '{ "name": "x" }\n');
    await refused(att(f('o6'), '--cp', '2', '--timeline', f('package.json')), /--timeline .*package\.json exists and is not a flashring timeline/, [f('package.json'), ...inputs], [f('o6')]);
    writeFileSync(f('README.md'), '# my project\n');
    await refused(['notes', '--out', f('README.md')], /--out .*README\.md exists and is not notes written by flashring \(whose first line is "# Notes: /, [f('README.md')]);
    writeFileSync(f('data.txt'), 'x');
    await refused(['notes', '--out', f('data.txt')], /--out .*data\.txt exists and is not notes written by flashring/, [f('data.txt')]);
    // A file in --out under an output's name that no record of an earlier run lists: a reference o.npy saved
    // there by another program (a .npy of the same shape), or a file that only looks like a record.
    mkdirSync(f('o7'));
    writeFileSync(f('o7', 'o.npy'), readFileSync(f('q.npy')));
    await refused(att(f('o7')), /--out .*o7\/o\.npy exists and is not listed in flashring-run\.json as written by an earlier run/, [f('o7', 'o.npy'), ...inputs]);
    writeFileSync(f('o7', 'flashring-run.json'), '{ "files": ["o.npy"] }');
    await refused(att(f('o7')), /--out .*o7\/flashring-run\.json exists and is not this command's record/, [f('o7', 'o.npy'), f('o7', 'flashring-run.json'), ...inputs]);
    // A folder where an output file goes: refused before any work, --force or not.
    mkdirSync(f('o8', 'o.npy'), { recursive: true });
    await refused(att(f('o8'), '--force'), /--out .*o8\/o\.npy is a folder where this command writes a file/, inputs);
    // --force overwrites, as asked; alone (no --csv) it is refused, not ignored.
    expect((await cli(sweep(f('mine.csv'), '--force'))).code).toBe(0);
    expect(readFileSync(f('mine.csv'), 'utf8')).toMatch(/^seq_len,tp,cp,/);
    await refused(['memory', '--preset', 'seed-32L-4096h', '--force'], /--force applies only with --csv/);
    await refused(['replay', LOG, '--force'], /--force applies only with --csv/);
    // A rerun onto its own earlier output under any name reads like this output, so it is overwritten.
    for (let i = 0; i < 2; i++) expect((await cli(['memory', '--preset', 'seed-32L-4096h', '--seq-lengths', String(4096 * (i + 1)), '--csv', f('pts.txt')])).code).toBe(0);
    expect(readFileSync(f('pts.txt'), 'utf8')).toMatch(/^seq_len,.*\n8192,/s);
    // Both write the same header: a replay does not overwrite a sweep's points, nor a sweep measured ones.
    await refused(['replay', LOG, '--csv', f('pts.txt')], /--csv .*pts\.txt exists and is not a replay's points CSV of Megatron-LM logs written by flashring/, [f('pts.txt')]);
    for (let i = 0; i < 2; i++) expect((await cli(['replay', LOG, '--csv', f('measured.csv')])).code).toBe(0);
    await refused(sweep(f('measured.csv')), /--csv .*measured\.csv exists and is not a sweep's points CSV written by flashring/, [f('measured.csv')]);
    // advise writes nothing: --force there is refused, not ignored.
    await refused(['advise', '--preset', 'seed-32L-4096h', '--force'], /--force belongs to flashring memory --sweep or replay, not advise/);
  });
  it('replay X.log --csv X.log, and --csv inside a folder of inputs', async () => {
    writeFileSync(f('run.log'), readFileSync(LOG));
    await refused(['replay', f('run.log'), '--csv', f('run.log')], /--csv would write .*run\.log, which is the input file/, [f('run.log')]);
    // bench's memory sweep writes activation_memory.csv into --out: its own --measured input there is refused.
    mkdirSync(f('bx'));
    writeFileSync(f('bx', 'activation_memory.csv'), 'seq_len,total_gib,fits,source\n4096,10,true,measured: here\n');
    await refused(['bench', '--no-kernels', '--no-ring', '--measured', f('bx', 'activation_memory.csv'), '--out', f('bx')], /--out would write .*bx\/activation_memory\.csv, which is the input --measured/, [f('bx', 'activation_memory.csv')]);
    // An older sweep CSV (written before the iter_ms and tflops_per_gpu columns) is still the sweep's own.
    writeFileSync(f('old-sweep.csv'), 'seq_len,tp,cp,pp,sp,recompute,micro_batch,activation_gib,total_gib,fits,source,line,hbm_gib\n4096,8,1,1,true,none,1,3.5,17.2,true,model,CP=1,80\n');
    expect((await cli(['memory', '--preset', 'seed-32L-4096h', '--seq-lengths', '4096', '--csv', f('old-sweep.csv')])).code).toBe(0);
  });
});

describe('one output rule: writing', () => {
  it('writes all files or none; a failure removes the temporaries and the folders it created', async () => {
    const plan = await OutputPlan.make([], [{ flag: 'out', path: f('w', 'deep'), kind: 'dir', names: ['a', 'b'] }]);
    await plan.write([{ path: f('w', 'deep', 'a'), data: 'A' }, { path: f('w', 'deep', 'sub', 'b'), data: 'B' }]);
    expect(readFileSync(f('w', 'deep', 'sub', 'b'), 'utf8')).toBe('B');
    const p2 = await OutputPlan.make([], [{ flag: 'out', path: f('x', 'y'), kind: 'dir', names: [] }]);
    // A file where a folder is needed: the write fails after the folders and the first file were made.
    await expect(p2.write([{ path: f('x', 'y', 'ok'), data: 'A' }, { path: f('x', 'y', 'ok', 'no'), data: 'B' }])).rejects.toThrow();
    expect(existsSync(f('x')), 'created folders left').toBe(false);
  });
  it('a bench that fails before measuring anything leaves no --out folder', async () => {
    const r = spawnSync(process.execPath, [BIN, 'bench', '--quick', '--no-ring', '--no-memory', '--batch', '50000', '--out', f('bq')], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n').at(-1)).toMatch(/^flashring bench: --batch 50000 --heads 2 --N 128 --D 64 needs \d+ MiB per tensor .*maxStorageBufferBindingSize/);
    expect(existsSync(f('bq'))).toBe(false);
  });
});

/** A small tmpfs at `path` (root can mount one; elsewhere the test says why it cannot run). */
function mountTmpfs(path: string, opts: string): boolean {
  mkdirSync(path, { recursive: true });
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', opts, 'tmpfs', path], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}
const CAN_MOUNT = process.getuid?.() === 0 && mountTmpfs(f('probe'), 'size=16k') && (execFileSync('umount', [f('probe')]), true);

describe.skipIf(!CAN_MOUNT)('one output rule: a full or read-only disk is one line (needs root for tmpfs)', () => {
  afterAll(() => {
    for (const m of ['full', 'ro']) try { execFileSync('umount', [f(m)], { stdio: 'ignore' }); } catch { /* not mounted */ }
  });
  it('ENOSPC: one line naming the path, nothing left', async () => {
    mountTmpfs(f('full'), 'size=64k');
    writeFileSync(f('full', 'filler'), Buffer.alloc(40 * 1024, 1));
    const argv = ['memory', '--preset', 'seed-32L-4096h', '--seq-lengths', Array.from({ length: 400 }, (_, i) => 1024 * (i + 1)).join(','), '--csv', f('full', 'sweep.csv')];
    // Through the binary, as a user runs it.
    const r = spawnSync(process.execPath, [BIN, ...argv], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^flashring memory: cannot write .*full\/sweep\.csv \(--csv\): no space left on the device \(ENOSPC\); nothing was written$/)]);
    expect(readdirSync(f('full'))).toEqual(['filler']);
  });
  it('a read-only file system: refused up front in one line, and the folder --out would create is not made', async () => {
    mountTmpfs(f('ro'), 'size=64k,ro');
    const plan = OutputPlan.make([], [{ flag: 'out', path: f('ro', 'new'), kind: 'dir', names: ['o.npy'] }]);
    // access() refuses a read-only folder before any work (the write path's EROFS mapping is not reached here).
    await expect(plan).rejects.toThrow(/--out .*ro\/new: the folder .*ro is not writable/);
    expect(readdirSync(f('ro'))).toEqual([]);
  });
});

describe('bounded work: sizes checked before anything is read or computed', () => {
  it('a pipe, a device or a link to one under an output\'s name in --out (the run record read at the end would block or never end) is refused before any work', async () => {
    mkdirSync(f('fo'));
    execFileSync('mkfifo', [f('fo', 'flashring-run.json')]);
    await refused(att(f('fo')), /--out .*fo\/flashring-run\.json is a pipe \(FIFO\) where this command writes a file/, inputs);
    mkdirSync(f('fz'));
    symlinkSync('/dev/zero', f('fz', 'flashring-run.json'));
    await refused(att(f('fz'), '--force'), /--out .*fz\/flashring-run\.json is a device where this command writes a file/, inputs);
  });
  it("bench's memory sweep files in --out are overwritten only where they are a bench's own", async () => {
    mkdirSync(f('bo'));
    const dataset = join(__dirname, '..', 'bench', 'results', 'memory-h200-2026-12-01', 'activation_memory_measured.csv');
    writeFileSync(f('bo', 'activation_memory.csv'), readFileSync(dataset));
    await refused(['bench', '--no-kernels', '--no-ring', '--out', f('bo')], /--out .*bo\/activation_memory\.csv exists and is not a bench's memory sweep CSV/, [f('bo', 'activation_memory.csv')]);
    mkdirSync(f('bj'));
    writeFileSync(f('bj', 'activation_memory.json'), '{"mine": 1}\n');
    await refused(['bench', '--no-kernels', '--no-ring', '--out', f('bj')], /--out .*bj\/activation_memory\.json exists and is not a bench's memory sweep JSON/, [f('bj', 'activation_memory.json')]);
    // A bench's own files (its sweep CSV: the model's rows first, measured ones after) are its to write again.
    const k = MEMORY_SWEEP_KINDS;
    expect(k['activation_memory.csv'].looks('seq_len,tp,cp,pp,sp,recompute,micro_batch,activation_gib,total_gib,fits,source\n4096,8,1,1,true,none,1,3.5,17.2,true,model\n4096,8,1,1,true,none,1,,20,true,measured: x\n')).toBe(true);
    expect(k['activation_memory.csv'].looks(readFileSync(dataset, 'latin1').slice(0, 4096))).toBe(false);
    // Only its first row decides: a measured row today's reader refuses (an older version's, a hand edit) does not make it another's file.
    expect(k['activation_memory.csv'].looks('seq_len,tp,cp,pp,sp,recompute,micro_batch,activation_gib,total_gib,fits,source\n4096,8,1,1,true,none,1,3.5,17.2,true,model\nnot,a,row\n')).toBe(true);
    expect(k['activation_memory.json'].looks('{\n "kind": "flashring.memory",')).toBe(true);
    expect(k['activation_memory.png'].looks('\x89PNG\r\n\x1a\nIHDR')).toBe(true);
    expect(k['activation_memory.png'].looks('GIF89a')).toBe(false);
  });
  it("a replay's --csv overwrites only a replay's own points of Megatron-LM logs: a measured dataset of another source is refused", async () => {
    const dataset = join(__dirname, '..', 'bench', 'results', 'memory-h200-2026-12-01', 'activation_memory_measured.csv');
    writeFileSync(f('measured-copy.csv'), readFileSync(dataset));
    await refused(['replay', LOG, '--csv', f('measured-copy.csv')], /--csv .*measured-copy\.csv exists and is not a replay's points CSV of Megatron-LM logs/, [f('measured-copy.csv')]);
    expect((await cli(['replay', LOG, '--csv', f('measured-copy.csv'), '--force'])).code).toBe(0);
  });
  it('a file written over keeps its permissions; a signal leaves a folder the run created only if someone else put files in it', async () => {
    const { chmodSync, statSync } = await import('node:fs');
    expect((await cli(['notes', '--out', f('private.md')])).code).toBe(0);
    chmodSync(f('private.md'), 0o600);
    expect((await cli(['notes', '--out', f('private.md')])).code).toBe(0);
    expect(statSync(f('private.md')).mode & 0o777).toBe(0o600);
    // A child makes a plan for a new folder and starts writing 256 MiB; once its temporary exists, another file is put
    // in the folder and SIGTERM ends the child mid-write: the other file and the folder stay; the child's temporary goes.
    const script = f('sig.mts');
    writeFileSync(script, `import { OutputPlan } from ${JSON.stringify(join(__dirname, '..', 'src', 'cli', 'files.ts'))};
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
process.on('SIGTERM', () => process.exit(143));
const out = ${JSON.stringify(f('sig', 'out'))};
const plan = await OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names: ['big'] }]);
// Once the temporary exists (its creation done: a signal while Node's thread creates it can leave it behind).
const poll = setInterval(() => {
  if (!existsSync(out) || !readdirSync(out).some((n) => n.endsWith('.tmp'))) return;
  clearInterval(poll);
  writeFileSync(out + '/user-notes.txt', 'mine');
  process.kill(process.pid, 'SIGTERM');
}, 1);
await plan.write([{ path: out + '/big', data: new Uint8Array(256 * 2 ** 20) }]);
console.log('finished');
`);
    const r = spawnSync(process.execPath, ['--import', join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs'), script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(143);
    expect(r.stdout).not.toMatch(/finished/);
    expect(readFileSync(f('sig', 'out', 'user-notes.txt'), 'utf8')).toBe('mine');
    expect(readdirSync(f('sig', 'out'))).toEqual(['user-notes.txt']);
    // A temporary a process now gone left beside a target (a signal during its creation) goes with the next write
    // there; one of a running process, or of another target's name, stays.
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    writeFileSync(f('sig', 'out', `.big.${dead}.abc.tmp`), 'left');
    writeFileSync(f('sig', 'out', `.big.${process.pid}.abc.tmp`), 'live');
    writeFileSync(f('sig', 'out', `.other.${dead}.abc.tmp`), 'not ours');
    const plan = await OutputPlan.make([], [{ flag: 'out', path: f('sig', 'out'), kind: 'dir', names: ['big'] }]);
    await plan.write([{ path: f('sig', 'out', 'big'), data: 'B' }]);
    expect(readdirSync(f('sig', 'out')).sort()).toEqual([`.big.${process.pid}.abc.tmp`, `.other.${dead}.abc.tmp`, 'big', 'user-notes.txt'].sort());
  });
  it('devices and pipes are refused by stat, never read', async () => {
    await refused(['attention', '--q', '/dev/zero', '--k', f('k.npy'), '--v', f('v.npy'), '--out', f('z1')], /--q \/dev\/zero is a device, not an ordinary file/, [], [f('z1')]);
    execFileSync('mkfifo', [f('pipe')]);
    await refused(['attention', '--q', f('q.npy'), '--k', f('pipe'), '--v', f('v.npy'), '--out', f('z2')], /--k .*pipe is a pipe \(FIFO\)/, [], [f('z2')]);
    await refused(['replay', '/dev/zero'], /input file \/dev\/zero is a device/);
    await refused(['replay', f('pipe')], /input file .*pipe is a pipe \(FIFO\)/);
  });
  it('cp-plan: more ranks than it plans in seconds are refused; 64 ranks over every scheme answer', async () => {
    for (const R of ['4096', '2147483648'])
      await refused(['cp-plan', '--seq-length', '1048576', '--context-parallel-size', R, '--num-attention-heads', '32', '--hidden-size', '4096', '--compute-tflops', '100'],
        /cp-plan plans at most 64 ranks|must be a positive integer up to 2\^31/);
    const t0 = Date.now();
    const r = await cli(['cp-plan', '--seq-length', '1048576', '--context-parallel-size', '64', '--num-attention-heads', '64', '--hidden-size', '8192', '--compute-tflops', '100']);
    expect(r.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(60_000); // a hang guard, not a timing
  });
  it('--scale beyond float32 is refused (it gave all-NaN outputs with exit 0)', () =>
    refused(att(f('s1'), '--scale', '1e39'), /--scale must be a positive number within float32's range/, inputs, [f('s1')]));
});

describe('process hygiene: the command dies with its parent', () => {
  /**
   * Starts `flashring attention` on [1, 4, n, 64] inputs, waits until its worker exists and then
   * `delay` ms more, and SIGKILLs the CLI: 'early' where the run had already ended (a fast GPU),
   * else whether the worker outlived its parent by 3 s and whether anything was written after.
   */
  async function killWhileBusy(n: number, delay: number): Promise<'early' | { survived: boolean; wrote: boolean }> {
    const big = (seed: number) => encodeNpy({ dtype: 'f4', shape: [1, 4, n, 64], data: rnd(4 * n * 64).map((x, i) => x * Math.cos(i * seed)) });
    for (const [name, seed] of [['bq.npy', 1], ['bk.npy', 2], ['bv.npy', 3], ['bdo.npy', 4]] as const) writeFileSync(f(name), big(seed));
    const out = f(`killed-${n}`);
    // A run that writes nothing to stderr while it computes (a closed stderr would end it anyway).
    const parent = spawn(process.execPath, [BIN, 'attention', '--q', f('bq.npy'), '--k', f('bk.npy'), '--v', f('bv.npy'), '--do', f('bdo.npy'), '--out', out], { stdio: 'ignore' });
    const exited = new Promise<void>((r) => parent.once('exit', () => r()));
    let gone = false;
    void exited.then(() => (gone = true));
    const child = await new Promise<number | null>((res, rej) => {
      const t0 = Date.now();
      const look = () => {
        const kids = (() => { try { return execFileSync('pgrep', ['-P', String(parent.pid)]).toString().trim().split('\n').map(Number); } catch { return []; } })();
        if (kids.length) res(kids[0]);
        else if (gone) res(null);
        else if (Date.now() - t0 > 20_000) rej(new Error('the worker never started'));
        else setTimeout(look, 50);
      };
      look();
    });
    if (child !== null) await Promise.race([new Promise((r) => setTimeout(r, delay)), exited]); // the worker is busy (adapter, kernels)
    const early = async () => { await exited; return 'early' as const; };
    if (child === null || gone) return early();
    try { process.kill(parent.pid!, 'SIGKILL'); } catch { return early(); } // it ended just now
    const alive = () => { try { process.kill(child, 0); return true; } catch { return false; } };
    const t0 = Date.now();
    while (alive() && Date.now() - t0 < 3_000) await new Promise((r) => setTimeout(r, 100));
    const survived = alive();
    if (survived) process.kill(child, 'SIGKILL'); // leave nothing running, whatever the verdict
    await new Promise((r) => setTimeout(r, 2_000)); // temporaries removed by the dying worker; nothing renamed into place
    return { survived, wrote: existsSync(out) };
  }

  it('SIGKILL of the CLI ends its worker, which writes nothing afterwards', async () => {
    // Lavapipe is still computing 1.5 s after the worker starts; a fast GPU (the H200) may have finished
    // the run by then, so a run that ended before the kill is tried again larger and killed sooner.
    for (const [n, delay] of [[1536, 1500], [8192, 300], [32768, 100]]) {
      const got = await killWhileBusy(n, delay);
      if (got === 'early') continue;
      expect(got.survived, 'worker still running 3 s after its parent was killed').toBe(false);
      expect(got.wrote, 'the worker wrote after its parent was killed').toBe(false);
      return;
    }
    throw new Error('every run ended before its parent could be killed: no verdict');
  }, 120_000);

  it('SIGTERM ends the command by SIGTERM even where its worker then crashes on the way out (Dawn\'s threads)', async () => {
    // A script on the CLI's own two-process entry whose worker, told to stop, dies by SIGSEGV as Dawn's native
    // threads sometimes made it (about one run in three on lavapipe): the user asked to stop, and that is what
    // the exit says (143, by the signal), not a crash (139).
    const script = f('crashes-on-term.mjs');
    writeFileSync(script, [
      `import { withoutDawnNoise } from ${JSON.stringify(join(__dirname, '..', 'bin', 'dawn-noise.mjs'))};`,
      `await withoutDawnNoise(import.meta.url, 'CRASH_TEST_CHILD', async () => {`,
      `  process.removeAllListeners('SIGTERM');`,
      `  process.on('SIGTERM', () => process.kill(process.pid, 'SIGSEGV'));`,
      `  console.log('ready');`,
      `  await new Promise((r) => setTimeout(r, 30_000));`,
      `});`,
    ].join('\n'));
    const p = spawn(process.execPath, [script], { stdio: ['ignore', 'pipe', 'ignore'] });
    await new Promise<void>((r) => p.stdout!.once('data', () => r()));
    const ended = new Promise<[number | null, NodeJS.Signals | null]>((r) => p.once('exit', (code, sig) => r([code, sig])));
    p.kill('SIGTERM');
    expect(await ended).toEqual([null, 'SIGTERM']);
  }, 60_000);
});

/**
 * OutputPlan.write is all or none (src/cli/files.ts commit): a rename that fails after others were done puts
 * back every file already replaced (and removes those new this run), so "nothing was written" is true; where
 * putting back fails too, the message names the files that hold the new run's data. Renames and links are
 * made to fail on demand (`hook`), through both node:fs and node:fs/promises.
 */
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { execFileSync, spawnSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputPlan } from '../src/cli/files.js';

/** A failure code for a rename or link from `from` to `to`, or null to let it through. */
type Fail = ((from: string, to: string) => string | null) | null;
const hook = vi.hoisted(() => ({ rename: null as Fail, link: null as Fail }));
const failure = (code: string, from: unknown, to: unknown) => Object.assign(new Error(`${code}: injected, '${from}' -> '${to}'`), { code });
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const renameSync = (a: string, b: string) => {
    const code = hook.rename?.(String(a), String(b));
    if (code) throw failure(code, a, b);
    return fs.renameSync(a, b);
  };
  const linkSync = (a: string, b: string) => {
    const code = hook.link?.(String(a), String(b));
    if (code) throw failure(code, a, b);
    return fs.linkSync(a, b);
  };
  return { ...fs, renameSync, linkSync, default: { ...fs, renameSync, linkSync } };
});
vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const rename = async (a: string, b: string) => {
    const code = hook.rename?.(String(a), String(b));
    if (code) throw failure(code, a, b);
    return fsp.rename(a, b);
  };
  return { ...fsp, rename, default: { ...fsp, rename } };
});

const dir = mkdtempSync(join(tmpdir(), 'flashring-commit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
afterEach(() => {
  hook.rename = hook.link = null;
});
let n = 0;

/** A folder holding an earlier run's `old` files (name → content, a: mode 0o640), and a plan to write `names` there. */
async function earlierRun(old: Record<string, string>, names: string[]) {
  const out = join(dir, `run${n++}`);
  mkdirSync(out);
  for (const [k, v] of Object.entries(old)) writeFileSync(join(out, k), v);
  if (old.a !== undefined) chmodSync(join(out, 'a'), 0o640);
  const plan = await OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names }]);
  const files = names.map((k) => ({ path: join(out, k), data: `new ${k}` }));
  return { out, plan, files, p: (k: string) => join(out, k) };
}
/** Whether a rename is of the temporary of `name` (not of a kept file). */
const tempOf = (from: string, name: string) => from.includes(`/.${name}.`) && !from.endsWith('.kept.tmp');
const leftovers = (out: string) => readdirSync(out).filter((x) => x.endsWith('.tmp'));

describe('OutputPlan.write: all or none', () => {
  it('a failing second rename (a folder put in the way) leaves every earlier file byte-identical, nothing new, nothing left over', async () => {
    const { out, plan, files, p } = await earlierRun({ a: 'old a', c: 'old c' }, ['new', 'a', 'b', 'c']);
    mkdirSync(p('b'));
    writeFileSync(join(p('b'), 'inside'), 'x'); // after the plan was made: the rename over it fails (EISDIR)
    await expect(plan.write(files)).rejects.toThrow(new RegExp(`^cannot write ${p('b')} \\(--out\\): a folder is in the way \\(EISDIR\\); nothing was written$`));
    expect(readFileSync(p('a'), 'utf8')).toBe('old a');
    expect(statSync(p('a')).mode & 0o777).toBe(0o640);
    expect(readFileSync(p('c'), 'utf8')).toBe('old c');
    expect(existsSync(p('new'))).toBe(false);
    expect(readdirSync(out).sort()).toEqual(['a', 'b', 'c']);
  });

  it('an injected EPERM on the second rename: the first target put back, the message true', async () => {
    const { out, plan, files, p } = await earlierRun({ a: 'old a', b: 'old b', c: 'old c' }, ['a', 'b', 'c']);
    hook.rename = (from, to) => (tempOf(from, 'b') && to === p('b') ? 'EPERM' : null);
    await expect(plan.write(files)).rejects.toThrow(`cannot write ${p('b')} (--out): operation not permitted (EPERM); nothing was written`);
    for (const k of ['a', 'b', 'c']) expect(readFileSync(p(k), 'utf8')).toBe(`old ${k}`);
    expect(statSync(p('a')).mode & 0o777).toBe(0o640);
    expect(leftovers(out)).toEqual([]);
  });

  it('a failed put-back: the message names exactly the file that holds the new data and where its earlier content is', async () => {
    const { out, plan, files, p } = await earlierRun({ a: 'old a', b: 'old b', c: 'old c' }, ['a', 'new', 'b', 'c']);
    hook.rename = (from, to) => ((tempOf(from, 'c') && to === p('c')) || (from.endsWith('.kept.tmp') && to === p('a')) ? 'EIO' : null);
    const err = await plan.write(files).catch((e: Error) => e);
    const kept = leftovers(out);
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatch(new RegExp(`^\\.a\\.${process.pid}\\.[0-9a-z]+\\.kept\\.tmp$`));
    expect((err as Error).name).toBe('OutputError');
    expect((err as Error).message).toBe(`cannot write ${p('c')} (--out): an I/O error (EIO); putting back the files it had replaced failed too: ${p('a')} holds this run's data (its earlier content is in ${join(out, kept[0])}: move it back by hand before writing there again); every other output is as before`);
    expect(readFileSync(p('a'), 'utf8')).toBe('new a');
    expect(readFileSync(join(out, kept[0]), 'utf8')).toBe('old a');
    for (const k of ['b', 'c']) expect(readFileSync(p(k), 'utf8')).toBe(`old ${k}`);
    expect(existsSync(p('new'))).toBe(false);
  });

  it('where hard links fail the earlier file is moved aside, and put back the same way', async () => {
    hook.link = () => 'EPERM';
    const first = await earlierRun({ a: 'old a', b: 'old b' }, ['a', 'b']);
    hook.rename = (from, to) => (tempOf(from, 'b') && to === first.p('b') ? 'ENOSPC' : null);
    await expect(first.plan.write(first.files)).rejects.toThrow(/\(ENOSPC\); nothing was written$/);
    for (const k of ['a', 'b']) expect(readFileSync(first.p(k), 'utf8')).toBe(`old ${k}`);
    expect(statSync(first.p('a')).mode & 0o777).toBe(0o640);
    expect(leftovers(first.out)).toEqual([]);
    hook.rename = null;
    await first.plan.write(first.files);
    for (const k of ['a', 'b']) expect(readFileSync(first.p(k), 'utf8')).toBe(`new ${k}`);
    expect(leftovers(first.out)).toEqual([]);
  });

  it('success leaves no kept files; a file written over keeps its mode; a link at an output path is replaced, its target left alone', async () => {
    const { out, plan, files, p } = await earlierRun({ a: 'old a', elsewhere: 'theirs' }, ['a', 'b', 'l']);
    symlinkSync(p('elsewhere'), p('l'));
    await plan.write(files);
    for (const k of ['a', 'b', 'l']) expect(readFileSync(p(k), 'utf8')).toBe(`new ${k}`);
    expect(statSync(p('a')).mode & 0o777).toBe(0o640);
    expect(lstatSync(p('l')).isSymbolicLink()).toBe(false);
    expect(readFileSync(p('elsewhere'), 'utf8')).toBe('theirs');
    expect(readdirSync(out).sort()).toEqual(['a', 'b', 'elsewhere', 'l']);
  });

  it('a link at an output path is put back as the link when the write fails', async () => {
    const { out, plan, files, p } = await earlierRun({ elsewhere: 'theirs', b: 'old b' }, ['l', 'b']);
    symlinkSync(p('elsewhere'), p('l'));
    hook.rename = (from, to) => (tempOf(from, 'b') && to === p('b') ? 'EACCES' : null);
    await expect(plan.write(files)).rejects.toThrow(/permission denied \(EACCES\); nothing was written$/);
    expect(readlinkSync(p('l'))).toBe(p('elsewhere'));
    expect(readFileSync(p('elsewhere'), 'utf8')).toBe('theirs');
    expect(leftovers(out)).toEqual([]);
  });
});

/** Whether chattr +i works here (root on ext4, overlay …). */
function canChattr(): boolean {
  const probe = join(dir, 'chattr-probe');
  writeFileSync(probe, '');
  try {
    execFileSync('chattr', ['+i', probe], { stdio: 'ignore' });
    execFileSync('chattr', ['-i', probe], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(process.getuid?.() !== 0 || !canChattr())('OutputPlan.write: an immutable earlier output (chattr +i, needs root)', () => {
  it('is refused before any target is replaced: the others keep the earlier run\'s files', async () => {
    const { out, plan, files, p } = await earlierRun({ a: 'old a', b: 'old b' }, ['a', 'b']);
    execFileSync('chattr', ['+i', p('b')]);
    try {
      await expect(plan.write(files)).rejects.toThrow(`cannot write ${p('b')} (--out): operation not permitted (EPERM); nothing was written`);
      for (const k of ['a', 'b']) expect(readFileSync(p(k), 'utf8')).toBe(`old ${k}`);
      expect(leftovers(out)).toEqual([]);
    } finally {
      execFileSync('chattr', ['-i', p('b')]);
    }
  });
});

describe('OutputPlan.write: the end of the process', () => {
  it('a SIGTERM sent between two renames is handled after the commit: the outputs are all new, nothing left over', () => {
    const out = join(dir, 'sig');
    mkdirSync(out);
    for (const k of ['a', 'b', 'c']) writeFileSync(join(out, k), `old ${k}`);
    const script = join(dir, 'sig.mts');
    // The child's renameSync (what files.ts imports, through syncBuiltinESMExports) signals the child after a's rename.
    writeFileSync(script, `import fs from 'node:fs';
import { syncBuiltinESMExports } from 'node:module';
const rename = fs.renameSync;
fs.renameSync = (from, to) => {
  rename(from, to);
  if (to.endsWith('/a') && !from.endsWith('.kept.tmp')) process.kill(process.pid, 'SIGTERM');
};
syncBuiltinESMExports();
process.on('SIGTERM', () => process.exit(143));
const { OutputPlan } = await import(${JSON.stringify(join(__dirname, '..', 'src', 'cli', 'files.ts'))});
const out = ${JSON.stringify(out)};
const plan = await OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names: ['a', 'b', 'c'] }]);
await plan.write(['a', 'b', 'c'].map((k) => ({ path: out + '/' + k, data: 'new ' + k })));
await new Promise((r) => setTimeout(r, 5000));
console.log('not ended');
`);
    const r = spawnSync(process.execPath, ['--import', join(__dirname, '..', 'node_modules', 'tsx', 'dist', 'esm', 'index.mjs'), script], { encoding: 'utf8' });
    expect(r.status, r.stderr).toBe(143);
    expect(r.stdout).not.toMatch(/not ended/);
    for (const k of ['a', 'b', 'c']) expect(readFileSync(join(out, k), 'utf8')).toBe(`new ${k}`);
    expect(leftovers(out)).toEqual([]);
  });

  it('kept files a process now gone left (a SIGKILL mid-commit) are removed by the next write there', async () => {
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' }).stdout;
    const { out, plan, files } = await earlierRun({ a: 'old a' }, ['a']);
    writeFileSync(join(out, `.a.${dead}.abc.kept.tmp`), 'left');
    writeFileSync(join(out, `.a.${dead}.123.kept.tmp`), 'left');
    writeFileSync(join(out, `.a.${process.pid}.abc.kept.tmp`), 'live');
    await plan.write(files);
    expect(leftovers(out)).toEqual([`.a.${process.pid}.abc.kept.tmp`]);
  });
});

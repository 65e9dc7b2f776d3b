/**
 * The one rule for what a command reads and writes (issue 34).
 *
 * Reading: a named file is looked at (stat) before a byte is read: folders, devices, FIFOs and
 * sockets are refused (they can be endless: /dev/zero, a pipe), and so is a file larger than the
 * command can hold, with the bound in the message.
 *
 * Writing: every output path is resolved up front (real paths, through symbolic links) and
 * refused, before any work, when it is an input, lies inside an input's folder, or is another
 * output (or inside one). Outputs are written under temporary names beside their targets and
 * renamed into place when all are written, all or none: each file replaced is kept aside (a hard
 * link) until every rename is done, and put back if one fails. On any failure, or when the process
 * is ended (a signal, its parent gone), the temporaries and the folders this run created are
 * removed. A full disk, a read-only file system or a refused permission is one line naming the path.
 */
import { access, chmod, constants, lstat, mkdir, open, readdir, readlink, realpath, rm, rmdir, stat, statfs, writeFile } from 'node:fs/promises';
import { linkSync, lstatSync, renameSync, rmdirSync, rmSync, Stats } from 'node:fs';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import { FlashringError, InputError } from '../errors.js';
import { atExit } from '../exit.js';
import { CSV_COLUMNS, REPLAY_SOURCE, parseCsv } from '../memory/csv.js';

/** What an output file holds: text, bytes, or bytes in parts written one after another (a .npy's header and its array's own bytes, not copied into one). */
export type FileData = Uint8Array | string | readonly Uint8Array[];

/** A write the file system refused (no space, read-only, permission): one line naming the path. */
export class OutputError extends FlashringError {
  override name = 'OutputError';   // not the minified class name (FlashringError's constructor)
}

/** The most a text input (a log, a CSV) may hold: the longest string Node makes (~512 MiB). */
export const MAX_TEXT_BYTES = 0x1fffffe8;
/** The most a binary input (.npy) may hold: what Node reads into one buffer (2 GiB). */
export const MAX_BINARY_BYTES = 2 ** 31 - 1;

/**
 * A size as messages give it: KiB (rounded up) below 1 MiB, whole MiB below 1 GiB, GiB with a decimal from there ('200.0 GiB',
 * not '204800 MiB'). The unit goes by the rounded figure: 1023.6 MiB is '1.0 GiB', not '1024 MiB'.
 */
export function sizeOf(n: number): string {
  const mib = Math.round(n / 2 ** 20), kib = Math.ceil(n / 1024);
  return mib >= 1024 ? `${(n / 2 ** 30).toFixed(1)} GiB` : kib >= 1024 ? `${mib} MiB` : `${kib} KiB`;
}
/** How a message names a flag: `--out`; a positional is given by its name with a space (`input file`). */
const who = (flag: string) => (flag.includes(' ') ? flag : `--${flag}`);
const asInput = (flag: string) => (flag.includes(' ') ? flag : `input ${who(flag)}`);

function kindOf(st: Stats): string | null {
  if (st.isFile()) return null;
  if (st.isDirectory()) return 'a folder';
  if (st.isFIFO()) return 'a pipe (FIFO)';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not an ordinary file';
}

/** Why a file cannot be read or looked at, in words: 'no such file', 'permission denied (EACCES)', else `verb (CODE)`. */
export function readProblem(e: unknown, verb = 'cannot read it'): string {
  const code = (e as NodeJS.ErrnoException)?.code;
  const words: Record<string, string> = { ENOENT: 'no such file', ENOTDIR: 'a part of that path is a file, not a folder', EISDIR: 'a folder, not a file' };
  if (code && code in words) return words[code];
  return code === 'EACCES' || code === 'EPERM' ? `permission denied (${code})` : `${verb} (${code ?? (e as Error)?.message ?? String(e)})`;
}

/**
 * Checks that `path` is an ordinary file of at most `maxBytes` before anything reads it. With
 * `present` only what exists is judged (a missing file or a folder is left to the reader's own report).
 * `fix`: what to do with a file that is too large, fit to it (the reader's words, e.g. attention's for a .npy),
 * appended to the refusal.
 */
export async function checkInputFile(flag: string, path: string, maxBytes: number, present = false, fix?: () => Promise<string>): Promise<void> {
  let st: Stats;
  try {
    st = await stat(path);
  } catch (e) {
    if (present) return;
    throw new InputError(`${who(flag)} ${path}: ${readProblem(e, 'cannot look at it')}`);
  }
  const kind = kindOf(st);
  if (kind && !(present && st.isDirectory())) throw new InputError(`${who(flag)} ${path} is ${kind}, not an ordinary file: give a file (a pipe or device could be endless)`);
  if (st.size > maxBytes) {
    // In bytes where the sizes would read the same (2 GiB and a .npy header: 'holds 2.0 GiB; at most 2.0 GiB').
    const [has, most] = sizeOf(st.size) === sizeOf(maxBytes) ? [`${st.size} bytes`, `${maxBytes} bytes`] : [sizeOf(st.size), sizeOf(maxBytes)];
    throw new InputError(`${who(flag)} ${path} holds ${has}; at most ${most} can be read${fix ? await fix() : ''}`);
  }
}

/** Pseudo-filesystems nothing should be written into (mkdir there can hang or fail oddly). */
const SPECIAL = ['/proc', '/sys', '/dev'];
/** Ordinary folders under them: /dev/shm is a tmpfs where people keep scratch results. */
const ORDINARY = ['/dev/shm'];
const under = (p: string, root: string) => p === root || p.startsWith(root.endsWith(sep) ? root : root + sep);
const isSystemFolder = (real: string) => SPECIAL.some((r) => under(real, r)) && !ORDINARY.some((r) => under(real, r));

/** The nearest existing ancestor of `abs` (itself if it exists), with its stat. */
async function nearestExisting(flag: string, given: string, abs: string) {
  for (let p = abs; ; p = dirname(p)) {
    try {
      return { path: p, st: await stat(p) };
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code === 'ENOTDIR') throw new InputError(`${who(flag)} ${given}: a part of that path is a file, not a folder`);
      if (code !== 'ENOENT') throw new InputError(`${who(flag)} ${given}: cannot look at ${p} (${code ?? (e as Error).message})`);
      if (dirname(p) === p) throw new InputError(`${who(flag)} ${given}: no part of that path exists`);
    }
  }
}

/** `abs` with its existing part resolved through links: the path the file system will write. */
async function realTarget(flag: string, given: string, abs: string): Promise<{ real: string; existing: string; st: Stats }> {
  const { path, st } = await nearestExisting(flag, given, abs);
  const rest = relative(path, abs);
  return { real: rest ? join(await realpath(path), rest) : await realpath(path), existing: path, st };
}

async function checkWritableFolder(flag: string, given: string, folder: string): Promise<void> {
  const real = await realpath(folder);
  if (isSystemFolder(real)) throw new InputError(`${who(flag)} ${given}: ${real} is a system folder; choose an ordinary folder`);
  try {
    await access(folder, constants.W_OK | constants.X_OK);
  } catch {
    throw new InputError(`${who(flag)} ${given}: the folder ${folder} is not writable`);
  }
}

/** An InputError where a path flag was given an empty name ('--FLAG must name a file, got '''), at once, before any work. */
export function checkNamed(flag: string, v: string | undefined, what: 'a file' | 'a folder' = 'a file'): void {
  if (v === '') throw new InputError(`${who(flag)} must name ${what}, got ''`);
}

/**
 * The first part of `abs` below its nearest existing ancestor `existing` that is a symbolic link to nothing
 * (stat finds no such path, lstat a link), with its target; or null. Creating the folder there fails (EEXIST).
 */
async function danglingLink(abs: string, existing: string): Promise<{ path: string; target: string } | null> {
  for (let p = abs; p !== existing && dirname(p) !== p; p = dirname(p)) {
    const st = await lstat(p).catch(() => null);
    if (st?.isSymbolicLink()) return { path: p, target: await readlink(p).catch(() => '?') };
  }
  return null;
}

/** An output folder: an existing writable folder, or a path whose nearest existing ancestor is one (and no link to nothing between). */
export async function checkOutputDir(flag: string, dir: string): Promise<void> {
  checkNamed(flag, dir, 'a folder');
  const abs = resolve(dir);
  const { path, st } = await nearestExisting(flag, dir, abs);
  if (!st.isDirectory()) throw new InputError(path === abs ? `${who(flag)} ${dir} exists and is not a folder` : `${who(flag)} ${dir}: ${path} is a file, not a folder`);
  const link = await danglingLink(abs, path);
  if (link) throw new InputError(`${who(flag)} ${dir}: ${link.path} is a symbolic link to ${link.target}, which does not exist, so no folder can be made there: create its target, or give another path`);
  await checkWritableFolder(flag, dir, path);
}

/** Files a run will write into one folder: `sizes` in bytes, into `dir` (or the nearest existing folder above it); `path` is how messages name it (the flag's value). */
export interface RoomNeed { flag: string; path: string; dir: string; sizes: readonly number[] }

/**
 * An InputError, before any work, where the file system of `dir` (or of the nearest existing folder above
 * it) has less free space than files of `sizes` bytes take there (each in whole blocks), what the run will
 * write: the write would fail at the end (ENOSPC), the work lost. Free space is what this user may fill:
 * the blocks available to anyone (bavail), and for root also those the file system keeps for root (bfree).
 * Where the file system cannot say (statfs fails, or it reports no blocks at all), nothing is refused.
 */
export function checkRoom(flag: string, dir: string, sizes: readonly number[]): Promise<void> {
  return checkRooms([{ flag, path: dir, dir, sizes }]);
}

/** checkRoom for the files of several outputs: those on one file system (one device) counted together against its free space. */
export async function checkRooms(needs: readonly RoomNeed[]): Promise<void> {
  const byDevice = new Map<number, { at: string; needs: RoomNeed[] }>();
  for (const n of needs) {
    const { path, st } = await nearestExisting(n.flag, n.path, resolve(n.dir));
    const g = byDevice.get(st.dev) ?? { at: path, needs: [] };
    g.needs.push(n);
    byDevice.set(st.dev, g);
  }
  for (const g of byDevice.values()) await checkFileSystem(g.at, g.needs);
}

async function checkFileSystem(at: string, needs: RoomNeed[]): Promise<void> {
  const fs = await statfs(at).catch(() => null);
  if (!fs || fs.blocks === 0) return; // a file system that gives no sizes (some FUSE mounts report 0 of 0)
  const block = fs.bsize > 0 ? fs.bsize : 1, free = (process.getuid?.() === 0 ? fs.bfree : fs.bavail) * fs.bsize;
  const bytes = needs.flatMap((n) => n.sizes).reduce((sum, n) => sum + Math.ceil(n / block) * block, 0);
  if (free >= bytes) return;
  const where = needs.map((n) => `${who(n.flag)} ${n.path}`).join(' and ');
  // In bytes where the sizes would read the same (1.02 GiB needed, 1023.8 MiB free: 'writes 1.0 GiB … has 1.0 GiB free').
  const [writes, has] = sizeOf(bytes) === sizeOf(free) ? [`${bytes} bytes`, `${free} bytes`] : [sizeOf(bytes), sizeOf(free)];
  const fsIs = needs.length > 1 ? `on their file system, which has ${has} free` : `there and its file system has ${has} free`;
  throw new InputError(`${where}: this run writes ${writes} ${fsIs}: make room, or give ${needs.length > 1 ? 'folders' : 'a folder'} on another disk`);
}

/** An output file: not a folder, not under a system folder, in a folder that exists and can be written. */
async function checkOutputFile(flag: string, file: string): Promise<void> {
  checkNamed(flag, file);
  const abs = resolve(file);
  const { path, st } = await nearestExisting(flag, file, abs);
  if (path === abs) {
    if (st.isDirectory()) throw new InputError(`${who(flag)} ${file} is a folder; give a file name`);
    if (!st.isFile()) throw new InputError(`${who(flag)} ${file} exists and is not an ordinary file`);
    await checkWritableFolder(flag, file, dirname(abs));
    try {
      await access(abs, constants.W_OK);
    } catch {
      throw new InputError(`${who(flag)} ${file} is not writable`);
    }
    return;
  }
  if (path !== dirname(abs)) throw new InputError(`${who(flag)} ${file}: the folder ${dirname(abs)} does not exist`);
  if (!st.isDirectory()) throw new InputError(`${who(flag)} ${file}: ${path} is not a folder`);
  await checkWritableFolder(flag, file, path);
}

/** A file or folder a command reads (its flag, or how the positional is called, e.g. 'LOG'). */
export interface InputPath { flag: string; path: string }
/**
 * What a command writes: a file, or a folder of named files. `what` names the output (for messages)
 * and `looks` says whether the start of an existing file reads like this command's own earlier
 * output. An existing file at an output path is overwritten only when it does (a rerun, whatever the
 * file is called) or when the user passed --force; anything else is refused before any work
 * (`--csv README.md`, `--timeline package.json`: the file would be lost). The extension is no licence:
 * a user's own `results.csv` is refused too.
 */
export type OutputTarget =
  | { flag: string; path: string; kind: 'file'; what: string; looks: (head: string) => boolean }
  | { flag: string; path: string; kind: 'dir'; names: readonly string[]; manifest?: Manifest; kinds?: Readonly<Record<string, { what: string; looks: (head: string) => boolean }>> };

/**
 * A folder target's files are judged as file targets are, by `kinds` (a name's `looks` at its start), or by a
 * record: a folder target's record of what the command wrote there (one of its `names`, written with the
 * rest): `lists` gives the names an existing record lists, or null when the file is not such a
 * record. An existing file under one of the names is overwritten only when the record lists it
 * (`o.npy` of an earlier run; a reference `o.npy` saved there by another program is refused).
 */
export interface Manifest { name: string; lists: (text: string) => readonly string[] | null }

/** The start of the header toCsv writes (src/memory/csv.ts; later columns were added over time). */
const CSV_HEADER = CSV_COLUMNS.join(',');

/**
 * Whether the start of a file is a points CSV of ours whose rows (those whole in `head`) pass `rule`: a
 * sweep's are all the model's, a replay's all measured from logs, a bench's the model's first; so a sweep
 * does not overwrite measured points, nor a replay a sweep, though all write the same header.
 */
function pointsCsv(head: string, rule: (rows: ReturnType<typeof parseCsv>) => boolean, firstRowOnly = false): boolean {
  if (!head.startsWith(CSV_HEADER)) return false;
  // Only the first row where only it decides (a bench's measured rows, written by any version, are not read).
  let whole = head;
  if (firstRowOnly) {
    const end = head.indexOf('\n', head.indexOf('\n') + 1);
    if (end >= 0) whole = head.slice(0, end + 1);
  } else if (head.length >= 4096) whole = head.slice(0, head.lastIndexOf('\n') + 1);
  try {
    return rule(parseCsv(whole));
  } catch {
    return false;
  }
}

/** The kinds of outputs shared by commands (notes.ts has the notes'). */
export const OUTPUT_KINDS = {
  sweepCsv: { what: "a sweep's points CSV written by flashring (header seq_len,tp,cp,…, rows of source model)", looks: (h: string) => pointsCsv(h, (rows) => rows.every((r) => r.source === 'model')) },
  replayCsv: {
    what: "a replay's points CSV of Megatron-LM logs written by flashring (header seq_len,tp,cp,…, every row's source 'measured: Megatron-LM log …'; a measured dataset of other sources is not overwritten)",
    // A replay's rows are those it reads from Megatron-LM logs: a measured dataset (the PyTorch harness's,
    // one a person curated) has the same header and is not a replay's to overwrite (an adversarial review).
    looks: (h: string) => pointsCsv(h, (rows) => rows.every((r) => r.source.startsWith(REPLAY_SOURCE))),
  },
  timeline: { what: 'a flashring timeline (JSON with "kind": "flashring.timeline")', looks: (h: string) => /^\s*\{\s*"kind"\s*:\s*"flashring\.timeline"/.test(h) },
} as const;

/** bench's memory sweep files in --out (src/bench/memory.ts MEMORY_SWEEP_FILES): each overwritten only where it is a bench's own. */
export const MEMORY_SWEEP_KINDS = {
  // Its first row the model's (measured rows, from --measured, follow the model's).
  'activation_memory.csv': { what: "a bench's memory sweep CSV (header seq_len,tp,cp,…, the model's rows, measured ones after them)", looks: (h: string) => pointsCsv(h, (rows) => rows[0]?.source === 'model', true) },
  'activation_memory.json': { what: 'a bench\'s memory sweep JSON ("kind": "flashring.memory")', looks: (h: string) => /^\s*\{\s*"kind"\s*:\s*"flashring\.memory"/.test(h) },
  'activation_memory.png': { what: 'a PNG image (the sweep\'s chart)', looks: (h: string) => h.startsWith('\x89PNG\r\n\x1a\n') },
} as const;

/** How OutputPlan.make treats existing files: `force` overwrites them whatever they hold (the user said so). */
export interface OutputOptions { force?: boolean }

interface Resolved { flag: string; given: string; real: string; ino?: string; isDir: boolean }

/** A file's identity, device and inode: two paths or links to one file give the same. */
export const inode = (st: Stats | null) => (st ? `${st.dev}:${st.ino}` : undefined);
const statOrNull = (p: string) => stat(p).catch(() => null);

async function resolveInputs(inputs: readonly InputPath[]): Promise<Resolved[]> {
  return Promise.all(inputs.map(async (i) => {
    const st = await statOrNull(i.path);
    // (/dev/stdin on a pipe stats but has no real path: the reader's own check then says it is a pipe)
    const real = st ? await realpath(i.path).catch(() => resolve(i.path)) : resolve(i.path);
    return { flag: i.flag, given: i.path, real, ino: inode(st), isDir: !!st?.isDirectory() };
  }));
}

/** The most bytes a file name may have (Linux's NAME_MAX on ext4, xfs, btrfs, tmpfs). */
const NAME_MAX = 255;

/**
 * What the longest name a write puts beside `path` adds to its name, exactly: its temporary (tempPath,
 * `.NAME.PID.STAMP.tmp`: this process's pid and a stamp of 8, Date.now() in base 36 until 2059) and, where a file
 * is there to be replaced, the kept file (keptPath, `.NAME.PID.STAMP.kept.tmp`), 5 bytes longer. A folder there
 * is not kept (its rename fails, said then).
 */
async function tempExtra(path: string): Promise<{ extra: number; kept: boolean }> {
  const st = await lstat(path).catch(() => null), kept = !!st && !st.isDirectory(), stamp = Date.now().toString(36);
  const longest = kept ? keptPath(path, stamp) : tempPath(path, stamp);
  return { extra: Buffer.byteLength(basename(longest)) - Buffer.byteLength(basename(path)), kept };
}

/**
 * An InputError, before any work, where a name with its temporary's would be longer than a file name may be:
 * the write would fail after the work, ENAMETOOLONG on a temporary the user never named.
 */
async function checkNameRoom(flag: string, path: string): Promise<void> {
  const name = Buffer.byteLength(basename(path)), { extra, kept } = await tempExtra(path);
  if (name + extra <= NAME_MAX) return;
  const why = kept ? 'the file it replaces is kept aside until the write is done under a name' : 'it is written through a temporary whose name is';
  throw new InputError(`${who(flag)} ${path}: its name is ${name} bytes, and ${why} ${extra} bytes longer, beyond the ${NAME_MAX} bytes a file name may have: give a name of at most ${NAME_MAX - extra} bytes`);
}

/** Each written path of the targets: a file target itself, a folder target and each name in it. */
async function resolveOutputs(outputs: readonly OutputTarget[]): Promise<Resolved[]> {
  const out: Resolved[] = [];
  const folders = outputs.filter((o) => o.kind === 'dir').map((o) => resolve(o.path));
  for (const o of outputs) {
    for (const p of o.kind === 'file' ? [o.path] : o.names.map((n) => join(o.path, n))) await checkNameRoom(o.flag, p);
    // A file inside a folder target this run creates: that folder is what is checked.
    if (o.kind === 'file' && !folders.includes(dirname(resolve(o.path)))) await checkOutputFile(o.flag, o.path);
    else if (o.kind === 'file') await checkOutputDir(o.flag, dirname(o.path));
    else await checkOutputDir(o.flag, o.path);
    const t = await realTarget(o.flag, o.path, resolve(o.path));
    const isDir = o.kind === 'dir';
    out.push({ flag: o.flag, given: o.path, real: t.real, ino: t.existing === resolve(o.path) ? inode(t.st) : undefined, isDir });
    if (o.kind === 'dir') for (const n of o.names) {
      const real = join(t.real, n), st = await statOrNull(real), kind = st && kindOf(st);
      // a folder, a pipe or a device where a file goes (a FIFO named as the run's record would block its read forever)
      if (kind) throw new InputError(`${who(o.flag)} ${join(o.path, n)} is ${kind} where this command writes a file: move or remove it, or give another --${o.flag}`);
      out.push({ flag: o.flag, given: join(o.path, n), real, ino: inode(st), isDir: false });
    }
  }
  return out;
}

/** The first bytes of a file, one character a byte (latin1: the headers compared are ASCII, and .npy's magic byte 0x93 stays '\x93'). */
async function headOf(flag: string, path: string, bytes: number = 4096): Promise<string> {
  let fh;
  try {
    fh = await open(path, 'r');
  } catch (e) {
    throw new InputError(`${who(flag)} ${path} exists and cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message}) to tell whether it is this command's earlier output: give another path, or pass --force to overwrite it`);
  }
  try {
    const buf = Buffer.alloc(bytes);
    const { bytesRead } = await fh.read(buf, 0, bytes, 0);
    return buf.subarray(0, bytesRead).toString('latin1');
  } finally {
    await fh.close();
  }
}

/** An existing file where an output goes that is not this command's earlier output, as a message: it would be lost. */
async function wouldLose(outputs: readonly OutputTarget[]): Promise<string | null> {
  const lose = (flag: string, path: string, what: string) =>
    `${who(flag)} ${path} exists and is not ${what}: writing over it would lose it; give another path, remove the file, or pass --force to overwrite it`;
  for (const o of outputs) {
    if (o.kind === 'file') {
      const st = await statOrNull(resolve(o.path));
      if (st?.isFile() && !o.looks(await headOf(o.flag, resolve(o.path)))) return lose(o.flag, o.path, o.what);
      continue;
    }
    for (const [n, k] of Object.entries(o.kinds ?? {})) {
      const path = join(o.path, n);
      if ((await statOrNull(resolve(path)))?.isFile() && !k.looks(await headOf(o.flag, resolve(path)))) return lose(o.flag, path, k.what);
    }
    if (!o.manifest) continue;
    const record = join(o.path, o.manifest.name);
    const listed = (await statOrNull(resolve(record)))?.isFile() ? o.manifest.lists(await headOf(o.flag, resolve(record), 1 << 16)) : [];
    if (listed === null) return lose(o.flag, record, "this command's record of what it wrote there");
    for (const n of o.names) {
      const path = join(o.path, n);
      if (n !== o.manifest.name && (await statOrNull(resolve(path)))?.isFile() && !listed.includes(n))
        return lose(o.flag, path, `listed in ${o.manifest.name} as written by an earlier run of this command (another program's file, or a run before the record)`);
    }
  }
  return null;
}

const same = (a: Resolved, b: Resolved) => a.real === b.real || (a.ino !== undefined && a.ino === b.ino);

/** The first collision between outputs and inputs, or between two outputs, as a message. */
function collision(ins: Resolved[], outs: Resolved[]): string | null {
  for (const o of outs) for (const i of ins) {
    if (same(o, i)) return `${who(o.flag)} would write ${o.given}, which is the ${asInput(i.flag)} ${i.given}: choose another path (the input would be overwritten)`;
    if (i.isDir && under(o.real, i.real)) return `${who(o.flag)} ${o.given} is inside the ${asInput(i.flag)} ${i.given}: choose a path outside it`;
  }
  for (let a = 0; a < outs.length; a++) for (let b = a + 1; b < outs.length; b++) {
    const [x, y] = [outs[a], outs[b]];
    if (x.flag === y.flag && x.isDir) continue; // a folder target and its own names
    if (same(x, y)) return `${who(y.flag)} ${y.given} is also written by ${who(x.flag)} (${x.given}): give each output its own path`;
    if (under(y.real, x.real) && !x.isDir) return `${who(y.flag)} ${y.given} is inside ${who(x.flag)}'s file ${x.given}: give each output its own path`;
    if (under(x.real, y.real) && !y.isDir) return `${who(x.flag)} ${x.given} is inside ${who(y.flag)}'s file ${y.given}: give each output its own path`;
  }
  return null;
}

/**
 * Undoes, if the process ends before the write is done, one path this process is writing (a temporary)
 * or created (a folder: removed only while empty, since another run or the user may have put files in
 * it). The registry runs newest first: temporaries, then folders innermost first.
 */
function removeAtExit(path: string, kind: 'file' | 'dir'): () => void {
  return atExit(() => (kind === 'dir' ? rmdirSync(path) : rmSync(path, { force: true })));
}

const WRITE_CODES: Record<string, string> = {
  ENOSPC: 'no space left on the device', EDQUOT: 'the disk quota is used up', EROFS: 'the file system is read-only',
  EACCES: 'permission denied', EPERM: 'operation not permitted', EFBIG: 'the file is larger than the file system allows', EIO: 'an I/O error',
  EISDIR: 'a folder is in the way', ENOTEMPTY: 'a folder is in the way', EBUSY: 'the file is busy (a mount point?)',
  ENAMETOOLONG: 'a name on the way (or its temporary) is too long',
};
const reasonOf = (e: unknown) => {
  const code = (e as NodeJS.ErrnoException)?.code;
  return code && code in WRITE_CODES ? `${WRITE_CODES[code]} (${code})` : (e as Error)?.message ?? String(e);
};

/** A file-system error while writing `path` (flag `flag`), as one line; other errors unchanged. */
function writeError(e: unknown, flag: string, path: string): unknown {
  const code = (e as NodeJS.ErrnoException)?.code;
  if (!code || !(code in WRITE_CODES)) return e;
  return new OutputError(`cannot write ${path} (${who(flag)}): ${WRITE_CODES[code]} (${code}); nothing was written`);
}

/**
 * Writes `data` to `temp`, the temporary of `target`, with the permissions `target` has where it exists
 * (a file written over keeps them: a private file stays private, and its temporary is private until then),
 * else the default ones.
 */
export async function writeTemp(temp: string, target: string, data: FileData): Promise<void> {
  const old = await statOrNull(target);
  await writeFile(temp, data, old?.isFile() ? { mode: 0o600 } : {});
  if (old?.isFile()) await chmod(temp, old.mode & 0o7777);
}

/** The temporary a write puts beside `target` before renaming it into place: `.<name>.<pid>.<stamp>.tmp`. */
export function tempPath(target: string, stamp: string): string {
  return join(dirname(target), `.${basename(target)}.${process.pid}.${stamp}.tmp`);
}

/** Where a write keeps the file it replaces until all its renames are done: a temporary named `.<name>.<pid>.<stamp>.kept.tmp`. */
const keptPath = (target: string, stamp: string): string => tempPath(target, `${stamp}.kept`);

/** The target's name and the writer's pid of a file named as tempPath names temporaries (or keptPath kept files), or null. */
function tempOwner(name: string): { target: string; pid: number } | null {
  const m = /^\.(.+)\.(\d+)\.(?!kept\.tmp$)[0-9a-z]+(?:\.kept)?\.tmp$/.exec(name);
  return m ? { target: m[1], pid: Number(m[2]) } : null;
}

/**
 * Temporaries an earlier run of a process now gone left beside these targets (a signal that landed while
 * Node's thread created one, after the exit cleanup ran; a SIGKILL mid-commit, which leaves kept files): removed.
 */
export async function removeDeadTemps(paths: readonly string[]): Promise<void> {
  for (const dir of new Set(paths.map((p) => dirname(p)))) {
    const names = new Set(paths.filter((p) => dirname(p) === dir).map((p) => basename(p)));
    for (const n of await readdir(dir).catch(() => [] as string[])) {
      const t = tempOwner(n);
      if (t && names.has(t.target) && !processAlive(t.pid)) await rm(join(dir, n), { force: true });
    }
  }
}

/** Whether a process of this machine is running (signal 0: EPERM means it is, owned by another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The folders `mkdir -p dir` creates, outermost first. */
async function missingFolders(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (let p = resolve(dir); !(await statOrNull(p)); p = dirname(p)) out.unshift(p);
  return out;
}

/**
 * One output's move into place: its temporary, and the file it replaces kept aside (`kept`) until every
 * output is in place; `moved` where that file itself was moved aside (a file system without hard links).
 */
interface Swap { target: string; temp: string; kept: string | null; moved: boolean; replaced: boolean }

/** Keeps the file at `s.target` (a file or a link; nothing, or a folder, is not kept) aside: a hard link, else the file moved aside. */
function keepAside(s: Swap, stamp: string): void {
  let st: Stats;
  try {
    st = lstatSync(s.target);
  } catch {
    return; // nothing there: a new file
  }
  if (st.isDirectory()) return; // a folder in the way: its rename fails and nothing was replaced
  const kept = keptPath(s.target, stamp);
  try {
    linkSync(s.target, kept);
  } catch {
    renameSync(s.target, kept); // (its failure, EPERM on an immutable file, fails the write before any rename)
    s.moved = true;
  }
  s.kept = kept;
}

/**
 * Renames every temporary over its target, all or none: each file replaced is kept aside first; a failed
 * rename puts back every target already replaced (and removes those new this run), and throws its error.
 * Synchronous: a signal's handler (an exit) runs before or after the whole commit, never between two
 * renames. Only SIGKILL or a crash mid-commit leaves some targets new, with the earlier files beside
 * them as keptPath names, until the next write there removes them (removeDeadTemps).
 */
function commit(swaps: Swap[], stamp: string, at: (path: string) => void): void {
  try {
    for (const s of swaps) {
      at(s.target);
      keepAside(s, stamp);
    }
    for (const s of swaps) {
      at(s.target);
      renameSync(s.temp, s.target);
      s.replaced = true;
    }
  } catch (e) {
    const left = putBack(swaps);
    dropKept(swaps, left);
    throw left.length ? new PutBackError(left, e) : e;
  }
  dropKept(swaps, []);
}

/** Removes the kept files but those of `left` (they hold a target's earlier content); one that stays is removed by a later write (removeDeadTemps). */
function dropKept(swaps: Swap[], left: Swap[]): void {
  for (const s of swaps) {
    if (!s.kept || left.includes(s)) continue;
    try {
      rmSync(s.kept, { force: true });
    } catch { /* named as a temporary: the next write there removes it */ }
  }
}

/** Puts back every target replaced or moved aside (removes a new one); returns those that could not be. */
function putBack(swaps: Swap[]): Swap[] {
  const left: Swap[] = [];
  for (const s of swaps) {
    if (!s.replaced && !s.moved) continue;
    try {
      if (s.kept) renameSync(s.kept, s.target);
      else rmSync(s.target, { force: true }); // new this run
      Object.assign(s, { kept: null, moved: false, replaced: false });
    } catch {
      left.push(s);
    }
  }
  return left;
}

/** A failed commit whose put-back failed too: `left` are the targets not as they were. */
class PutBackError extends Error {
  constructor(readonly left: Swap[], readonly failure: unknown) {
    super('put-back failed');
  }
}

/** The message of a write that failed at `path` (flag `flag`) and could not put back `left`: which files hold what. */
function partialWrite(cause: unknown, flag: string, path: string, left: Swap[]): OutputError {
  const each = left.map((s) => (s.replaced
    ? `${s.target} holds this run's data${s.kept ? ` (its earlier content is in ${s.kept}: move it back by hand before writing there again)` : ' (it is new)'}`
    : `${s.target} is missing (its earlier content is in ${s.kept}: move it back by hand before writing there again)`));
  return new OutputError(`cannot write ${path} (${who(flag)}): ${reasonOf(cause)}; putting back the files it had replaced failed too: ${each.join('; ')}; every other output is as before`);
}

/** The outputs of one run: checked when made, written all at once by write(). */
export class OutputPlan {
  /** Folders this plan created, outermost first, each with the withdrawal of its removal at exit. */
  private created: { path: string; keep: () => void }[] = [];
  private constructor(private readonly targets: readonly OutputTarget[]) {}

  /** Resolves and checks every output against the inputs and each other, before any work. */
  static async make(inputs: readonly InputPath[], outputs: readonly OutputTarget[], opts: OutputOptions = {}): Promise<OutputPlan> {
    const why = collision(await resolveInputs(inputs), await resolveOutputs(outputs)) ?? (opts.force ? null : await wouldLose(outputs));
    if (why) throw new InputError(why);
    return new OutputPlan(outputs);
  }

  /** The flag whose target holds `path` (for messages). */
  private flagOf(path: string): string {
    const abs = resolve(path);
    const t = this.targets.find((o) => (o.kind === 'file' ? resolve(o.path) === abs : under(abs, resolve(o.path))));
    return t?.flag ?? 'out';
  }

  /**
   * Creates the folder targets and the folders inside them that `files` go to (remembering what it
   * created, for removal on failure). A file's folder outside every folder target was checked to exist.
   */
  private async makeFolders(files: readonly { path: string }[]): Promise<void> {
    const roots = this.targets.filter((t) => t.kind === 'dir').map((t) => ({ flag: t.flag, root: resolve(t.path) }));
    const wanted = [...roots.map((r) => r.root), ...files.map((f) => resolve(dirname(f.path)))];
    for (const dir of wanted) {
      const owner = roots.find((r) => under(dir, r.root));
      if (!owner) continue;
      for (const d of await missingFolders(dir)) {
        try {
          await mkdir(d);
        } catch (e) {
          throw writeError(e, owner.flag, d);
        }
        this.created.push({ path: d, keep: removeAtExit(d, 'dir') });
      }
    }
  }

  /**
   * Writes the files through temporaries and renames them into place, all or none (commit); on failure
   * removes the temporaries and every folder this plan created, and says which path failed.
   */
  async write(files: readonly { path: string; data: FileData }[]): Promise<void> {
    const stamp = Date.now().toString(36);
    const temps = files.map((f) => tempPath(f.path, stamp));
    const keeps: (() => void)[] = [];
    let at = '';
    try {
      await this.makeFolders(files);
      await removeDeadTemps(files.map((f) => f.path));
      for (let i = 0; i < files.length; i++) {
        at = files[i].path;
        keeps.push(removeAtExit(temps[i], 'file'));
        await writeTemp(temps[i], files[i].path, files[i].data);
      }
      const swaps: Swap[] = files.map((f, i) => ({ target: f.path, temp: temps[i], kept: null, moved: false, replaced: false }));
      commit(swaps, stamp, (p) => {
        at = p;
      });
      for (const keep of keeps) keep();
      for (const d of this.created) d.keep(); // they hold results now
    } catch (e) {
      await Promise.all(temps.map((t) => rm(t, { force: true })));
      for (const keep of keeps) keep();
      await this.abandon();
      if (e instanceof PutBackError) throw partialWrite(e.failure, this.flagOf(at), at, e.left);
      throw writeError(e, this.flagOf(at), at);
    }
  }

  /** Removes the folders this plan created that are still empty (a run that failed before writing). */
  async abandon(): Promise<void> {
    for (const d of [...this.created].reverse()) {
      await rmdir(d.path).catch(() => {}); // a folder holding results stays
      d.keep();
    }
    this.created = [];
  }
}

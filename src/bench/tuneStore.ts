/**
 * autotune's store under Node (src/bench/tune.ts TuneStore): one JSON file, default
 * $XDG_CACHE_HOME/flashring/tune.json, else ~/.cache/flashring/tune.json; the page keeps its
 * entries in IndexedDB (web/tuneStore.ts).
 */
import { link, lstat, mkdir, open, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { readFileSync, rmSync, unlinkSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { homedir, hostname } from 'node:os';
import { InputError } from '../errors.js';
import { atExit } from '../exit.js';
import { checkInputFile, MAX_TEXT_BYTES, processAlive, checkNamed, removeDeadTemps, tempPath, writeTemp } from '../cli/files.js';
import type { TuneEntry, TuneStore } from './tune.js';
import { isObject, tuneEntryProblem } from './tuneEntry.js';

export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'flashring', 'tune.json');
}

interface StoreFile { version: 1; entries: Record<string, unknown> }

/** What a store must be, as the messages say it. */
const STORE_FORM = 'a flashring tune store (JSON with version 1 and entries)';

/**
 * What to do about a file that is not a store: deleting it is suggested only where the file is flashring's own
 * (the default store, or one that looks like a store of flashring's, damaged: a JSON object of version and
 * entries alone, or text that begins as one); a file the user gave that is something else (a package.json, a .npy) is theirs: another is asked for.
 */
function notStoreHint(path: string, flag: string, text: string, data: unknown): string {
  const ours = resolve(path) === resolve(defaultStorePath()) ||
    (data !== undefined ? storeShaped(data) : /^\s*\{\s*"(version"\s*:\s*\d|entries")/.test(text));
  if (!ours) return `give another --${flag}`;
  return flag === 'store' ? `it looks like a damaged store: delete it (tune writes a new one) or give another --${flag}`
    : `it looks like a damaged store: delete it and run flashring tune --store ${path}, or give another --${flag}`;
}

async function readStore(path: string, flag: string): Promise<StoreFile> {
  // Looked at before a byte is read: a FIFO would block the read past any signal, /dev/zero fill the memory.
  await checkInputFile(flag, path, MAX_TEXT_BYTES, true);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return { version: 1, entries: {} };
    throw new InputError(`--${flag} ${path}: cannot read it (${(e as Error).message}); give another --${flag}`);
  }
  let data: StoreFile | undefined;
  try {
    data = JSON.parse(text) as StoreFile;
  } catch (e) {
    throw new InputError(`--${flag} ${path} is not ${STORE_FORM}: not JSON (${(e as Error).message}); ${notStoreHint(path, flag, text, undefined)}`);
  }
  // A store in a later format (its version and entries alone, the version above 1): a newer flashring's, whole. This one
  // cannot read it, and writing over it would lose its entries.
  if (storeShaped(data) && isObject(data.entries) && Number.isSafeInteger(data.version) && data.version > 1)
    throw new InputError(`--${flag} ${path} is a tune store of version ${data.version}, written by a newer flashring (this one reads version 1): run that flashring, or give another --${flag}`);
  if (!data || data.version !== 1 || typeof data.entries !== 'object' || data.entries === null || Array.isArray(data.entries))
    throw new InputError(`--${flag} ${path} is not ${STORE_FORM}; ${notStoreHint(path, flag, text, data)}`);
  return data;
}

/** A JSON object of a store's keys alone (version, entries; at least one): a store of flashring's, whatever it holds. */
const storeShaped = (data: unknown): data is Record<string, unknown> =>
  isObject(data) && Object.keys(data).length > 0 && Object.keys(data).every((k) => k === 'version' || k === 'entries');
/** How long set() waits for another writer's lock, and the age past which a lock no live process holds is stale. */
const LOCK_WAIT_MS = 20_000;
const STALE_MS = 30_000;

/** The lock's holder as the file names it (host, process, a token of its own), or null when it cannot be read (being written). */
function lockHolder(text: string): { host: string; pid: number; token: string } | null {
  const [host, pid, token] = text.split('\n');
  return host && /^\d+$/.test(pid ?? '') && token ? { host, pid: Number(pid), token } : null;
}

/**
 * The store's lock file (`<store>.lock`, created exclusively, naming its host, process and a token):
 * take() waits for another writer's, takes over a stale one (its process gone on this host, or unreadable
 * and older than STALE_MS), and fails after the wait naming the holder. The lock goes with the process if it
 * ends holding it (a signal: the CLI exits).
 */
class StoreLock {
  readonly lockPath: string;

  constructor(private readonly path: string, private readonly flag: string, private readonly waitMs: number, private readonly fail: (e: unknown) => InputError) {
    this.lockPath = `${path}.lock`;
  }

  /** Takes the lock; returns its release. */
  async take(): Promise<() => Promise<void>> {
    const mine = `${hostname()}\n${process.pid}\n${Math.random().toString(36).slice(2)}\n`;
    const deadline = Date.now() + this.waitMs;
    for (;;) {
      const release = await this.tryCreate(mine);
      if (release) return release;
      const held = await this.holder();
      if (held === 'gone') continue; // let go meanwhile: try again
      if (held.stale) await this.takeAside(held.text);
      else if (Date.now() > deadline)
        throw new InputError(`--${this.flag} ${this.path}: another process (${held.h ? `${held.h.pid} on ${held.h.host}` : 'unknown'}) has held its lock ${this.lockPath} for ${(held.age / 1000).toFixed(0)} s; if no flashring is writing the store, delete ${this.lockPath}`);
      else await new Promise((r) => setTimeout(r, 10 + Math.random() * 40));
    }
  }

  /** Creates the lock with `mine` in it and returns its release, or null where another holds it. */
  private async tryCreate(mine: string): Promise<(() => Promise<void>) | null> {
    let fh;
    try {
      fh = await open(this.lockPath, 'wx');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'EEXIST') return null;
      throw this.fail(e);
    }
    try {
      await fh.writeFile(mine);
    } finally {
      await fh.close();
    }
    const keep = atExit(() => {
      if (readFileSync(this.lockPath, 'utf8') === mine) unlinkSync(this.lockPath);
    });
    return async () => {
      keep();
      // Ours still (a waiter that judged it stale by mistake may have replaced it): removed.
      if ((await readFile(this.lockPath, 'utf8').catch(() => null)) === mine) await unlink(this.lockPath).catch(() => {});
    };
  }

  /** Who holds the lock and whether that holder is stale, or 'gone' where it was let go meanwhile. */
  private async holder(): Promise<'gone' | { text: string; h: ReturnType<typeof lockHolder>; age: number; stale: boolean }> {
    let st, text: string;
    try {
      st = await lstat(this.lockPath);
      if (!st.isFile() || st.size > 4096) throw new InputError(`--${this.flag} ${this.path}: ${this.lockPath} is not a lock flashring wrote (${st.isFile() ? 'too large' : 'not an ordinary file'}); delete it`);
      text = await readFile(this.lockPath, 'utf8');
    } catch (e) {
      if (e instanceof InputError) throw e;
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
      throw this.fail(e);
    }
    const age = Date.now() - st.mtimeMs, h = lockHolder(text);
    return { text, h, age, stale: h ? (h.host === hostname() ? !processAlive(h.pid) : age > STALE_MS) : age > STALE_MS };
  }

  /**
   * A stale lock taken aside under a name of this process's own, then removed if it is still the stale one
   * (another waiter may have taken it over and locked anew meanwhile: that lock is put back).
   */
  private async takeAside(text: string): Promise<void> {
    const aside = `${this.lockPath}.${process.pid}.${Math.random().toString(36).slice(2)}.stale`;
    try {
      await rename(this.lockPath, aside);
      if ((await readFile(aside, 'utf8')) !== text) await link(aside, this.lockPath).catch(() => {});
      await unlink(aside);
    } catch { /* another waiter was first */ }
  }
}

const writeFailure = (path: string, flag: string) => (e: unknown) =>
  new InputError(`--${flag} ${path}: cannot write it (${(e as Error).message}); give another --${flag}`);
/** A temporary beside the store, named as the outputs' temporaries are, so that one a process now gone left is found and removed alike. */
const storeTemp = (path: string) => tempPath(path, Math.random().toString(36).slice(2) || '0');

/**
 * That the store's folder takes files (made where it is missing), so that a search is not lost at its end: an InputError
 * naming `flag` where it does not. The folder is made here only: a caller that may still refuse (tune, before its
 * device's checks) opens the store with `writable` false and calls this once nothing is refused.
 */
export async function checkStoreWritable(path: string, flag = 'store'): Promise<void> {
  try {
    await mkdir(dirname(path), { recursive: true });
    const t = storeTemp(path);
    await writeFile(t, '');
    await unlink(t);
  } catch (e) {
    throw writeFailure(path, flag)(e);
  }
}

export interface StoreOptions {
  /** How long set() waits for another writer's lock (ms); default 20 s. */
  lockWaitMs?: number;
}

/**
 * The JSON store. Read when opened (a bad file is an InputError naming `flag`); an entry that is
 * damaged or of another format is treated as absent, with a note on stderr (a search replaces it).
 * Each set takes the store's lock (`<store>.lock`, created exclusively: several processes may tune
 * at once), removes temporaries a process now gone left beside the store, reads the store again and adds its
 * entry to what is there, writes a temporary file of its own (named as the outputs' are,
 * src/cli/files.ts tempPath), renames it over the store and lets the lock go. A lock whose process is gone (on this
 * host), or unreadable and older than 30 s, is taken over; one held longer than the wait is an
 * error naming it. `writable`: check up front that the folder takes files (checkStoreWritable), so that a
 * search is not lost at its end.
 */
export async function fileTuneStore(path: string, flag = 'store', writable = true, opts: StoreOptions = {}): Promise<TuneStore> {
  // As an empty --out is (src/cli/files.ts): '' would pass every check up front and fail only at the rename, after the search.
  checkNamed(flag, path);
  let data = await readStore(path, flag);
  const fail = writeFailure(path, flag);
  if (writable) await checkStoreWritable(path, flag);
  const noted = new Set<string>();
  const lock = new StoreLock(path, flag, opts.lockWaitMs ?? LOCK_WAIT_MS, fail);

  return {
    get: async (key) => {
      if (!Object.hasOwn(data.entries, key)) return undefined;
      const entry = data.entries[key];
      const why = tuneEntryProblem(key, entry);
      if (why === null) return entry as TuneEntry;
      if (!noted.has(key)) {
        noted.add(key);
        const [D, precision, mask] = key.split('|').slice(-3);
        process.stderr.write(`--${flag} ${path}: the entry for ${D} ${precision} ${mask} is damaged or of another flashring (${why}): treated as absent (a search replaces it)\n`);
      }
      return undefined;
    },
    set: async (entry, unusable) => {
      const release = await lock.take();
      try {
        await removeDeadTemps([path]);
        data = await readStore(path, flag);
        const dropped = unusable ? Object.keys(data.entries).filter((k) => k !== entry.key && unusable(k, data.entries[k])) : [];
        for (const k of dropped) delete data.entries[k];
        data.entries[entry.key] = entry;
        // The temporary goes at exit too (registered after the lock: removed before it).
        const t = storeTemp(path), keepTemp = atExit(() => rmSync(t, { force: true }));
        try {
          // The store written over keeps its permissions, as the outputs do.
          await writeTemp(t, path, JSON.stringify(data, null, 1));
          await rename(t, path);
        } catch (e) {
          await unlink(t).catch(() => {});
          throw fail(e);
        } finally {
          keepTemp();
        }
        return dropped.length;
      } finally {
        await release();
      }
    },
  };
}

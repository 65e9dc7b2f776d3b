/**
 * autotune's store under Node (src/bench/tune.ts TuneStore): one JSON file, default
 * $XDG_CACHE_HOME/flashring/tune.json, else ~/.cache/flashring/tune.json; the page keeps its
 * entries in IndexedDB (web/tuneStore.ts).
 */
import { mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { InputError } from '../errors.js';
import type { TuneEntry, TuneStore } from './tune.js';

export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'flashring', 'tune.json');
}

interface StoreFile { version: 1; entries: Record<string, TuneEntry> }

async function readStore(path: string, flag: string): Promise<StoreFile> {
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
    throw new InputError(`--${flag} ${path}: not JSON (${(e as Error).message}); delete it or give another --${flag}`);
  }
  if (!data || data.version !== 1 || typeof data.entries !== 'object' || data.entries === null)
    throw new InputError(`--${flag} ${path}: not a flashring tune store (no version 1 and entries); delete it or give another --${flag}`);
  return data;
}

/**
 * The JSON store. Read when opened (a bad file is an InputError naming `flag`); each set reads it
 * again and adds its entry to what is there (another process may have written meanwhile), writes a
 * temporary file of its own and renames it over the store. `writable`: check up front that the
 * folder takes files, so that a search is not lost at its end.
 */
export async function fileTuneStore(path: string, flag = 'store', writable = true): Promise<TuneStore> {
  let data = await readStore(path, flag);
  const fail = (e: unknown) => new InputError(`--${flag} ${path}: cannot write it (${(e as Error).message}); give another --${flag}`);
  const tmp = () => `${path}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
  if (writable) {
    try {
      await mkdir(dirname(path), { recursive: true });
      const t = tmp();
      await writeFile(t, '');
      await unlink(t);
    } catch (e) {
      throw fail(e);
    }
  }
  return {
    get: async (key) => data.entries[key],
    set: async (entry) => {
      data = await readStore(path, flag);
      data.entries[entry.key] = entry;
      const t = tmp();
      try {
        await writeFile(t, JSON.stringify(data, null, 1));
        await rename(t, path);
      } catch (e) {
        await unlink(t).catch(() => {});
        throw fail(e);
      }
    },
  };
}

/**
 * autotune's store under Node (src/bench/tune.ts TuneStore): one JSON file, default
 * $XDG_CACHE_HOME/flashring/tune.json, else ~/.cache/flashring/tune.json; the page keeps its
 * entries in IndexedDB (web/tuneStore.ts).
 */
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { homedir } from 'node:os';
import { InputError } from '../errors.js';
import type { TuneEntry, TuneStore } from './tune.js';

export function defaultStorePath(env: NodeJS.ProcessEnv = process.env): string {
  return join(env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'flashring', 'tune.json');
}

interface StoreFile { version: 1; entries: Record<string, TuneEntry> }

/** The JSON store: read once, written whole through a temporary file on each set. */
export async function fileTuneStore(path: string, flag = 'store'): Promise<TuneStore> {
  let data: StoreFile = { version: 1, entries: {} };
  let text: string | null = null;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new InputError(`--${flag} ${path}: cannot read it (${(e as Error).message}); give another --${flag}`);
  }
  if (text !== null) {
    try {
      data = JSON.parse(text) as StoreFile;
      if (data.version !== 1 || typeof data.entries !== 'object' || data.entries === null) throw new Error('not a flashring tune store');
    } catch (e) {
      throw new InputError(`--${flag} ${path}: not a flashring tune store (${(e as Error).message}); delete it or give another --${flag}`);
    }
  }
  return {
    get: async (key) => data.entries[key],
    set: async (entry) => {
      data.entries[entry.key] = entry;
      await mkdir(dirname(path), { recursive: true });
      await writeFile(`${path}.tmp`, JSON.stringify(data, null, 1));
      await rename(`${path}.tmp`, path);
    },
  };
}


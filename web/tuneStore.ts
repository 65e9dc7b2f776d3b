/**
 * autotune's store in the page (src/bench/tune.ts TuneStore): IndexedDB database `flashring`,
 * object store `tune`, one entry per key (adapter, kernel sources, path, D, precision, mask), kept
 * across visits as the JSON file is under Node (src/bench/tuneStore.ts).
 */
import type { TuneEntry, TuneStore } from '../src/bench/tune.js';
import { tuneEntryProblem } from '../src/bench/tuneEntry.js';

const DB = 'flashring';
const STORE = 'tune';

function request<T>(r: IDBRequest<T>): Promise<T> {
  return new Promise((resolve, reject) => {
    r.onsuccess = () => resolve(r.result);
    r.onerror = () => reject(r.error ?? new Error('IndexedDB request failed'));
  });
}

function openDb(factory: IDBFactory): Promise<IDBDatabase> {
  const r = factory.open(DB, 1);
  r.onupgradeneeded = () => r.result.createObjectStore(STORE, { keyPath: 'key' });
  return request(r);
}

/**
 * Puts `entry` and deletes every other entry `unusable` names, in one transaction; resolves with how many were
 * deleted once it has committed.
 */
function putDropping(tx: IDBTransaction, entry: TuneEntry, unusable?: (key: string, entry: unknown) => boolean): Promise<number> {
  const s = tx.objectStore(STORE);
  let dropped = 0;
  s.put(entry);
  if (unusable) {
    const c = s.openCursor();
    c.onsuccess = () => {
      const at = c.result;
      if (!at) return;
      if (at.key !== entry.key && unusable(String(at.key), at.value)) (at.delete(), dropped++);
      at.continue();
    };
  }
  return new Promise((resolve, reject) => {
    tx.oncomplete = () => resolve(dropped);
    tx.onerror = tx.onabort = () => reject(tx.error ?? new Error('IndexedDB transaction failed'));
  });
}

/** The page's store; each call opens the database and closes it again (another tab may hold it). */
export function idbTuneStore(factory: IDBFactory = indexedDB): TuneStore {
  const withDb = async <T>(f: (db: IDBDatabase) => Promise<T>): Promise<T> => {
    const db = await openDb(factory);
    try {
      return await f(db);
    } finally {
      db.close();
    }
  };
  return {
    get: (key) => withDb((db) => request(db.transaction(STORE, 'readonly').objectStore(STORE).get(key)) as Promise<TuneEntry | undefined>),
    set: (entry, unusable) => withDb((db) => putDropping(db.transaction(STORE, 'readwrite'), entry, unusable)),
  };
}

/**
 * `store` as Run and Tune use it: where the browser keeps no data for the page (IndexedDB refused: site data blocked,
 * some private windows), a read finds nothing and a write keeps nothing, and `failure` says why; so a run still runs
 * (on the default tiles, saying why) and a search is still shown. (They threw: a run with "tuned tiles" ticked, the
 * default, failed on it, and a whole search was lost at its end.) An entry that is damaged or of another flashring
 * (tuneEntryProblem, as the Node store checks its file's) reads as none, and `damaged` says why (its pins were taken
 * unchecked, and a Run failed on them or ran what it did not say).
 */
export function keptOrSaid(store: TuneStore): TuneStore & { failure?: string; damaged?: string } {
  const said = (e: unknown) => { s.failure = e instanceof Error ? `${e.name}: ${e.message}` : String(e); };
  const s: TuneStore & { failure?: string; damaged?: string } = {
    get: async (key) => {
      const entry: TuneEntry | undefined = await store.get(key).catch((e) => void said(e));
      const why = entry === undefined ? null : tuneEntryProblem(key, entry);
      if (why === null) return entry;
      s.damaged = why;
      return undefined;
    },
    set: (entry, unusable) => store.set(entry, unusable).catch((e) => (said(e), 0)),
  };
  return s;
}

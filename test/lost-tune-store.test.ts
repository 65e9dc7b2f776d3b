/**
 * The tune store (review "nothing lost", items 2a, 7 and 8): a store path that is a device or pipe
 * is refused before a byte is read; writers at the same time (processes, or a process's async
 * writers) keep every entry (a lock file, taken over when its process is gone); an entry damaged or
 * of another format reads as absent, with a note, never a TypeError.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileTuneStore } from '../src/bench/tuneStore.js';
import type { TuneEntry } from '../src/bench/tune.js';
import { InputError } from '../src/errors.js';

const dir = mkdtempSync(join(tmpdir(), 'lost-tune-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const key = (D: number, mask = 'full') => `lavapipe|llvm|cpu|desc|shaders 0|unchecked|no pins|scalar|D${D}|f32|${mask}`;
const entry = (k: string): TuneEntry => ({ key: k, path: 'scalar', tuning: {}, defaultMs: [1, 2], tunedMs: [1, 2], N: 16, heads: 1, checkErr: 1e-7, date: '2026-12-01T00:00:00Z', trials: [] });
const entries = (path: string) => Object.keys(JSON.parse(readFileSync(path, 'utf8')).entries);

describe('the store path', () => {
  it('a device (/dev/zero) is refused before it is read', async () => {
    await expect(fileTuneStore('/dev/zero')).rejects.toThrow(/--store \/dev\/zero is a device, not an ordinary file/);
  });
});

describe('a file that is not a store', () => {
  const msg = (path: string, flag = 'store') => fileTuneStore(path, flag, false).then(() => '', (e) => (e as Error).message);

  it('one the user gave that is something else: says what it is not, asks for another, never to delete it', async () => {
    const pkg = join(dir, 'package.json'), npy = join(dir, 'q.npy');
    writeFileSync(pkg, JSON.stringify({ name: 'x', version: '1.0.0' }));
    writeFileSync(npy, Buffer.from([0x93, 0x4e, 0x55, 0x4d, 0x50, 0x59, 1, 0]));
    expect(await msg(pkg)).toMatch(/^--store .*package\.json is not a flashring tune store \(JSON with version 1 and entries\); give another --store$/);
    expect(await msg(npy, 'tuned')).toMatch(/^--tuned .*q\.npy is not a flashring tune store \(JSON with version 1 and entries\): not JSON \(.*\); give another --tuned$/);
  });

  it('one that looks like a damaged store of flashring\'s, or the default store: deleting it is suggested; a later version\'s store is named as one, never to be deleted', async () => {
    const cut = join(dir, 'cut.json'), old = join(dir, 'old.json');
    writeFileSync(cut, '{\n "version": 1,\n "entries": {\n  "a|b": {');
    writeFileSync(old, JSON.stringify({ version: 2, entries: {} }));
    expect(await msg(cut)).toMatch(/cut\.json is not a flashring tune store .*: not JSON .*; it looks like a damaged store: delete it \(tune writes a new one\) or give another --store$/);
    expect(await msg(old, 'tuned')).toMatch(/^--tuned .*old\.json is a tune store of version 2, written by a newer flashring \(this one reads version 1\): run that flashring, or give another --tuned$/);
    writeFileSync(old, JSON.stringify({ version: 2, entries: [] }));   // not a store of any version: damaged
    expect(await msg(old, 'tuned')).toMatch(/old\.json is not a flashring tune store .*; it looks like a damaged store: delete it and run flashring tune --store .*old\.json, or give another --tuned$/);
    const cache = mkdtempSync(join(dir, 'cache-'));
    vi.stubEnv('XDG_CACHE_HOME', cache);
    try {
      mkdirSync(join(cache, 'flashring'));
      writeFileSync(join(cache, 'flashring', 'tune.json'), 'garbage');
      expect(await msg(join(cache, 'flashring', 'tune.json'))).toMatch(/tune\.json is not a flashring tune store .*: not JSON .*; it looks like a damaged store: delete it/);
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('writers at the same time', () => {
  it('four stores on one file, ten entries each at once: all forty kept, no lock left', async () => {
    const path = join(dir, 'many.json');
    const stores = await Promise.all([0, 1, 2, 3].map(() => fileTuneStore(path)));
    await Promise.all(stores.map(async (s, w) => {
      for (let i = 0; i < 10; i++) await s.set(entry(`${key(16 + w)}#${i}`));
    }));
    expect(entries(path)).toHaveLength(40);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('a lock left by a process that is gone is taken over', async () => {
    const path = join(dir, 'stale.json');
    writeFileSync(`${path}.lock`, `${hostname()}\n${2 ** 22 + 7}\ngone\n`); // above Linux's largest pid: no such process
    const s = await fileTuneStore(path);
    await s.set(entry(key(16)));
    expect(entries(path)).toEqual([key(16)]);
    expect(existsSync(`${path}.lock`)).toBe(false);
  });

  it('a lock a live process holds past the wait: one line naming the lock, the store untouched', async () => {
    const path = join(dir, 'held.json');
    writeFileSync(path, JSON.stringify({ version: 1, entries: {} }));
    writeFileSync(`${path}.lock`, `${hostname()}\n${process.pid}\nheld\n`);
    const s = await fileTuneStore(path, 'store', true, { lockWaitMs: 200 });
    const err = await s.set(entry(key(16))).catch((e) => e);
    expect(err).toBeInstanceOf(InputError);
    expect(err.message).toMatch(new RegExp(`another process \\(${process.pid} on .*\\) has held its lock .*held\\.json\\.lock .*delete`));
    expect(entries(path)).toEqual([]);
    rmSync(`${path}.lock`);
  });
});

describe('dropping entries as it writes', () => {
  it('set drops every other entry its rule names (read at the set, under the lock), never the one it writes, and says how many', async () => {
    const path = join(dir, 'drop.json');
    const seen: string[] = [];
    await (await fileTuneStore(path)).set(entry(key(16)));
    await (await fileTuneStore(path)).set(entry(key(32)));
    const other = await fileTuneStore(path);   // opened before the entries below: set reads the file again
    await (await fileTuneStore(path)).set(entry(key(48)));
    expect(await (await fileTuneStore(path)).set(entry(key(64)))).toBe(0);   // no rule: all kept
    const dropped = await other.set(entry(key(16)), (k) => (seen.push(k), k !== key(32)));
    expect(dropped).toBe(2);
    expect(seen.sort()).toEqual([key(32), key(48), key(64)].sort());
    expect(entries(path).sort()).toEqual([key(16), key(32)].sort());
  });
});

describe('temporaries', () => {
  it('named as the outputs\' are; one a process now gone left is removed by the next set, a live one kept', async () => {
    const sub = mkdtempSync(join(dir, 'temps-')), path = join(sub, 'tune.json');
    const gone = 2 ** 22 + 7; // above Linux's largest pid: no such process
    writeFileSync(join(sub, `.tune.json.${gone}.abc.tmp`), 'left');
    writeFileSync(join(sub, `.tune.json.${process.pid}.abc.tmp`), 'live');
    writeFileSync(join(sub, `.other.json.${gone}.abc.tmp`), 'not the store\'s');
    const s = await fileTuneStore(path);
    await s.set(entry(key(16)));
    expect(readdirSync(sub).sort()).toEqual([`.other.json.${gone}.abc.tmp`, `.tune.json.${process.pid}.abc.tmp`, 'tune.json'].sort());
  });
});

describe('permissions', () => {
  it('a store written over keeps its mode (a 600 store stays 600); a new one takes the umask\'s', async () => {
    const path = join(dir, 'private.json');
    writeFileSync(path, JSON.stringify({ version: 1, entries: {} }));
    chmodSync(path, 0o600);
    await (await fileTuneStore(path)).set(entry(key(16)));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    chmodSync(path, 0o640);
    await (await fileTuneStore(path)).set(entry(key(32)));
    expect(statSync(path).mode & 0o777).toBe(0o640);
    expect(entries(path)).toEqual([key(16), key(32)]);
    const fresh = join(dir, 'fresh.json');
    await (await fileTuneStore(fresh)).set(entry(key(16)));
    const umask = process.umask();
    expect(statSync(fresh).mode & 0o777).toBe(0o666 & ~umask);
  });
});

describe('damaged or old-format entries', () => {
  it('read as absent, each with a note; a good one beside them is read, and a set keeps them', async () => {
    const path = join(dir, 'damaged.json');
    const { defaultMs: _, ...noDefaults } = entry(key(16));
    const bad: Record<string, unknown> = {
      [key(16)]: noDefaults, [key(32)]: 5, [key(48)]: { ...entry(key(48)), date: null }, [key(64)]: { ...entry(key(64)), tuning: { bogusPin: 1 } },
      [key(80)]: { ...entry(key(80)), tuning: { headGroup: -3, portableForward: null } }, [key(96)]: { ...entry(key(96)), key: 'another' }, [key(112)]: { ...entry(key(112)), N: '16' },
      // A time of 0 is no measurement (the table divided by it: a speed-up of Infinity×).
      [key(144)]: { ...entry(key(144)), tunedMs: [0, 2] }, [key(160)]: { ...entry(key(160)), defaultMs: [1, -2] },
    };
    writeFileSync(path, JSON.stringify({ version: 1, entries: { ...bad, [key(128)]: entry(key(128)) } }));
    let err = '';
    const spy = vi.spyOn(process.stderr, 'write').mockImplementation((s: string | Uint8Array) => { err += String(s); return true; });
    try {
      const s = await fileTuneStore(path);
      for (const k of Object.keys(bad)) expect(await s.get(k), k).toBeUndefined();
      expect(await s.get(key(16))).toBeUndefined(); // noted once
      expect(await s.get(key(128))).toEqual(entry(key(128)));
      await s.set(entry(key(16)));
      expect(await (await fileTuneStore(path)).get(key(16))).toEqual(entry(key(16)));
    } finally {
      spy.mockRestore();
    }
    const notes = err.trim().split('\n');
    expect(notes).toHaveLength(Object.keys(bad).length);
    expect(notes[0]).toMatch(/--store .*damaged\.json: the entry for D16 f32 full is damaged or of another flashring \(defaultMs is not \[forward ms, backward ms\], each a time above 0\): treated as absent/);
    expect(entries(path)).toHaveLength(Object.keys(bad).length + 1);
  });
});

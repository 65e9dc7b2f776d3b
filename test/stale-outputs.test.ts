/**
 * The note on outputs an earlier run left in --out (src/cli/outputs.ts noteStaleOutputs): only what the run
 * record lists as an earlier run's; a file of the user's own under such a name is not called one.
 */
import { afterAll, describe, expect, it, vi } from 'vitest';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OutputPlan } from '../src/cli/files.js';
import { OUTPUT_NAMES, RUN_RECORD, noteStaleOutputs, outputFiles } from '../src/cli/outputs.js';

/** A run's description for its record (the command's own: runAbout in src/cli/attention.ts). */
const ABOUT = { inputs: {}, causal: false, window: null, documents: null, scale: 0.125, precisionRequest: 'f32', ring: null };
const RAN = { precision: 'f32' as const, adapter: 'test adapter', robust: false };

const dir = mkdtempSync(join(tmpdir(), 'flashring-stale-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const s = { B: 1, Hq: 1, Hkv: 1, Nq: 2, Nk: 2, D: 8 };
const x = () => new Float32Array(16);
/** A run writing `tensors` into `out` as the command does, and the notes it prints. */
async function run(out: string, tensors: Record<string, Float32Array>): Promise<string[]> {
  const files = outputFiles(out, s, RAN, tensors, ABOUT, new Float32Array(2));
  const plan = await OutputPlan.make([], [{ flag: 'out', path: out, kind: 'dir', names: [...OUTPUT_NAMES, RUN_RECORD], manifest: { name: RUN_RECORD, lists: () => [...OUTPUT_NAMES] } }], { force: true });
  await plan.write(files);
  const notes: string[] = [];
  const e = vi.spyOn(console, 'error').mockImplementation((m) => void notes.push(String(m)));
  try {
    noteStaleOutputs(out, files);
  } finally {
    e.mockRestore();
  }
  return notes;
}

describe('stale outputs in --out', () => {
  it("an earlier run's gradients are named when a forward-only run leaves them", async () => {
    const out = join(dir, 'runs');
    expect(await run(out, { o: x(), dq: x(), dk: x(), dv: x() })).toEqual([]);
    expect(await run(out, { o: x() })).toEqual([`note: ${out} also holds dq.npy, dk.npy, dv.npy from an earlier run; this run did not write them`]);
  });

  it("a file of the user's own under an output's name is not called an earlier run's", async () => {
    const out = join(dir, 'mine');
    mkdirSync(out);
    writeFileSync(join(out, 'reference.npy'), 'x');
    copyFileSync(join(out, 'reference.npy'), join(out, 'dq.npy')); // their reference gradient, saved there before any run
    expect(await run(out, { o: x() })).toEqual([]);
  });
});

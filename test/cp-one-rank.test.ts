/**
 * `flashring attention --cp 1`: one rank on one device. Its timeline (the header, the summary line, the
 * --timeline JSON's mode) says one-device and no ring, never multi-adapter, whichever in-process --cp-mode
 * was asked for (src/cp/launch/ringAttention.ts checkRequest, src/cli/ringArgs.ts checkRingArgs).
 */
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runMain } from './cli-run.js';
import { encodeNpy } from '../src/cli/npy.js';
import { formatTimeline, timelineHeader } from '../src/cli/ringCli.js';
import { ONE_RANK } from '../src/cp/rank/timeline.js';
import { plannedTimeline } from './cases.js';

const dir = mkdtempSync(join(tmpdir(), 'flashring-cp1-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const plain = { causal: false, window: [-1, -1] as [number, number], docs: null };

describe('--cp 1: one rank, one device, no ring', () => {
  it('the header says the mode and that one rank has no ring; the summary says there is no transfer to overlap', async () => {
    const { timeline } = await plannedTimeline(32, 1, 'zigzag', plain);
    expect(timelineHeader(timeline)).toBe(`attention {"B":1,"Hq":1,"Hkv":1,"Nq":32,"Nk":32,"D":8} causal=false, CP R=1 p2p layout=zigzag f32 one-device (${ONE_RANK}) on `);
    expect(timelineHeader({ ...timeline, mode: 'processes', adapters: ['gpu a'] }, true)).toMatch(/ processes \(one rank: no ring, nothing sent; rank r on GPU r\) on gpu a$/);
    const text = formatTimeline(timeline);
    expect(text).toMatch(/\n {2}no transfer to overlap: one rank sends nothing\n/);
    expect(text).not.toMatch(/overlap efficiency|multi-adapter/);
    // all_gather and a2a copy a rank's own K/V even at one rank: that time is said, not hidden behind 'sends nothing'.
    const copies = formatTimeline({ ...timeline, summary: { ...timeline.summary, unhiddenFraction: 0.34 } });
    expect(copies).toMatch(/\n {2}no transfer to overlap: one rank sends nothing; copying its own K\/V took 34\.0% of step time\n/);
    // Two ranks keep their words.
    const two = formatTimeline((await plannedTimeline(32, 2, 'zigzag', plain)).timeline);
    expect(two.split('\n')[0]).toMatch(/ CP R=2 p2p layout=zigzag f32 one-device on $/);
    expect(two).toMatch(/\n {2}overlap efficiency [\d.]+%, unhidden transfer [\d.]+% of step time, \d+ bytes moved\n/);
  });

  it('end to end on this adapter (N = 64, D = 16): one-device in the header and the --timeline JSON, also where --cp-mode multi-adapter was asked', async () => {
    const f = (name: string) => join(dir, name);
    let seed = 7;
    const data = () => Float32Array.from({ length: 2 * 64 * 16 }, () => ((seed = (seed * 48271) % 2147483647) / 2147483647) - 0.5);
    for (const x of ['q', 'k', 'v', 'do']) writeFileSync(f(`${x}.npy`), encodeNpy({ dtype: 'f4', shape: [1, 2, 64, 16], data: data() }));
    const inputs = ['--q', f('q.npy'), '--k', f('k.npy'), '--v', f('v.npy'), '--do', f('do.npy')];
    for (const [name, extra, note] of [['default', [], false], ['ma', ['--cp-mode', 'multi-adapter'], true]] as const) {
      const r = await runMain(['attention', ...inputs, '--out', f(name), '--cp', '1', '--timeline', f(`${name}.json`), ...extra]);
      expect(r.code, r.err).toBe(0);
      const header = r.out.split('\n')[0];
      expect(header).toMatch(/^attention \{"B":1,"Hq":2,"Hkv":2,"Nq":64,"Nk":64,"D":16\} causal=false, CP R=1 p2p layout=zigzag f(32|16) one-device \(one rank: no ring, nothing sent\) on /);
      expect(r.out).not.toMatch(/multi-adapter|overlap efficiency/);
      expect(r.out).toMatch(/\n {2}no transfer to overlap: one rank sends nothing\n/);
      const tl = JSON.parse(readFileSync(f(`${name}.json`), 'utf8'));
      expect([tl.mode, tl.R, tl.summary.bytesMoved]).toEqual(['one-device', 1, 0]);
      expect(r.err.includes('note: --cp 1 is one rank on one device (no ring, nothing sent): it runs as --cp-mode one-device, not multi-adapter')).toBe(note);
    }
  }, 300_000);
});

/**
 * The custom link's flags (--link-gbps, --link-latency-us) are checked in one place
 * (resolveLink), so advise, cp-plan and attention --cp refuse the same mistake in the same line.
 */
import { describe, expect, it } from 'vitest';
import { runMain } from './cli-run.js';

const COMMANDS: Record<string, string[]> = {
  advise: ['advise', '--preset', 'seed-32L-4096h', '--seq-length', '4096', '--gpus', '8'],
  'cp-plan': ['cp-plan', '--context-parallel-size', '2', '--seq-length', '64', '--heads', '2', '--head-dim', '16', '--compute-tflops', '100'],
  attention: ['attention', '--q', 'q.npy', '--k', 'k.npy', '--v', 'v.npy', '--out', 'o', '--cp', '2'],
};

const GBPS = '(Gbit/s per direction: 1 kbit/s to 1 Pbit/s)';
const LAT = '(µs per message: up to 1000 s)';
const CASES: [string, string, string][] = [
  ['0', '1', `--link-gbps must be from 0.000001 to 1000000 ${GBPS}, got '0'`],
  ['-1', '1', `--link-gbps must be from 0.000001 to 1000000 ${GBPS}, got '-1'`],
  ['abc', '1', `--link-gbps must be from 0.000001 to 1000000 ${GBPS}, got 'abc'`],
  ['2e6', '1', `--link-gbps must be from 0.000001 to 1000000 ${GBPS}, got '2e6'`],
  ['100', '-1', `--link-latency-us must be from 0 to 1000000000 ${LAT}, got '-1'`],
  ['100', '2e9', `--link-latency-us must be from 0 to 1000000000 ${LAT}, got '2e9'`],
  ['100', 'abc', `--link-latency-us must be from 0 to 1000000000 ${LAT}, got 'abc'`],
];

describe('--link custom: one wording for a bad --link-gbps or --link-latency-us', () => {
  it('advise, cp-plan and attention --cp print the same line for the same value', async () => {
    for (const [gbps, lat, line] of CASES)
      for (const [name, argv] of Object.entries(COMMANDS)) {
        const r = await runMain([...argv, '--link', 'custom', '--link-gbps', gbps, '--link-latency-us', lat]);
        expect(r.code, `${name} ${gbps} ${lat}`).toBe(2);
        expect(r.err, `${name} ${gbps} ${lat}`).toBe(`flashring ${name}: ${line}`);
      }
  });
});

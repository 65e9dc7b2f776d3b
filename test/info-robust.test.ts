/** `flashring info` names what turned Dawn's shader robustness on: the --robust flag or FLASHRING_ROBUST=1. */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { BIN } from './cli-run.js';

const info = async (args: string[], env: Record<string, string>) => {
  const base = { ...process.env };
  delete base.FLASHRING_ROBUST;
  return (await promisify(execFile)(process.execPath, [BIN, 'info', ...args], { env: { ...base, ...env }, timeout: 120_000 })).stdout;
};

describe('info: what turned shader robustness on', () => {
  it('names --robust for the flag, FLASHRING_ROBUST=1 for the variable', async () => {
    const line = (out: string) => out.split('\n').find((l) => l.startsWith('shader robustness'));
    expect(line(await info(['--robust'], {}))).toBe("shader robustness (Dawn's index clamps): on (--robust)");
    expect(line(await info([], { FLASHRING_ROBUST: '1' }))).toBe("shader robustness (Dawn's index clamps): on (FLASHRING_ROBUST=1)");
    // The flag wins over a variable that says off (main sets FLASHRING_ROBUST=1 for it).
    expect(line(await info(['--robust'], { FLASHRING_ROBUST: '0' }))).toBe("shader robustness (Dawn's index clamps): on (--robust)");
    expect(line(await info([], {}))).toBe("shader robustness (Dawn's index clamps): off (disable_robustness; FLASHRING_ROBUST=1 keeps it)");
  }, 240_000);

  it('in one process, a command without --robust after one with it gets FLASHRING_ROBUST back as it was', async () => {
    const { robustSource, setRobustFlag } = await import('../src/gpu/node.js');
    const saved = process.env.FLASHRING_ROBUST;
    try {
      for (const before of [undefined, '0', '1']) {
        if (before === undefined) delete process.env.FLASHRING_ROBUST;
        else process.env.FLASHRING_ROBUST = before;
        setRobustFlag(true);
        expect([process.env.FLASHRING_ROBUST, robustSource()]).toEqual(['1', '--robust']);
        setRobustFlag(true);   // twice: the variable before the first is what comes back
        setRobustFlag(false);
        expect(process.env.FLASHRING_ROBUST, String(before)).toBe(before);
        expect(robustSource()).toBe(before === '1' ? 'FLASHRING_ROBUST=1' : null);
      }
    } finally {
      setRobustFlag(false);
      if (saved === undefined) delete process.env.FLASHRING_ROBUST;
      else process.env.FLASHRING_ROBUST = saved;
    }
  });
});

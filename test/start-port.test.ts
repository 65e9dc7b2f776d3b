/** `flashring start --port P` with P taken: one line and exit 2 before the self-test and the page build. */
import { createServer } from 'node:net';
import { describe, expect, it } from 'vitest';
import { runMain } from './cli-run.js';

describe('start --port: a taken port', () => {
  it('fails up front, before any adapter or self-test work', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen({ port: 0, host: 'localhost' }, resolve));
    const port = (taken.address() as { port: number }).port;
    try {
      const r = await runMain(['start', '--port', String(port)]);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`flashring start: cannot serve the page on port ${port} (Port ${port} is already in use): give another --port`);
      expect(r.out).toBe(''); // no adapter list, no self-test: nothing ran
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  }, 120_000);
});

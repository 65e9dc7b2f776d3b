/**
 * `flashring start`: a page that does not build is one line (a FlashringError), not Vite's trace
 * (review "nothing lost", item 1). Vite's build is replaced by one that fails as Rolldown does.
 */
import { describe, expect, it, vi } from 'vitest';
import { FlashringError } from '../src/errors.js';

vi.mock('vite', async (original) => ({
  ...(await original<typeof import('vite')>()),
  build: async () => {
    throw Object.assign(new Error('[UNRESOLVED_ENTRY] Cannot resolve entry module index.html.\n    at aggregateBindingErrorsIntoJsError (rolldown.js:1:1)\n    at build (vite.js:2:2)'), { code: 'UNRESOLVED_ENTRY' });
  },
}));

describe('start: a build that fails', () => {
  it('is one line naming the cause and where the sources are', async () => {
    const { buildPage } = await import('../src/cli/info.js');
    const e = await buildPage('/nonexistent/flashring-page').then(() => null, (x: unknown) => x as Error);
    expect(e).toBeInstanceOf(FlashringError);
    expect(e!.message).toMatch(/^the page did not build \(\[UNRESOLVED_ENTRY\] Cannot resolve entry module index\.html\.\); its sources are in \/.+$/);
    expect(e!.message).not.toMatch(/\n/);
  });
});

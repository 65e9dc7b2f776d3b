/**
 * The command in a fresh clone before `npm ci` (README's first steps done out of order): its entry
 * script, copied where no node_modules lies on the way up, says in one line what to run (exit 2),
 * where it printed Node's ERR_MODULE_NOT_FOUND stack trace.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, parse } from 'node:path';
import { promisify } from 'node:util';

const REPO = join(__dirname, '..');
/** What bin/flashring.mjs imports before tsx: the files a clone has without its npm packages. */
const ENTRY = ['bin/flashring.mjs', 'bin/dawn-noise.mjs', 'bin/loaders.mjs', 'bin/raw-loader.mjs', 'src/gpu/dawnNoise.mjs', 'bench/cp-run.mjs', 'bench/mask-run.mjs'];

/** A node_modules folder in `dir` or above it, which Node would resolve tsx from. */
function modulesAbove(dir: string): string | null {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules'))) return join(d, 'node_modules');
    if (d === parse(d).root) return null;
  }
}

describe('flashring in a clone without its npm packages', () => {
  it('says to run npm ci, in one line, exit 2, no stack trace', async () => {
    const clone = mkdtempSync(join(tmpdir(), 'flashring-fresh-'));
    expect(modulesAbove(clone), 'a node_modules above the temporary folder would hold tsx').toBeNull();
    for (const f of ENTRY) {
      mkdirSync(dirname(join(clone, f)), { recursive: true });
      copyFileSync(join(REPO, f), join(clone, f));
    }
    // The command, and the benches' entry scripts (bin/loaders.mjs, one check for all), each naming itself.
    for (const [script, who] of [['bin/flashring.mjs', 'flashring'], ['bench/cp-run.mjs', 'bench/cp-run.mjs'], ['bench/mask-run.mjs', 'bench/mask-run.mjs']]) {
      const r = await promisify(execFile)(process.execPath, [join(clone, script), ...(script.startsWith('bin') ? ['info'] : [])]).then(
        (x) => ({ code: 0, err: x.stderr }),
        (e) => ({ code: e.code as number, err: e.stderr as string }),
      );
      expect(r.code, script).toBe(2);
      expect(r.err.trim().split('\n'), script).toHaveLength(1);
      expect(r.err, script).toMatch(new RegExp(`^${who}: the npm packages are not installed \\(no tsx in .*node_modules\\): run npm ci in `));
      expect(r.err, script).toContain(clone);
    }
  });
});

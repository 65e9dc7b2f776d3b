/**
 * The suite in four projects (`npx vitest run --project unit` runs the fast part):
 *   unit  no GPU, no process, no browser: seconds;
 *   gpu   kernels and rings on a WebGPU device of the file's own (test/gpu.ts: lavapipe on CPUs);
 *   cli   tests that start processes: the flashring command, rank processes, scripts;
 *   page  the built page in headless Chromium.
 * A file's project follows from what it uses (projectOf), so a new file lands in the right one.
 * Timeouts are for a 2-core machine busy with other work (a second copy of the suite, say): a GPU
 * or process test that takes 20 s on a quiet one may take several times that.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

type Project = 'unit' | 'gpu' | 'cli' | 'page';

/** The project of a test file: the browser, then processes, then a device, else unit. */
function projectOf(file: string): Project {
  const src = readFileSync(fileURLToPath(new URL(file, import.meta.url)), 'utf8');
  if (/from 'playwright-core'/.test(src)) return 'page';
  if (/from 'node:child_process'|\/src\/cli\/main\.js'|\/src\/ring\/processRanks\.js'/.test(src)) return 'cli';
  if (/from '\.\/gpu\.js'/.test(src)) return 'gpu';
  return 'unit';
}

const FILES = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
const TIMEOUT_S: Record<Project, number> = { unit: 60, gpu: 600, cli: 600, page: 600 };

export default defineConfig({
  test: {
    // Dawn is a native module: one process per test file (forks), not worker threads.
    pool: 'forks',
    maxWorkers: 2,
    projects: (Object.keys(TIMEOUT_S) as Project[]).map((name) => ({
      extends: true,
      test: {
        name,
        include: FILES.filter((f) => projectOf(f) === name),
        testTimeout: TIMEOUT_S[name] * 1000,
        hookTimeout: TIMEOUT_S[name] * 1000,
      },
    })),
  },
});

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
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

type Project = 'unit' | 'gpu' | 'cli' | 'page';

/** The project of a test file: the browser, then processes, then a device, else unit. */
function projectOf(file: string): Project {
  const src = readFileSync(fileURLToPath(new URL(file, import.meta.url)), 'utf8');
  if (/from 'playwright-core'/.test(src)) return 'page';
  if (/from 'node:child_process'|from '\.\/cli-run\.js'|\/src\/cli\/main\.js'|\/src\/cp\/launch\/processRanks\.js'/.test(src)) return 'cli';
  if (/from '\.\/gpu\.js'/.test(src)) return 'gpu';
  return 'unit';
}

/**
 * Lavapipe compiles each kernel at its first dispatch: most of a run with an empty shader cache.
 * With 128-bit vectors (4 lanes, so subgroups of 4) and without LLVM's optimization passes it
 * compiles the backward 2.7x faster (D=64 f32: 5.2 s against 14.1 s), and the tests' small shapes
 * run as fast. llvmpipe's cache key holds the optimization flag but not the width, so the suite
 * keeps its compiled kernels in a cache of their own, per width and flag (unless
 * MESA_SHADER_CACHE_DIR is set). Either variable set runs the suite otherwise
 * (`LP_NATIVE_VECTOR_WIDTH=256 GALLIVM_PERF= npm test`: what the CLI runs on this CPU).
 */
const WIDTH = process.env.LP_NATIVE_VECTOR_WIDTH ?? '128';
const PERF = process.env.GALLIVM_PERF ?? 'nopt';
const LAVAPIPE_ENV = {
  LP_NATIVE_VECTOR_WIDTH: WIDTH,
  GALLIVM_PERF: PERF,
  MESA_SHADER_CACHE_DIR:
    process.env.MESA_SHADER_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), `flashring-suite-lavapipe-w${WIDTH}-${PERF || 'opt'}`),
};

/**
 * Seconds each long file took in a cold run (empty shader cache, fresh clone, this 2-core machine,
 * 2026-12-02 14:55 UTC). A fresh clone has no timing cache, and vitest's default order (by project,
 * then file size) left the page test's 42 s alone at the end; longest first, the two workers end
 * together. Files not listed (new, or short) run after these, by size as vitest orders them. (The
 * page test's 80: 74 s at 17:10 with its Tune test, 45 s of that the search's pipelines, cold.)
 */
const COLD_SECONDS: Record<string, number> = {
  'backward.test.ts': 73, 'cli.test.ts': 72, 'robust.test.ts': 48, 'ring.test.ts': 45, 'page.test.ts': 80, 'forward.test.ts': 41,
  'cp-bench.test.ts': 36, 'shaders.test.ts': 28, 'fuzz.test.ts': 22, 'heap.test.ts': 15, 'outputs.test.ts': 15,
  'fuzz-readers.test.ts': 15, 'ring-memory.test.ts': 15, 'unrolled.test.ts': 15, 'ring-nomass.test.ts': 15, 'f16-products.test.ts': 15, 'cli-mask.test.ts': 10, 'ring-process.test.ts': 10, 'advise.test.ts': 9, 'mask.test.ts': 8,
};

class LongestFirst extends BaseSequencer {
  async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const base = await super.sort(files);
    const secs = (f: TestSpecification) => COLD_SECONDS[f.moduleId.split('/').pop()!] ?? 0;
    return [...base].sort((a, b) => secs(b) - secs(a));
  }
}

const FILES = readdirSync('test').filter((f) => f.endsWith('.test.ts')).map((f) => `test/${f}`);
const TIMEOUT_S: Record<Project, number> = { unit: 60, gpu: 600, cli: 600, page: 600 };

export default defineConfig({
  test: {
    // Dawn is a native module: one process per test file (forks), not worker threads.
    pool: 'forks',
    sequence: { sequencer: LongestFirst },
    maxWorkers: 2,
    env: LAVAPIPE_ENV,
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

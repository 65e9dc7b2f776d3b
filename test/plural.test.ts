/**
 * Counted nouns in messages (src/plural.ts): '1 point', '3 points', never '1 point(s)'. Every string
 * and template text in src/, web/, bin/ and bench/ is looked at (comments are not), so a new "(s)" is caught; bench/results
 * (past runs' outputs) is not.
 */
import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';
import { counted, plural } from '../src/plural.js';
import { comparisonTable } from '../src/memory/compare.js';
import { iterationTime } from '../src/memory/time/step.js';
import { DEFAULT_PARALLEL, a2aUnsplit, memoryBreakdown } from '../src/memory/model.js';
import { wouldFitLines, type WouldFit } from '../src/memory/adviseForward.js';
import { CLI_WORDS } from '../src/cli/advise.js';
import { resolveLink } from '../src/cp/plan/linkModel.js';

/** The text of every string literal and template piece of a source file. */
function stringsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  if (!/\((?:s|es)\)/.test(text)) return []; // most files: nothing to parse
  const src = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const out: string[] = [];
  const visit = (n: ts.Node): void => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) out.push(n.text);
    n.forEachChild(visit);
  };
  visit(src);
  return out;
}

const sources = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    (e.isDirectory() ? (join(dir, e.name) === join('bench', 'results') ? [] : sources(join(dir, e.name))) : /\.(ts|mjs)$/.test(e.name) ? [join(dir, e.name)] : []));

describe('counted nouns', () => {
  it('singular for one, plural otherwise (an irregular plural given)', () => {
    expect([0, 1, 2, 0.5].map((n) => counted(n, 'point'))).toEqual(['0 points', '1 point', '2 points', '0.5 points']);
    expect([counted(1, 'rank process', 'rank processes'), counted(3, 'rank process', 'rank processes')]).toEqual(['1 rank process', '3 rank processes']);
    expect([plural(1, 'column'), plural(2, 'column')]).toEqual(['column', 'columns']);
  });

  it('no message in src/, web/, bin/ or bench/ writes a plural as "(s)" or "(es)"', () => {
    const found = ['src', 'web', 'bin', 'bench'].flatMap(sources).flatMap((f) => stringsOf(f).filter((s) => /\w\((?:s|es)\)/.test(s)).map((s) => `${f}: ${s}`));
    expect(found).toEqual([]);
  });

  it('as the messages say them: one point, one wrong verdict, one recomputed layer', () => {
    const one = comparisonTable([{ row: { seq_len: 4096 }, totalError: 0.01, activationError: 0.02, verdict: 'says fits, ran out of memory', modelTotalGib: 1, modelActivationGib: 1 } as never]);
    expect(one.split('\n').at(-1)).toBe('1 point: largest total error 1.0%, largest activation error 2.0%, 1 wrong OOM verdict');
    const model = { numLayers: 4, hiddenSize: 1024, numAttentionHeads: 8 };
    const rc = (n: number) => iterationTime(model, { ...DEFAULT_PARALLEL, seqLength: 4096, recompute: 'full', recomputeMethod: 'block', recomputeNumLayers: n }).terms.find((t) => t.name === 'recompute')!.what;
    expect([rc(1), rc(4)]).toEqual(['forward run again in backward (1 layer)', 'forward run again in backward (4 layers)']);
  });

  it("the model's counts of one: a TP rank's 1 K/V group, a stage's 1 layer, 1 micro batch a step, 1 token (once '1 K/V groups', '1 layers', …)", () => {
    // 32 heads, 8 K/V groups over TP 8: one group a TP rank, which CP 2 cannot split.
    expect(a2aUnsplit({ numAttentionHeads: 32, numQueryGroups: 8 }, { tensorParallel: 8, contextParallel: 2 })).toEqual({ n: 1, what: '1 K/V group' });
    expect(a2aUnsplit({ numAttentionHeads: 8 }, { tensorParallel: 8, contextParallel: 2 })).toEqual({ n: 1, what: '1 head' });
    expect(a2aUnsplit({ numAttentionHeads: 32, numQueryGroups: 8 }, { tensorParallel: 2, contextParallel: 8 })).toEqual({ n: 4, what: '4 K/V groups' });
    const model = { numLayers: 2, hiddenSize: 1024, numAttentionHeads: 8 };
    expect(() => memoryBreakdown(model, { ...DEFAULT_PARALLEL, seqLength: 4096, pipelineParallel: 2, recompute: 'full', recomputeMethod: 'block', recomputeNumLayers: 2 }))
      .toThrow(/--recompute-num-layers 2 is more than the 1 layer of a pipeline stage$/);
    expect(() => memoryBreakdown({ ...model, numLayers: 4 }, { ...DEFAULT_PARALLEL, seqLength: 4096, pipelineParallel: 2, virtualStages: 2, numMicrobatches: 1 }))
      .toThrow(/: 1 micro batch a step \(/);
    const none = { tried: [], at: null, layouts: 0, fastest: null, globalBatch: null };
    const w: WouldFit = { hbmGib: null, gpus: { ...none, between: null }, seqLength: none };
    const r = { model, base: { ...DEFAULT_PARALLEL, seqLength: 1 }, gpus: 1, hbmGib: 80, margin: 0.1, gbs: 1, link: resolveLink('nvlink-h200') };
    expect(wouldFitLines(r, { all: 0, fitting: [], smallest: null, untrainable: [], skipped: [] }, w, true, CLI_WORDS).at(-1)).toBe('  sequence: none searched (1 token does not halve)');
  });
});

/**
 * The portable kernels in the form GPUs compile them (unrolled), for test/robust-spirv.test.ts:
 * the forward and the backward at a small head dim, as shipped (loop bounds written as constants by
 * constantBounds) or with each constant loop bound put back through rt() as before, or without
 * the inner loops' helpers restating their indices' bounds (`let tx = tx_ % TX;` as `let tx = tx_;`).
 */
import { attentionSource, attentionValues } from '../src/kernels/source.js';
import { FORWARD_BINDINGS } from '../src/kernels/flashForward.js';
import { BACKWARD_BINDINGS } from '../src/kernels/flashBackward.js';
import { SHADERS } from '../src/kernels/shaders.js';
import { portableTile, portableValues, type TilePlan } from '../src/kernels/tiles.js';

/** shipped; rt: constant loop bounds through rt() again; plain: the inner loops' helpers without their restated bounds. */
export type Form = 'shipped' | 'rt' | 'plain';
export const D = 16;
const types = { precision: 'f32', out: 'f32', grad: 'f32' } as const;

/** Each `X < (BOUND)` that constantBounds wrote back as `X < rt(BOUND)`; the count of them. */
export function throughRt(code: string): [string, number] {
  let n = 0;
  const out = code.replace(/(\w+ < )\(([^()]+)\);/g, (_, head: string, bound: string) => (n++, `${head}rt(${bound});`));
  return [out, n];
}

function plan(kind: 'fwd' | 'bwd'): TilePlan {
  const p = portableTile(kind, [16, 16, undefined], D, 'f32', 16384, 256, 0);
  if ('why' in p) throw new Error(`${p.tile}: ${p.why}`);
  return kind === 'fwd' ? { ...p, prefetch: 0 } : p;
}

/** The kernel's source in the given form and its entry points. */
export function portableSource(kind: 'fwd' | 'bwd', form: Form): { code: string; entries: string[]; moved: number } {
  const p = plan(kind);
  const values = attentionValues(D, p, types, true, portableValues(kind, D, p, types.precision));
  const code = kind === 'fwd'
    ? attentionSource(SHADERS.flashFwd[p.reduce!], values, FORWARD_BINDINGS)
    : attentionSource(SHADERS.flashBwd, values, BACKWARD_BINDINGS);
  const [rt, moved] = throughRt(code);
  const plain = code.replace(/let (\w+) = (\w+_) % \w+;/g, 'let $1 = $2;').replace('(ys % 2u)', 'ys');
  return { code: form === 'rt' ? rt : form === 'plain' ? plain : code, entries: kind === 'fwd' ? ['main'] : ['dkdv', 'dq_main'], moved };
}

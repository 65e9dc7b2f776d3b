/**
 * The specializer: fills `{{NAME}}` placeholders of a WGSL template (array sizes and tile
 * shapes must be compile-time constants, which `override` cannot give for private arrays).
 * Every placeholder must be given a value; an unknown or missing one is an error.
 *
 * It also unrolls `{{#for X < N}} … {{/for}}` (N a number or a value's name, optionally `/ k`,
 * e.g. `D/16`): the body is repeated for X = 0 … N−1 with `{{X}}` replaced by the index. The tensor-core kernels use it to
 * give each 16×16 register block its own variable (q0, q1, …), so that no matrix is indexed
 * through an array at run time.
 *
 * `{{#loop X < N}} … {{/loop}}` is the same, except with `roll` set (CPU adapters, where long
 * unrolled code compiles slowly): then it becomes one WGSL loop, `{{X}}u` and `{{X}}` naming
 * its counter, with the bound through rt() (shaders/common.wgsl) so it is not unrolled again.
 */
export type SpecValues = Record<string, string | number>;

const FOR = /\{\{#(for|loop)\s+([A-Za-z_]\w*)\s*<\s*([A-Za-z_]\w*|\d+)(?:\s*\/\s*(\d+))?\s*\}\}((?:(?!\{\{#(?:for|loop))[\s\S])*?)\{\{\/\1\}\}/;

export function specialize(template: string, values: SpecValues, opts: { roll?: boolean } = {}): string {
  const used = new Set<string>();
  let src = template;
  // Innermost loop first: its body holds no other {{#for}}.
  for (let m = FOR.exec(src); m; m = FOR.exec(src)) {
    const [whole, kind, name, bound, div, body] = m;
    let n: number;
    if (/^\d+$/.test(bound)) n = Number(bound);
    else {
      if (!(bound in values)) throw new Error(`specialize: no value for loop bound {{#for ${name} < ${bound}}}`);
      used.add(bound);
      n = Number(values[bound]);
    }
    if (div) n /= Number(div);
    if (!Number.isInteger(n) || n < 0) throw new Error(`specialize: loop bound ${bound} = ${n} is not a count`);
    if (name in values) throw new Error(`specialize: loop variable ${name} shadows a value`);
    const counter = `${name}_i`;
    const unrolled = kind === 'loop' && opts.roll
      ? `for (var ${counter} = 0u; ${counter} < rt(${n}u); ${counter}++) {${body.replace(new RegExp(`\\{\\{\\s*${name}\\s*\\}\\}u?`, 'g'), counter)}}`
      : Array.from({ length: n }, (_, i) => body.replace(new RegExp(`\\{\\{\\s*${name}\\s*\\}\\}`, 'g'), String(i))).join('');
    src = src.slice(0, m.index) + unrolled + src.slice(m.index + whole.length);
  }
  if (/\{\{[#/]/.test(src)) throw new Error('specialize: unbalanced {{#for}} / {{/for}} or {{#loop}} / {{/loop}}');
  const out = src.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`specialize: no value for {{${name}}}`);
    used.add(name);
    return String(values[name]);
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length) throw new Error(`specialize: values never used: ${unused.join(', ')}`);
  return opts.roll ? out : constantBounds(out);
}

/** A call of rt() (not its definition, not a method or a name ending in rt). */
const RT_CALL = /(?<![\w.]|fn )rt\(/;

/**
 * Unrolled (GPU) code: each `rt(X)` becomes `(X)`, so a loop's bound is the constant itself in the
 * WGSL, not a call. Tint's robustness transform (on in every browser) proves such a loop finite
 * and its counter in range (a ±1 step from a constant against a constant bound) and then adds
 * neither an index clamp on the counter nor an infinite-loop guard; through a call it proves
 * neither (test/robust-spirv.test.ts counts both in the SPIR-V). rt's own definition stays. A call
 * it cannot rewrite (a bound with parentheses inside) is an error, never left as a call.
 */
export function constantBounds(src: string): string {
  const out = src.replace(new RegExp(`${RT_CALL.source}([^()]+)\\)`, 'g'), '($1)');
  const [left] = rtCalls(out);
  if (left !== undefined) throw new Error(`specialize: a loop bound rt(…) with parentheses inside cannot be written as a constant: ${left.trim()}`);
  return out;
}

/** The lines of WGSL code, comments left out, that call rt(). */
export function rtCalls(src: string): string[] {
  return src.split('\n').map((l) => l.replace(/\/\/.*$/, '')).filter((l) => RT_CALL.test(l));
}

/**
 * The specializer: fills `{{NAME}}` placeholders of a WGSL template (array sizes and tile
 * shapes must be compile-time constants, which `override` cannot give for private arrays).
 * Every placeholder must be given a value; an unknown or missing one is an error.
 */
export type SpecValues = Record<string, string | number>;

export function specialize(template: string, values: SpecValues): string {
  const used = new Set<string>();
  const out = template.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (_, name: string) => {
    if (!(name in values)) throw new Error(`specialize: no value for {{${name}}}`);
    used.add(name);
    return String(values[name]);
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length) throw new Error(`specialize: values never used: ${unused.join(', ')}`);
  return out;
}

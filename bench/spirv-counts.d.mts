/** Types of bench/spirv-counts.mjs (see there). */
export interface SpirvCount {
  entries: string[];
  D: number | null;
  kind: 'tensor-core' | 'portable';
  clamps: number;
  guards: number;
  matrixLoads: number;
  matrixStores: number;
  /** Loads and stores Tint checks at run time (stride not a constant). */
  matrixChecked: number;
  modules: number;
}
export function spirvCounts(log: string): SpirvCount[];

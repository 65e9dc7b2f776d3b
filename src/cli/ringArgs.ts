/** The flags of a context-parallel run (`attention --cp R …`), parsed and checked before any GPU work. */
import { InputError } from '../errors.js';
import { LAYOUTS, Layout, validateRing } from '../cp/plan/schedule.js';
import { COMPUTE_TFLOPS, Link, resolveLink } from '../cp/plan/linkModel.js';
import { Scheme, chosenSizesNote, resolveScheme, schemeNames, schemeSizes } from '../cp/schemes/registry.js';
import { AttentionShape } from '../shape.js';
import { numberArg } from './args.js';

/** The ring's flags, checked (the sequence length is checked once the tensors are read). */
export interface RingArgs {
  R: number;
  layout: Layout;
  timeline?: string;
  scheme: Scheme;
  hierarchicalSizes?: string;
  mode: 'one-device' | 'multi-adapter' | 'processes';
  /** --gpu-per-rank (processes): rank r's process sees only GPU r (scripts/only-gpu.sh). */
  gpuPerRank?: boolean;
  /** --pipelined (one-device): steps submitted without waiting for each (RingOptions.pipelined). */
  pipelined?: boolean;
  link?: Link;
  computeTflops?: number;
}

/** The ring's flags as `attention` declares them. */
export const RING_OPTIONS = {
  cp: { type: 'string' }, layout: { type: 'string' }, timeline: { type: 'string' }, 'cp-comm-type': { type: 'string' },
  'hierarchical-context-parallel-sizes': { type: 'string' }, 'cp-mode': { type: 'string' }, 'gpu-per-rank': { type: 'boolean' }, pipelined: { type: 'boolean' }, link: { type: 'string' },
  'link-gbps': { type: 'string' }, 'link-latency-us': { type: 'string' }, 'compute-tflops': { type: 'string' },
} as const;
type RingValues = { [K in Exclude<keyof typeof RING_OPTIONS, 'gpu-per-rank' | 'pipelined'>]?: string } & { 'gpu-per-rank'?: boolean; pipelined?: boolean };

/** --compute-tflops (attention --cp, cp-plan): the kernels' rate the link model's prediction takes, in TFLOP/s; undefined where not given. */
export const computeTflopsArg = (raw: string | undefined): number | undefined =>
  raw === undefined ? undefined : numberArg('compute-tflops', raw, { min: COMPUTE_TFLOPS.min, max: COMPUTE_TFLOPS.max, what: COMPUTE_TFLOPS.what });

/** Most ranks a ring may have: each rank is a device, acquired one by one. */
export const MAX_RANKS = 64;

/** `--cp` and the flags that go with it: null without --cp (and then the others are errors). */
export function parseRingArgs(values: RingValues): RingArgs | null {
  if (values.cp === undefined) {
    for (const f of Object.keys(RING_OPTIONS) as (keyof RingValues)[])
      if (values[f] !== undefined) throw new InputError(`--${f} only applies to a context-parallel run: add --cp R (e.g. --cp 2)`);
    return null;
  }
  const R = numberArg('cp', values.cp, { integer: true, min: 1, max: MAX_RANKS, what: `an integer from 1 to ${MAX_RANKS} (ranks of the ring)` });
  const layout = (values.layout ?? 'zigzag') as Layout;
  if (!LAYOUTS.includes(layout)) throw new InputError(`--layout must be one of ${LAYOUTS.join(', ')}, got '${values.layout}'`);
  const scheme = (values['cp-comm-type'] ?? 'p2p') as Scheme;
  if (!schemeNames().includes(scheme)) throw new InputError(`--cp-comm-type must be one of ${schemeNames().join(', ')}, got '${scheme}'`);
  const mode = (values['cp-mode'] ?? 'one-device') as RingArgs['mode'];
  if (mode !== 'one-device' && mode !== 'multi-adapter' && mode !== 'processes') throw new InputError(`--cp-mode must be one-device, multi-adapter or processes, got '${mode}'`);
  if (values['gpu-per-rank'] && mode !== 'processes') throw new InputError('--gpu-per-rank needs --cp-mode processes');
  if (values.pipelined && mode !== 'one-device') throw new InputError('--pipelined needs --cp-mode one-device (the ranks on one GPU)');
  const gbps = values['link-gbps'], lat = values['link-latency-us'];
  const computeTflops = computeTflopsArg(values['compute-tflops']);
  if (values.link === undefined && (gbps !== undefined || lat !== undefined)) throw new InputError('--link-gbps and --link-latency-us go with --link custom (both of them)');
  const link = values.link === undefined ? undefined : resolveLink(values.link, gbps, lat);
  if (computeTflops !== undefined && !link) throw new InputError('--compute-tflops only changes the link model\'s prediction: add --link');
  return {
    R, layout, scheme, mode, ...(values['gpu-per-rank'] ? { gpuPerRank: true } : {}), ...(values.pipelined ? { pipelined: true } : {}), ...(values.timeline !== undefined ? { timeline: values.timeline } : {}),
    ...(values['hierarchical-context-parallel-sizes'] !== undefined ? { hierarchicalSizes: values['hierarchical-context-parallel-sizes'] } : {}),
    ...(link ? { link } : {}), ...(computeTflops !== undefined ? { computeTflops } : {}),
  };
}

/**
 * What the ring needs of the shape, checked before any device is acquired; a2a+p2p without sizes
 * takes the largest a2a group below R that divides the heads (as cp-plan and the page), said on
 * stderr; one rank asked for as multi-adapter runs on one device, as one-device (the mode the
 * timeline, its room check and the header then say), with a note. Returns the flags as the run takes them.
 */
export function checkRingArgs(ring: RingArgs, s: AttentionShape): RingArgs {
  if (s.Nq !== s.Nk) throw new InputError(`--cp splits one sequence: Q has ${s.Nq} tokens but K/V have ${s.Nk}; they must be equal`);
  if (ring.R > s.Nq) throw new InputError(`--cp ${ring.R} is more ranks than the ${s.Nq} tokens of the sequence: every rank needs at least one token`);
  validateRing(s.Nq, ring.R, ring.layout);
  const { sizes, chosen } = schemeSizes(ring.scheme, ring.R, s, ring.hierarchicalSizes);
  if (chosen) console.error(`note: ${chosenSizesNote(ring.scheme, sizes!, ring.R)}`);
  resolveScheme(ring.scheme, ring.R, s, sizes); // a2a heads, a2a+p2p sizes: before any device
  const oneDevice = ring.R === 1 && ring.mode === 'multi-adapter';
  if (oneDevice) console.error('note: --cp 1 is one rank on one device (no ring, nothing sent): it runs as --cp-mode one-device, not multi-adapter');
  return { ...ring, ...(oneDevice ? { mode: 'one-device' as const } : {}), ...(sizes !== undefined ? { hierarchicalSizes: sizes } : {}) };
}


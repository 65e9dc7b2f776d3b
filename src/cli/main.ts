/**
 * The `flashring` command. Subcommands: info, selftest, attention, memory, advise, cp-plan, replay, bench, tune, notes, start.
 * Errors flashring raises on purpose print as one line (`flashring: …`) with exit code 2.
 */
import { FlashringError, InputError, InternalError, NoAdapterError } from '../errors.js';

/** `shaders: false`: the command runs no GPU work, so --robust changes nothing there (said in a note). */
type Command = { summary: string; run: (argv: string[]) => Promise<number>; shaders?: false };

export const COMMANDS: Record<string, Command> = {
  info: { summary: 'list WebGPU adapters with their features and key limits', run: async (a) => (await import('./info.js')).info(a) },
  selftest: { summary: 'a tiny forward+backward on the GPU, checked against the float64 reference', run: async (a) => (await import('./info.js')).selftest(a) },
  attention: { summary: 'FlashAttention on .npy tensors (forward, --do for backward, --cp for the ring)', run: async (a) => (await import('./attention.js')).attentionCommand(a) },
  memory: { summary: 'per-GPU training memory (Korthikanti et al. model, Megatron-LM flags); --sweep for the plot', run: async (a) => (await import('./memory.js')).memoryCommand(a), shaders: false },
  advise: { summary: 'the fastest TP × CP × PP × recompute layouts that fit, by predicted step time', run: async (a) => (await import('./advise.js')).adviseCommand(a), shaders: false },
  'cp-plan': { summary: 'predicted context-parallel step time, comm fraction and TFLOP/s per scheme for a link', run: async (a) => (await import('./cpPlan.js')).cpPlanCommand(a) },
  replay: { summary: 'Megatron-LM training logs (or activation_memory.csv) → measured points', run: async (a) => (await import('./memory.js')).replayCommand(a), shaders: false },
  bench: { summary: 'headless benchmark: kernel, ring and memory sweeps (JSON/CSV results, ring timelines)', run: async (a) => (await import('../bench/run.js')).benchCommand(a) },
  tune: { summary: 'autotune: time the tile candidates on this adapter, keep the fastest that passes (a JSON store)', run: async (a) => (await import('./tune.js')).tuneCommand(a) },
  notes: { summary: 'writes notes_attention.md from the committed results and the memory model (--out FILE)', run: async (a) => (await import('./notes.js')).notesCommand(a), shaders: false },
  start: { summary: 'the main job: adapters, the GPU self-test, then the page served on localhost', run: async (a) => (await import('./info.js')).start(a) },
};

export function usage(): string {
  const w = Math.max(...Object.keys(COMMANDS).map((k) => k.length));
  return [
    'usage: flashring <command> [options] [--robust]   (flashring help <command>, or <command> --help, for its options;',
    '       --robust, after the command or before it, keeps Dawn\'s shader robustness transform on, as browsers run it)',
    '',
    ...Object.entries(COMMANDS).map(([k, c]) => `  ${k.padEnd(w)}  ${c.summary}`),
  ].join('\n');
}

/** The package's version (package.json beside src/), for --version. */
async function version(): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return JSON.parse(await readFile(new URL('../../package.json', import.meta.url), 'utf8')).version;
}

export async function main(argv: string[]): Promise<number> {
  // `flashring help CMD` (and `flashring --help CMD`) is `flashring CMD --help`.
  const HELP_WORDS = ['help', '--help', '-h'];
  if (HELP_WORDS.includes(argv[0]) && argv.length > 1) return HELP_WORDS.includes(argv[1]) ? main([argv[0]]) : main([argv[1], '--help', ...argv.slice(2)]);
  // `flashring --robust CMD …` is `flashring CMD … --robust`: the switch is every command's, wherever it is put.
  // A word after it that is no command is named as such ("unknown command 'frobnicate'"), not '--robust'.
  if (argv[0] === '--robust' && argv.length > 1 && !argv[1].startsWith('-')) return main([...argv.slice(1), '--robust']);
  const [cmd, ...rest] = argv;
  if (cmd === '--version' || cmd === '-V') {
    if (rest.length) {
      console.error(`flashring: ${cmd} takes nothing after it, got '${rest[0]}' (flashring --version alone prints the version)`);
      return 2;
    }
    console.log(`flashring ${await version()}`);
    return 0;
  }
  // Asked for (--help): the usage on stdout, exit 0; no command at all is a mistake: the usage on stderr, exit 2.
  if (cmd === '--help' || cmd === '-h' || cmd === 'help') {
    console.log(usage());
    return 0;
  }
  if (!cmd) {
    console.error(usage());
    return 2;
  }
  const c = COMMANDS[cmd];
  if (!c) {
    console.error(`flashring: unknown command '${cmd}' (one of ${Object.keys(COMMANDS).join(', ')}; flashring help describes them)`);
    return 2;
  }
  // --robust (any command): keep Dawn's robustness transform, as browsers run the shaders (FLASHRING_ROBUST=1).
  (await import('../gpu/node.js')).setRobustFlag(rest.includes('--robust'));
  try {
    // --robust=1 would reach the command's parser as an option it does not know: say it is a switch.
    const valued = rest.find((a) => a.startsWith('--robust='));
    if (valued) throw new InputError(`option '--robust' does not take an argument: give --robust alone (or FLASHRING_ROBUST=1), got '${valued}'`);
    // Kernel pins (FLASHRING_PATH, FLASHRING_PORTABLE_*, …): read from the environment here only, once.
    const { setProcessTuning, tuningFromEnv } = await import('../kernels/tuning.js');
    setProcessTuning(tuningFromEnv(process.env));
    if (c.shaders === false && rest.includes('--robust')) console.error(`note: --robust has no effect on flashring ${cmd} (it runs no shaders)`);
    return await c.run(rest.filter((a) => a !== '--robust'));
  } catch (e) {
    const line = await userMistake(e);
    if (line === null) throw e;
    console.error(mistakeLine(cmd, line));
    return 2;
  } finally {
    (await import('../gpu/node.js')).releaseNodeGPU();
  }
}

/**
 * An ordinary mistake as the command prints it, 'flashring tune: D=7, …': an error's own 'tune: ' (the library's errors
 * name what refused them, for the page and other callers) dropped where the command's prefix says it already (it read
 * 'flashring tune: tune: D=7, …'; notes' 'notes: ' likewise).
 */
export function mistakeLine(cmd: string, line: string): string {
  return `flashring ${cmd}: ${line.startsWith(`${cmd}: `) ? line.slice(cmd.length + 2) : line}`;
}

/**
 * The one line an ordinary mistake prints, or null for a bug (which keeps its stack trace):
 * flashring's own errors, command-line parsing errors, and file-system errors on a named path.
 */
export async function userMistake(e: unknown): Promise<string | null> {
  if (e instanceof NoAdapterError) {
    const { adapterMismatch } = await import('../gpu/node.js');
    return (await adapterMismatch().catch(() => null)) ?? e.message;
  }
  if (e instanceof InternalError) return null; // a bug: its stack trace, to report
  if (e instanceof FlashringError) return e.message;
  const err = e as NodeJS.ErrnoException;
  if (typeof err?.code === 'string' && err.code.startsWith('ERR_PARSE_ARGS')) return `${err.message.split('\n')[0]} (see --help)`;
  if (typeof err?.code === 'string' && typeof err.path === 'string' && typeof err.syscall === 'string')
    return `cannot ${err.syscall} ${err.path}: ${err.code}`;
  return null;
}

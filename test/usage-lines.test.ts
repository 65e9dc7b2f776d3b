/**
 * Every flag a command accepts is in its --help: in the usage line where that line lists the flags
 * (no `[options]`), else in the options below it; and in its row of docs/cli.md, which README calls
 * the place that has every command's options. A command's flags are what it gives parseCommand
 * (the one place each command declares them), recorded here as each command's --help runs.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { runMain } from './cli-run.js';

const declared = new Map<string, string[]>();
vi.mock('../src/cli/args.js', async (importOriginal) => {
  const m = await importOriginal<typeof import('../src/cli/args.js')>();
  const parseCommand: typeof m.parseCommand = (command, argv, options, ...rest) => {
    declared.set(command, Object.keys(options));
    return m.parseCommand(command, argv, options, ...rest);
  };
  return { ...m, parseCommand };
});
const { COMMANDS } = await import('../src/cli/main.js');

/**
 * Flags a command parses but does not take, said elsewhere: memory's table of model flags holds
 * replay's --compare (memory and advise parse it and refuse it, naming replay).
 */
const NOT_TAKEN: Record<string, string[]> = { memory: ['compare'], advise: ['compare'] };

/** The usage line(s): `usage: flashring CMD …` and any `flashring CMD …` line right after it. */
function usageLines(help: string, cmd: string): string {
  const lines = help.split('\n');
  const start = lines.findIndex((l) => l.startsWith(`usage: flashring ${cmd}`));
  let end = start + 1;
  while (end < lines.length && lines[end].trimStart().startsWith(`flashring ${cmd}`)) end++;
  return lines.slice(start, end).join('\n');
}

const named = (text: string, flag: string) => new RegExp(`--${flag}(?![\\w-])`).test(text);

/** Each command's --help, which also records the flags it declares. */
async function helps(): Promise<Map<string, string>> {
  const help = new Map<string, string>();
  for (const cmd of Object.keys(COMMANDS)) {
    const r = await runMain([cmd, '--help']);
    expect(r.code, cmd).toBe(0);
    help.set(cmd, r.out);
  }
  return help;
}

/** A command's rows of docs/cli.md's table: `| \`CMD …` (memory has two: one configuration, the sweep). */
function docRows(doc: string, cmd: string): string {
  return doc.split('\n').filter((l) => l.startsWith(`| \`${cmd} `) || l.startsWith(`| \`${cmd}\``)).join('\n');
}

describe('usage lines', () => {
  it("every command's --help names each flag it accepts (in the usage line where that line lists them)", async () => {
    const help = await helps();
    for (const [cmd, text] of help) {
      const usage = usageLines(text, cmd);
      expect(usage, cmd).not.toBe('');
      // "<model flags of flashring memory>": memory's help names those.
      const elsewhere = /<model flags of flashring memory/.test(usage) ? help.get('memory')! : '';
      const where = /\[options\]/.test(usage) ? text : usage;
      const flags = (declared.get(cmd) ?? []).filter((f) => f !== 'help' && !NOT_TAKEN[cmd]?.includes(f));
      expect(flags.length, cmd).toBeGreaterThan(0);
      expect(flags.filter((f) => !named(where, f) && !named(elsewhere, f)), `${cmd}: ${usage}`).toEqual([]);
    }
  }, 120_000);

  it("every command's row in docs/cli.md names each flag it accepts (advise's and replay's model flags: memory's rows)", async () => {
    await helps();
    const doc = readFileSync(join(__dirname, '..', 'docs', 'cli.md'), 'utf8');
    for (const cmd of Object.keys(COMMANDS)) {
      const row = docRows(doc, cmd);
      expect(row, cmd).not.toBe('');
      const elsewhere = /<model flags/.test(row) ? docRows(doc, 'memory') : '';
      const flags = (declared.get(cmd) ?? []).filter((f) => f !== 'help' && !NOT_TAKEN[cmd]?.includes(f));
      expect(flags.filter((f) => !named(row, f) && !named(elsewhere, f)), `docs/cli.md, ${cmd}`).toEqual([]);
    }
  }, 120_000);
});

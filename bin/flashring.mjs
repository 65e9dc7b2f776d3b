#!/usr/bin/env node
// The `flashring` command: runs src/cli/main.ts through tsx, with WGSL `?raw` imports.
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./raw-loader.mjs', import.meta.url);
const { main } = await import('../src/cli/main.ts');
process.exitCode = await main(process.argv.slice(2));

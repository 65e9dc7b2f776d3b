// The loaders every entry script registers before any of the project's TypeScript loads: tsx, and
// bin/raw-loader.mjs for WGSL `?raw` imports. What they need comes first: Node's module.register
// (Node 20.6) and the npm packages (tsx). Without them, one line saying what to do and exit code 2,
// as any mistake of setup: a fresh clone run before `npm ci` printed Node's stack trace.
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = dirname(dirname(fileURLToPath(import.meta.url)));

function stop(who, message) {
  process.stderr.write(`${who}: ${message}\n`);
  process.exit(2);
}

/** Registers tsx and the `?raw` loader; `who` names the script in the one line said where they cannot be. */
export async function registerLoaders(who) {
  const { register } = await import('node:module');
  if (typeof register !== 'function') stop(who, `Node 20.6 or later is needed (package.json engines; it registers its loaders with module.register); this is Node ${process.versions.node}`);
  let registerTsx;
  try {
    registerTsx = (await import('tsx/esm/api')).register;
  } catch (e) {
    if (e?.code !== 'ERR_MODULE_NOT_FOUND' || !/'tsx'/.test(e.message)) throw e;
    stop(who, `the npm packages are not installed (no tsx in ${join(ROOT, 'node_modules')}): run npm ci in ${ROOT} (npm start and npm test run it first)`);
  }
  registerTsx();
  register('./raw-loader.mjs', import.meta.url);
}

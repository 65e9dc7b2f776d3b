/**
 * scripts/setup-system.sh decides where Mesa >= 25 comes from by the distribution: Debian
 * bookworm from bookworm-backports, Ubuntu from its own archive when that offers Mesa >= 25, and
 * otherwise a stop with what to install (never a Debian source on Ubuntu). Run in plan mode with
 * a faked /etc/os-release and apt candidate: nothing on this machine is changed.
 */
import { describe, expect, it } from 'vitest';
import { execFile } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const SCRIPT = join(__dirname, '..', 'scripts', 'setup-system.sh');
const dir = mkdtempSync(join(tmpdir(), 'flashring-setup-'));

async function plan(osRelease: string, candidate: string): Promise<{ code: number; out: string; err: string }> {
  const f = join(dir, `os-release-${Math.random().toString(36).slice(2)}`);
  writeFileSync(f, osRelease);
  const env = { ...process.env, FLASHRING_OS_RELEASE: f, FLASHRING_SETUP_PLAN: '1', FLASHRING_MESA_CANDIDATE: candidate, FLASHRING_SKIP_SYSTEM_SETUP: '0' };
  return promisify(execFile)('bash', [SCRIPT], { env }).then(
    (r) => ({ code: 0, out: r.stdout, err: r.stderr }),
    (e) => ({ code: e.code as number, out: e.stdout as string, err: e.stderr as string }),
  );
}

const UBUNTU = 'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nID=ubuntu\nID_LIKE=debian\nVERSION_CODENAME=noble\n';

describe('setup-system.sh picks the source of Mesa by distribution', () => {
  it('Debian bookworm: bookworm-backports', async () => {
    const r = await plan('ID=debian\nVERSION_CODENAME=bookworm\n', '22.3.6-1+deb12u1');
    expect(r).toMatchObject({ code: 0, out: 'mesa: backports\n' });
  });

  it("Ubuntu with Mesa >= 25 in its archive: Ubuntu's own packages", async () => {
    const r = await plan(UBUNTU, '25.0.7-0ubuntu0.24.04.1');
    expect(r).toMatchObject({ code: 0, out: 'mesa: archive\n' });
  });

  it('Ubuntu with older Mesa: refuses, says what to install, adds no Debian source', async () => {
    const r = await plan(UBUNTU, '24.2.8-1ubuntu1~24.04.1');
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/Ubuntu 24\.04\.1 LTS offers mesa-vulkan-drivers 24\.2\.8.*needs Mesa lavapipe >= 25/);
    expect(r.err).toMatch(/Install Mesa >= 25 yourself/);
  });

  it('a non-Debian system is left alone', async () => {
    const r = await plan('ID=fedora\nVERSION_ID=41\n', '');
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/not Debian or Ubuntu \(fedora\)/);
  });
});

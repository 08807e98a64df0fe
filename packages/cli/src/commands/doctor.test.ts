import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
let dir: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-doctor-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  process.env.RINGFENCE_POLICY_DIR = join(dir, 'policy');
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('ringfence doctor', () => {
  it('fails with exit 1 and a fix when DOCKER_HOST names a socket nobody listens on', async () => {
    process.env.DOCKER_HOST = `unix://${join(dir, 'no-engine.sock')}`;
    const { stdout } = await runCommand(['doctor', '--json'], { root });
    const report = JSON.parse(stdout) as {
      ok: boolean;
      checks: { id: string; status: string; fix?: string }[];
    };
    expect(report.ok).toBe(false);
    expect(report.checks.find((c) => c.id === 'engine')).toMatchObject({ status: 'fail' });
    expect(report.checks.find((c) => c.id === 'engine')?.fix).toMatch(/ensure-engine|DOCKER_HOST/);
    expect(process.exitCode).toBe(1);
  });

  it('prints one line per check in text mode', async () => {
    process.env.DOCKER_HOST = `unix://${join(dir, 'no-engine.sock')}`;
    const { stdout } = await runCommand(['doctor'], { root });
    expect(stdout).toMatch(/^ok\s+Node\.js\s+v\d+/m);
    expect(stdout).toMatch(/^FAIL\s+Container engine/m);
    expect(stdout).toMatch(/fix: /);
    expect(stdout).toContain('A required check failed');
  });
});

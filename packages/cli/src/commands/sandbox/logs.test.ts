import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

// The reading of a real sandbox's log is test/e2e/sandbox-lifecycle.test.ts; here, what the
// command refuses before any engine answers.
const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-sandbox-logs-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  process.env.DOCKER_HOST = `unix://${join(dir, 'no-engine.sock')}`;
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('ringfence sandbox logs', () => {
  it('needs a name and a --tail of at least one line', async () => {
    expect((await runCommand(['sandbox', 'logs'], { root })).error?.message).toMatch(
      /Missing 1 required arg/,
    );
    expect((await runCommand(['sandbox', 'logs', 'box', '--tail', '0'], { root })).error?.message).toMatch(
      /greater than or equal to 1/,
    );
  });

  it('says how to get an engine when none answers', async () => {
    const { error } = await runCommand(['sandbox', 'logs', 'box'], { root });
    expect(error?.message).toMatch(
      /No container engine answers at unix:\/\/.*no-engine\.sock.*ensure-engine/,
    );
    expect(process.exitCode).toBe(1);
  });
});

import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { runCommand } from '@oclif/test';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
const VALUE = 'ghp_CliSecretValue0123456789abcdefABCDEF';
let dir: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-secret-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  process.env.RINGFENCE_CREDENTIALS = 'file';
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  vi.restoreAllMocks();
  await rm(dir, { recursive: true, force: true });
});

/** Runs a command with `text` on a piped stdin. */
async function withStdin(text: string, argv: string[]) {
  const stdin = Readable.from([Buffer.from(text)]) as unknown as NodeJS.ReadStream;
  const original = Object.getOwnPropertyDescriptor(process, 'stdin')!;
  Object.defineProperty(process, 'stdin', { value: stdin, configurable: true });
  try {
    return await runCommand(argv, { root });
  } finally {
    Object.defineProperty(process, 'stdin', original);
  }
}

describe('ringfence secret', () => {
  it('set reads the value from stdin; ls shows names, classes, bindings and the backend, never the value', async () => {
    const set = await withStdin(`${VALUE}\n`, [
      'secret',
      'set',
      'gh',
      '--class',
      'github',
      '--bind',
      'github,ci',
    ]);
    expect(set.error).toBeUndefined();
    expect(set.stdout).toMatch(/Stored gh \(class github\) in .*credential-values\.json/);
    expect(set.stdout).toContain('RINGFENCE_CREDENTIALS=file');
    const ls = await runCommand(['secret', 'ls'], { root });
    expect(ls.stdout).toMatch(/gh {2}class=github {2}bound to github, ci {2}in encrypted file/);
    const json = await runCommand(['secret', 'ls', '--json'], { root });
    expect(JSON.parse(json.stdout)).toMatchObject({
      credentials: [{ name: 'gh', class: 'github', bound_to: ['github', 'ci'], backend: 'encrypted-file' }],
      backend: { kind: 'encrypted-file' },
    });
    const unbind = await runCommand(['secret', 'unbind', 'gh', '--server', 'ci'], { root });
    expect(unbind.stdout).toContain('gh is bound to: github.');
    for (const run of [set, ls, json, unbind]) expect(run.stdout + run.stderr).not.toContain(VALUE);
    for (const file of await readdir(join(dir, 'home')))
      expect(await readFile(join(dir, 'home', file), 'utf8')).not.toContain(VALUE);
    const removed = await runCommand(['secret', 'rm', 'gh'], { root });
    expect(removed.stdout).toContain('Removed credential gh.');
    expect((await runCommand(['secret', 'ls', '--json'], { root })).stdout).toContain('"credentials": []');
  });

  it('refuses a value on the command line without repeating it, storing nothing', async () => {
    const run = await withStdin('', ['secret', 'set', 'gh', '--class', 'generic', 'hunter2-in-argv']);
    expect(run.error?.message).toMatch(/takes the name only.*not shown.*Nothing was stored/);
    expect(run.stdout + run.stderr + (run.error?.message ?? '')).not.toContain('hunter2-in-argv');
    expect((await runCommand(['secret', 'ls', '--json'], { root })).stdout).toContain('"credentials": []');
  });

  it('refuses an empty value and an unknown class', async () => {
    expect((await withStdin('\n', ['secret', 'set', 'gh', '--class', 'generic'])).error?.message).toMatch(
      /empty/,
    );
    expect((await withStdin('v', ['secret', 'set', 'gh', '--class', 'nope'])).error?.message).toMatch(
      /--class "nope" is not one of/,
    );
  });
});

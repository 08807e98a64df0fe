import { fileURLToPath } from 'node:url';
import { Config } from '@oclif/core';
import { beforeAll, describe, expect, it } from 'vitest';
import McpServe from './commands/mcp/serve.js';
import { parseServeFlags } from './lib/serve-flags.js';
import { fastServeFlags } from './serve-main.js';

/** The flags exactly as the oclif command's own `this.parse` gives them. */
class ParseOnly extends McpServe {
  override async run(): Promise<never> {
    throw Object.assign(new Error('parsed'), { flags: (await this.parse(McpServe)).flags });
  }
}

let config: Config;
beforeAll(async () => {
  config = await Config.load({ root: fileURLToPath(new URL('..', import.meta.url)) });
});

async function oclifParse(argv: string[]): Promise<{ flags: unknown } | { refused: string }> {
  try {
    await new ParseOnly(argv, config).run();
  } catch (error) {
    const e = error as Error & { flags?: unknown };
    if (e.message === 'parsed') return { flags: e.flags };
    return { refused: e.message };
  }
  throw new Error('unreachable');
}

describe('the fast path of `mcp serve` parses as the oclif command does', () => {
  it.each([
    [[]],
    [['--only', 'docs']],
    [['--only=docs', '--session', 'ab-1']],
    [['--http', '127.0.0.1:8765', '--insecure-listen']],
    [['--metrics', '9464']],
    [['--http', '127.0.0.1:8765', '--metrics', '127.0.0.1:9464']],
    [['--allow-mount', '/data', '--allow-mount', '/src:rw']],
    [['--session-idle', '5', '--max-sessions', '3']],
    [['--session', 'Not_A_Session']],
    [['--no-such-flag']],
    [['--max-sessions', '0']],
    [['--session-idle', 'soon']],
    [['--http']],
    [['an-argument']],
    [['--help']],
    [['--only', 'a', '--only', 'b']],
  ])('%j', async (argv) => {
    const oclif = await oclifParse(argv);
    const fast = await fastServeFlags(argv);
    if ('refused' in oclif) {
      // oclif refuses it: the fast path must leave it to oclif, which says why.
      expect(fast).toBeUndefined();
      return;
    }
    expect(fast).toEqual(oclif.flags);
  });

  it('refuses a --session that cannot name containers in the one parse both paths share, saying what to give', async () => {
    for (const session of ['Not_A_Session', '-lead', 'a'.repeat(33), 'a b']) {
      await expect(parseServeFlags(['--session', session])).rejects.toMatchObject({
        oclif: { exit: 2 },
        message: expect.stringMatching(
          /--session[\s\S]*1-32 lower-case letters, digits or "-".*--session my-client-1, or leave the flag out/,
        ),
      });
      const oclif = await oclifParse(['--session', session]);
      expect(oclif).toEqual({ refused: expect.stringMatching(/1-32 lower-case letters/) });
    }
    expect((await parseServeFlags(['--session', 'ab-1'])).flags.session).toBe('ab-1');
  });

  it('leaves the command line to oclif when DEBUG asks for its debug output', async () => {
    const saved = process.env.DEBUG;
    process.env.DEBUG = '*';
    try {
      expect(await fastServeFlags([])).toBeUndefined();
    } finally {
      if (saved === undefined) delete process.env.DEBUG;
      else process.env.DEBUG = saved;
    }
  });
});

describe("bin/run.js's early schema worker", () => {
  it('is started with the pool’s own limits, or the pool would stop it and start its own', async () => {
    const { readFile } = await import('node:fs/promises');
    const { SCHEMA_WORKER_LIMITS } = await import('@ringfence/gateway/schema');
    const runJs = await readFile(new URL('../bin/run.js', import.meta.url), 'utf8');
    const { maxOldGenerationSizeMb, stackSizeMb } = SCHEMA_WORKER_LIMITS;
    expect(runJs).toContain(
      `resourceLimits: { maxOldGenerationSizeMb: ${maxOldGenerationSizeMb}, stackSizeMb: ${stackSizeMb} }`,
    );
  });
});

import { describe, expect, it } from 'vitest';
import { parseServeFlags } from './serve-flags.js';

describe('mcp serve --sandbox and --sandbox-persistent', () => {
  it('take a sandbox name and a switch', async () => {
    const { flags } = await parseServeFlags([
      '--sandbox',
      'work-1',
      '--sandbox-tools',
      '--sandbox-persistent',
    ]);
    expect(flags).toMatchObject({ sandbox: 'work-1', 'sandbox-tools': true, 'sandbox-persistent': true });
    expect((await parseServeFlags([])).flags['sandbox-persistent']).toBeUndefined();
  });

  it('refuse a --sandbox that is not a sandbox name (it is written in every audit entry)', async () => {
    for (const bad of ['Work', 'a b', '-x', 'a'.repeat(33), 'a\u001b[2J', ''])
      await expect(parseServeFlags(['--sandbox', bad]), bad).rejects.toThrow(
        /--sandbox must be a sandbox name/,
      );
  });
});

// The runner's arguments: the modes, and a threshold only for a mode that is run.
import { describe, expect, it } from 'vitest';
import { parseArgs, UsageError } from '../lib/options.mjs';

describe('parseArgs', () => {
  it('takes the three modes and a threshold for each', () => {
    const options = parseArgs(
      [
        '--direct',
        '--through-ringfence',
        '--through-ringfence-allowed',
        '--expect-direct',
        '40',
        '--expect-through',
        '22',
        '--expect-allowed',
        '34',
      ],
      'out.json',
    );
    expect(options.modes).toEqual(['direct', 'through', 'allowed']);
    expect(options.expect).toEqual({ direct: 40, through: 22, allowed: 34 });
  });

  it('refuses a threshold for a mode that is not run, naming the flag that runs it', () => {
    expect(() => parseArgs(['--through-ringfence', '--expect-allowed', '34'], 'out.json')).toThrow(
      new UsageError('--expect-allowed is given but that mode is not run (add --through-ringfence-allowed)'),
    );
    expect(() => parseArgs(['--expect-allowed', '1'], 'out.json')).toThrow(/say which mode to run/);
  });
});

import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { resolveHome } from './home.js';

describe('resolveHome', () => {
  it('takes RINGFENCE_HOME without surrounding blanks', () => {
    expect(resolveHome({ RINGFENCE_HOME: '/srv/rf' })).toBe('/srv/rf');
    expect(resolveHome({ RINGFENCE_HOME: '  /srv/rf \n' })).toBe('/srv/rf');
  });

  it('falls back to ~/.ringfence when RINGFENCE_HOME is unset, empty or blank', () => {
    const fallback = join(homedir(), '.ringfence');
    for (const value of [undefined, '', '   '])
      expect(resolveHome(value === undefined ? {} : { RINGFENCE_HOME: value })).toBe(fallback);
  });
});

import { describe, expect, it } from 'vitest';
import { parseCreate } from './args.js';
import { parseExec, parseImage, parseLogs, sinceSeconds } from './args-lifecycle.js';

const NOW = Date.parse('2026-06-01T12:00:00.000Z');

describe('lifecycle arguments, read again after the schema check', () => {
  it('logs: defaults, bounds, a since as a duration or an ISO time', () => {
    expect(parseLogs({ name: 'box' })).toEqual({ name: 'box', tail: 200, maxBytes: 64 * 1024 });
    expect(parseLogs({ name: 'box', tail: 5, since: '10m', max_bytes: 10 }, NOW)).toEqual({
      name: 'box',
      tail: 5,
      maxBytes: 10,
      since: NOW / 1000 - 600,
    });
    expect(sinceSeconds('2026-06-01T11:00:00Z', NOW)).toBe(NOW / 1000 - 3600);
    expect(sinceSeconds('1d', NOW)).toBe(NOW / 1000 - 86_400);
  });

  it('logs: refuses what its schema would, and anything else', () => {
    for (const bad of [
      { name: 'box', tail: 0 },
      { name: 'box', tail: 10_001 },
      { name: 'box', max_bytes: 256 * 1024 + 1 },
      { name: 'box', since: 'yesterday' },
      { name: 'box', since: '0s' },
      { name: 'box', since: '5 m' },
      { name: 'box', since: 1700000000 },
      { name: 'box', exec: 'x123' },
      { name: 'box', exec: 'X0123456789ab' },
      { name: 'box', exec: '../x0123456789ab' },
      { name: 'Box' },
      { name: 'box', follow: true },
    ])
      expect(() => parseLogs(bad as Record<string, unknown>), JSON.stringify(bad)).toThrow(/./);
    expect(parseLogs({ name: 'box', exec: 'x0123456789ab' }).exec).toBe('x0123456789ab');
  });

  it('exec: an argv array, an absolute workdir, nothing else', () => {
    expect(parseExec({ name: 'box', command: ['node', '-v'], workdir: '/work' })).toEqual({
      name: 'box',
      command: ['node', '-v'],
      workdir: '/work',
    });
    expect(() => parseExec({ name: 'box', command: 'node -v' })).toThrow(/array/);
    expect(() => parseExec({ name: 'box', command: ['a\0b'] })).toThrow(/NUL/);
    expect(() => parseExec({ name: 'box', command: ['x'], workdir: 'rel' })).toThrow(/absolute/);
    expect(() => parseExec({ name: 'box', command: ['x'], timeout_seconds: 5 })).toThrow(
      /no argument "timeout_seconds"/,
    );
  });

  it('image_pull takes one image name; sandbox_create takes persistent as a boolean only', () => {
    expect(parseImage({ image: 'reg.example/img:1' })).toBe('reg.example/img:1');
    expect(() => parseImage({ image: '' })).toThrow(/image must name/);
    expect(() => parseImage({ image: 'a', platform: 'x' })).toThrow(/no argument "platform"/);
    expect(parseCreate({ name: 'box', image: 'img' }).persistent).toBe(false);
    expect(parseCreate({ name: 'box', image: 'img', persistent: true }).persistent).toBe(true);
    expect(() => parseCreate({ name: 'box', image: 'img', persistent: 'yes' })).toThrow(/true or false/);
  });
});

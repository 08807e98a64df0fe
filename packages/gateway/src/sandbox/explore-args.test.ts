import { describe, expect, it } from 'vitest';
import {
  EXPLORE_LIMITS,
  parseExplore,
  parseFork,
  parseReadFile,
  parseWriteFile,
  sandboxPath,
} from './explore-args.js';

describe('sandboxPath', () => {
  it('takes absolute paths, dropping "." and empty components', () => {
    expect(sandboxPath('/')).toBe('/');
    expect(sandboxPath('/tmp//a/./b/')).toBe('/tmp/a/b');
  });

  it('refuses relative paths, "..", NUL and overlong paths', () => {
    for (const path of [
      'tmp/a',
      '',
      '/tmp/../etc/shadow',
      '/..',
      '/a/..',
      'a\0',
      '/a\0b',
      `/${'a'.repeat(5000)}`,
      7,
      null,
    ])
      expect(() => sandboxPath(path), String(path)).toThrow(/absolute path|\.\.|NUL|longer/);
  });
});

describe('copy-and-explore arguments', () => {
  it('fork: two different names', () => {
    expect(parseFork({ name: 'a', new_name: 'b' })).toEqual({ name: 'a', newName: 'b' });
    expect(() => parseFork({ name: 'a', new_name: 'a' })).toThrow(/must differ/);
    expect(() => parseFork({ name: 'a', new_name: 'B/../c' })).toThrow(/name must be/);
    expect(() => parseFork({ name: 'a', new_name: 'b', image: 'x' })).toThrow(/no argument "image"/);
  });

  it('explore and read: defaults and bounds', () => {
    expect(parseExplore({ name: 'a' })).toEqual({ name: 'a', path: '/', depth: 3, maxEntries: 500 });
    expect(() => parseExplore({ name: 'a', depth: 0 })).toThrow(/depth/);
    expect(() => parseExplore({ name: 'a', max_entries: EXPLORE_LIMITS.entries.max + 1 })).toThrow(
      /max_entries/,
    );
    expect(parseReadFile({ name: 'a', path: '/etc/hosts' })).toMatchObject({ offset: 0, maxBytes: 65536 });
    expect(() => parseReadFile({ name: 'a', path: '/etc/hosts', max_bytes: 2 * 1024 * 1024 })).toThrow(
      /max_bytes/,
    );
    expect(() => parseReadFile({ name: 'a', path: '/' })).toThrow(/directory/);
  });

  it('write: text or strict base64, its size capped at 10 MiB, permission bits only', () => {
    expect(parseWriteFile({ name: 'a', path: '/tmp/x', content: 'hé' })).toMatchObject({
      path: '/tmp/x',
      content: Buffer.from('hé'),
      mode: 0o644,
    });
    expect(
      parseWriteFile({ name: 'a', path: '/tmp/x', content: 'AP8=', encoding: 'base64', mode: 0o755 }),
    ).toMatchObject({
      content: Buffer.from([0, 0xff]),
      mode: 0o755,
    });
    expect(() => parseWriteFile({ name: 'a', path: '/tmp/x', content: 'AP8', encoding: 'base64' })).toThrow(
      /not base64/,
    );
    expect(() => parseWriteFile({ name: 'a', path: '/tmp/x', content: 'a b=', encoding: 'base64' })).toThrow(
      /not base64/,
    );
    const big = 'x'.repeat(EXPLORE_LIMITS.writeBytes + 1);
    expect(() => parseWriteFile({ name: 'a', path: '/tmp/x', content: big })).toThrow(/10 MiB/);
    expect(
      parseWriteFile({ name: 'a', path: '/tmp/x', content: 'x'.repeat(EXPLORE_LIMITS.writeBytes) }).content
        .length,
    ).toBe(EXPLORE_LIMITS.writeBytes);
    const big64 = Buffer.alloc(EXPLORE_LIMITS.writeBytes + 1).toString('base64');
    expect(() => parseWriteFile({ name: 'a', path: '/tmp/x', content: big64, encoding: 'base64' })).toThrow(
      /10 MiB/,
    );
    for (const mode of [0o4755, 0o2755, -1, 1.5])
      expect(() => parseWriteFile({ name: 'a', path: '/tmp/x', content: '', mode })).toThrow(/mode/);
    for (const path of ['/', '/tmp/', 'tmp/x', '/tmp/../etc/passwd', `/tmp/${'n'.repeat(256)}`])
      expect(() => parseWriteFile({ name: 'a', path, content: '' }), path).toThrow();
  });
});

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chunked, endless, type RawEntry, tarOf } from './__fixtures__/tar.js';
import { shownName } from './archive-read.js';
import { exploreTree, readFileBytes, relativeName } from './explore.js';

const LIMITS = { bytes: 1024 * 1024, entries: 1000, ms: 5000 };
const destroyed = (stream: Readable) => stream.destroyed;

describe('exploreTree', () => {
  const tree = tarOf([
    { name: 'work/', typeflag: '5', mode: 0o755 },
    { name: 'work/a.txt', body: 'aaaa' },
    { name: 'work/sub/', typeflag: '5', mode: 0o700 },
    { name: 'work/sub/deep/', typeflag: '5' },
    { name: 'work/sub/deep/x', body: 'x'.repeat(5000) },
    { name: 'work/shadow', typeflag: '2', linkName: '/etc/shadow' },
  ]);

  it('lists the tree under the path asked for, to its depth, links with their targets', async () => {
    const result = await exploreTree(
      chunked(tree),
      { path: '/tmp/work', depth: 2, maxEntries: 100 },
      { limits: LIMITS },
    );
    expect(result).toMatchObject({ path: '/tmp/work', type: 'directory', scanned_entries: 6 });
    expect(result.truncated).toBeUndefined();
    expect(result.entries).toEqual([
      { path: '/tmp/work/a.txt', type: 'file', size: 4, mode: '0644' },
      { path: '/tmp/work/sub', type: 'directory', size: 0, mode: '0700' },
      { path: '/tmp/work/sub/deep', type: 'directory', size: 0, mode: '0644' },
      { path: '/tmp/work/shadow', type: 'symlink', size: 0, mode: '0644', link_target: '/etc/shadow' },
    ]);
  });

  it('stops at max_entries and destroys the stream without reading the rest', async () => {
    const many = tarOf([
      { name: 'r/', typeflag: '5' },
      ...Array.from({ length: 500 }, (_, i) => ({ name: `r/f${i}`, body: 'y'.repeat(1000) })),
    ]);
    const stream = chunked(many, 512);
    const result = await exploreTree(stream, { path: '/r', depth: 1, maxEntries: 10 }, { limits: LIMITS });
    expect(result.entries).toHaveLength(10);
    expect(result.truncated).toMatch(/max_entries reached/);
    expect(destroyed(stream)).toBe(true);
    expect(stream.pulled()).toBeLessThan(many.length / 10);
    const whole = await exploreTree(
      chunked(many, many.length),
      { path: '/r', depth: 1, maxEntries: 10 },
      { limits: LIMITS },
    );
    expect(whole.entries).toHaveLength(10);
  });

  it('caps the scan: bytes read, entries read, time', async () => {
    const huge = endless(Number.MAX_SAFE_INTEGER);
    const bytes = await exploreTree(
      huge,
      { path: '/big', depth: 1, maxEntries: 10 },
      { limits: { ...LIMITS, bytes: 1_000_000 } },
    );
    expect(bytes.truncated).toMatch(/bytes of the archive were read/);
    expect(huge.destroyed).toBe(true);
    expect(huge.pulled()).toBeLessThan(2_000_000);
    const deep = tarOf(Array.from({ length: 50 }, (_, i) => ({ name: `/a/b/c${i}`, typeflag: '5' })));
    const entries = await exploreTree(
      chunked(deep),
      { path: '/', depth: 1, maxEntries: 10 },
      { limits: { ...LIMITS, entries: 20 } },
    );
    expect(entries.truncated).toMatch(/more than .* entries/);
    const silent = new Readable({ read() {} });
    const timed = await exploreTree(
      silent,
      { path: '/', depth: 1, maxEntries: 10 },
      { limits: { ...LIMITS, ms: 50 } },
    );
    expect(timed.truncated).toMatch(/reading took more than/);
    expect(silent.destroyed).toBe(true);
  });

  it('shows hostile names safely: controls and bidi escaped, non-UTF-8 bytes as \\u{DCxx}, "../" flagged', async () => {
    const hostile = tarOf([
      { name: '/', typeflag: '5' },
      { name: '/evil\u001b[31m\nname', body: '' },
      { name: Buffer.from([0x2f, 0x61, 0xff, 0x62]), body: '' },
      { name: '/rtl\u202Etxt.exe', typeflag: '2', linkName: '../../../../etc/passwd\u0007' },
      { name: '../../outside', body: '' },
    ]);
    const result = await exploreTree(
      chunked(hostile),
      { path: '/', depth: 5, maxEntries: 100 },
      { limits: LIMITS },
    );
    expect(result.entries.map((e) => [e.path, e.link_target, e.name_not_utf8, e.odd_name])).toEqual([
      ['/evil\\u{1B}[31m\\u{A}name', undefined, undefined, undefined],
      ['/a\\u{DCFF}b', undefined, true, undefined],
      ['/rtl\\u{202E}txt.exe', '../../../../etc/passwd\\u{7}', undefined, undefined],
      ['../../outside', undefined, undefined, true],
    ]);
  });

  it('skips what lies under a tmpfs mount point below the path, and says so', async () => {
    const root = tarOf([
      { name: '/', typeflag: '5' },
      { name: '/tmp/', typeflag: '5' },
      { name: '/tmp/beneath', body: 'stale' },
      { name: '/tmpx', body: '' },
    ]);
    const result = await exploreTree(
      chunked(root),
      { path: '/', depth: 3, maxEntries: 10 },
      { limits: LIMITS, hidden: ['/tmp'] },
    );
    expect(result.entries.map((e) => e.path)).toEqual(['/tmp', '/tmpx']);
    expect(result.not_shown).toMatch(/\/tmp: a tmpfs/);
  });

  it('reports a path that is a link as the link, its target not followed', async () => {
    const link = tarOf([{ name: 'shadow', typeflag: '2', linkName: '/etc/shadow' }]);
    const result = await exploreTree(
      chunked(link),
      { path: '/tmp/shadow', depth: 3, maxEntries: 10 },
      { limits: LIMITS },
    );
    expect(result).toMatchObject({ type: 'symlink', link_target: '/etc/shadow', entries: [] });
  });
});

describe("the sandbox user's permissions", () => {
  const user = { uid: 65532, gid: 65532 };
  const read = (entry: Partial<RawEntry>) =>
    readFileBytes(
      chunked(tarOf([{ name: 'f', body: 'secret', ...entry }])),
      { path: '/f', offset: 0, maxBytes: 100 },
      {
        limits: LIMITS,
        user,
      },
    );

  it('reads only a file the sandbox user may read (the engine reads as root)', async () => {
    const refused = await read({ mode: 0o600 });
    expect(refused.note).toMatch(/may not read it \(owner 0:0, mode 0600\)/);
    expect(JSON.stringify(refused)).not.toMatch(/secret/);
    expect((await read({ mode: 0o644 })).content).toBe('secret');
    expect((await read({ mode: 0o600, uid: 65532 })).content).toBe('secret');
    expect((await read({ mode: 0o640, gid: 65532 })).content).toBe('secret');
    // The owner's bits decide for the owner, even where "other" would allow.
    expect((await read({ mode: 0o064, uid: 65532 })).content).toBeUndefined();
  });

  it('shows a directory the sandbox user may not list closed, nothing below it', async () => {
    const tree = tarOf([
      { name: 'w/', typeflag: '5', mode: 0o755 },
      { name: 'w/private/', typeflag: '5', mode: 0o700 },
      { name: 'w/private/key', body: 'k' },
      { name: 'w/public', body: 'p' },
    ]);
    const result = await exploreTree(
      chunked(tree),
      { path: '/w', depth: 5, maxEntries: 10 },
      { limits: LIMITS, user },
    );
    expect(result.entries.map((e) => [e.path, e.unreadable])).toEqual([
      ['/w/private', true],
      ['/w/public', undefined],
    ]);
    const top = await exploreTree(
      chunked(
        tarOf([
          { name: 'd/', typeflag: '5', mode: 0o700 },
          { name: 'd/x', body: '' },
        ]),
      ),
      { path: '/d', depth: 5, maxEntries: 10 },
      { limits: LIMITS, user },
    );
    expect(top.entries).toEqual([]);
    expect(top.unreadable).toMatch(/may not list it \(owner 0:0, mode 0700\)/);
  });
});

describe('relativeName', () => {
  it('takes names below the path asked for, and nothing else', () => {
    const rel = (name: string, path: string) => relativeName(Buffer.from(name), path)?.toString();
    expect(rel('tmp/', '/tmp')).toBe('');
    expect(rel('tmp/a/b', '/tmp')).toBe('a/b');
    expect(rel('tmpx/a', '/tmp')).toBeUndefined();
    expect(rel('/', '/')).toBe('');
    expect(rel('/etc/passwd', '/')).toBe('etc/passwd');
    expect(rel('./etc', '/')).toBe('etc');
  });
});

describe('readFileBytes', () => {
  const file = (body: Buffer | string, name = 'f') => chunked(tarOf([{ name, body }]), 64);

  it('returns text as UTF-8 and other bytes as base64, from offset, at most max_bytes', async () => {
    expect(
      await readFileBytes(file('hello world'), { path: '/f', offset: 6, maxBytes: 100 }, { limits: LIMITS }),
    ).toMatchObject({
      type: 'file',
      size: 11,
      offset: 6,
      bytes_returned: 5,
      more: false,
      encoding: 'utf8',
      content: 'world',
    });
    const binary = Buffer.from([0, 1, 0xff, 0xfe, 2]);
    expect(
      await readFileBytes(file(binary), { path: '/f', offset: 0, maxBytes: 4 }, { limits: LIMITS }),
    ).toMatchObject({
      bytes_returned: 4,
      more: true,
      encoding: 'base64',
      content: binary.subarray(0, 4).toString('base64'),
    });
    expect(
      await readFileBytes(file('abc'), { path: '/f', offset: 10, maxBytes: 4 }, { limits: LIMITS }),
    ).toMatchObject({
      bytes_returned: 0,
      more: false,
      content: '',
    });
  });

  it('does not split a character at the cut: the next read starts at it', async () => {
    const result = await readFileBytes(
      file('aé€b'),
      { path: '/f', offset: 0, maxBytes: 4 },
      { limits: LIMITS },
    );
    expect(result).toMatchObject({ encoding: 'utf8', content: 'aé', bytes_returned: 3, more: true });
  });

  it('stops reading a huge file once it has max_bytes, destroying the stream', async () => {
    const huge = endless(Number.MAX_SAFE_INTEGER);
    const result = await readFileBytes(huge, { path: '/big', offset: 0, maxBytes: 10 }, { limits: LIMITS });
    expect(result).toMatchObject({ bytes_returned: 10, more: true, content: 'a'.repeat(10) });
    expect(huge.destroyed).toBe(true);
    expect(huge.pulled()).toBeLessThan(200_000);
  });

  it('never follows a link, and reads no directory', async () => {
    const link = chunked(tarOf([{ name: 'shadow', typeflag: '2', linkName: '/etc/shadow' }]));
    const shown = await readFileBytes(
      link,
      { path: '/tmp/shadow', offset: 0, maxBytes: 100 },
      { limits: LIMITS },
    );
    expect(shown).toMatchObject({ type: 'symlink', link_target: '/etc/shadow' });
    expect(shown.content).toBeUndefined();
    const dir = chunked(
      tarOf([
        { name: 'd/', typeflag: '5' },
        { name: 'd/x', body: 'secret' },
      ]),
    );
    const listed = await readFileBytes(dir, { path: '/d', offset: 0, maxBytes: 100 }, { limits: LIMITS });
    expect(listed).toMatchObject({ type: 'directory', note: expect.stringMatching(/sandbox_explore/) });
    expect(JSON.stringify(listed)).not.toMatch(/secret/);
  });

  it('refuses a malformed archive as such', async () => {
    const bad = chunked(tarOf([{ name: 'f', body: 'x', badChecksum: true }]));
    await expect(
      readFileBytes(bad, { path: '/f', offset: 0, maxBytes: 10 }, { limits: LIMITS }),
    ).rejects.toThrow(/archive of the sandbox is malformed/);
  });
});

describe('shownName', () => {
  it('is one-to-one for names that are not UTF-8', () => {
    const a = shownName(Buffer.from([0x61, 0xc3]));
    const b = shownName(Buffer.from([0x61, 0xc3, 0x28]));
    expect(a).toEqual({ text: 'a\\u{DCC3}', utf8: false });
    expect(b).toEqual({ text: 'a\\u{DCC3}(', utf8: false });
    expect(shownName(Buffer.from('a\\u{DCC3}'))).toEqual({ text: 'a\\\\u{DCC3}', utf8: true });
  });
});

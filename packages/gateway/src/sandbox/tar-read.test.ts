import { describe, expect, it } from 'vitest';
import { header, pax, tarOf } from './__fixtures__/tar.js';
import { MAX_META_BYTES, type TarEntry, TarReader } from './tar-read.js';
import { oneFileTar } from './tar-write.js';

function read(bytes: Buffer, chunk = bytes.length) {
  const entries: (TarEntry & { body: string })[] = [];
  let body: Buffer[] = [];
  const reader = new TarReader({
    entry: (entry) => {
      entries.push({ ...entry, body: '' });
      body = [];
      return true;
    },
    data: (bytes) => void body.push(Buffer.from(bytes)),
    entryEnd: () => {
      entries[entries.length - 1]!.body = Buffer.concat(body).toString('latin1');
    },
  });
  for (let at = 0; at < bytes.length; at += chunk) reader.write(bytes.subarray(at, at + chunk));
  return { entries, ended: reader.ended };
}

describe('TarReader', () => {
  const archive = tarOf([
    { name: 'dir/', typeflag: '5', mode: 0o755 },
    { name: 'dir/a.txt', body: 'hello', mode: 0o4755 },
    { name: 'dir/link', typeflag: '2', linkName: '/etc/shadow', size: 0 },
  ]);

  it('reads files, directories and links, whatever the chunk sizes', () => {
    for (const chunk of [1, 7, 512, 100_000]) {
      const { entries, ended } = read(archive, chunk);
      expect(ended).toBe(true);
      expect(
        entries.map((e) => [e.name.toString(), e.type, e.size, e.mode, e.linkName.toString(), e.body]),
      ).toEqual([
        ['dir/', 'directory', 0, 0o755, '', ''],
        ['dir/a.txt', 'file', 5, 0o4755, '', 'hello'],
        ['dir/link', 'symlink', 0, 0o644, '/etc/shadow', ''],
      ]);
    }
  });

  it('takes long names from pax records and GNU long-name entries, kept as bytes', () => {
    const long = `${'d/'.repeat(150)}file`;
    const notUtf8 = Buffer.from([0x66, 0xff, 0xfe, 0x0a, 0x1b]);
    const bytes = tarOf([
      { name: 'PaxHeader', typeflag: 'x', body: pax({ path: long, linkpath: 'x'.repeat(300) }) },
      { name: 'short', typeflag: '2' },
      { name: '././@LongLink', typeflag: 'L', body: Buffer.concat([notUtf8, Buffer.from([0])]) },
      { name: 'ignored', body: 'x' },
    ]);
    const { entries } = read(bytes, 3);
    expect(entries[0]!.name.toString()).toBe(long);
    expect(entries[0]!.linkName.toString()).toBe('x'.repeat(300));
    expect(entries[1]!.name).toEqual(notUtf8);
  });

  it('refuses an extended header too large to be a name, before reading it', () => {
    const bytes = Buffer.concat([header({ name: 'PaxHeader', typeflag: 'x', size: MAX_META_BYTES + 1 })]);
    expect(() => read(bytes)).toThrow(/extended header of 65537 bytes/);
  });

  it('refuses a wrong checksum, a size that is no number, a negative or oversized base-256 size', () => {
    expect(() => read(tarOf([{ name: 'a', body: 'x', badChecksum: true }]))).toThrow(/checksum/);
    expect(() => read(tarOf([{ name: 'a', sizeField: Buffer.from('12x45678901\0') }]))).toThrow(
      /not a number/,
    );
    expect(() =>
      read(tarOf([{ name: 'a', sizeField: Buffer.from([0xff, ...Array(11).fill(0xff)]) }])),
    ).toThrow(/negative or oversized/);
    expect(() =>
      read(tarOf([{ name: 'a', sizeField: Buffer.from([0x80, ...Array(11).fill(0xff)]) }])),
    ).toThrow(/too large/);
  });

  it('reads a base-256 size (files over 8 GiB)', () => {
    const size = Buffer.alloc(12);
    size[0] = 0x80;
    size.writeUIntBE(5, 6, 6);
    const { entries } = read(tarOf([{ name: 'big', sizeField: size, body: 'abcde' }]));
    expect(entries[0]).toMatchObject({ size: 5, body: 'abcde' });
  });

  it('gives no body to a link or a directory, whatever its size field says', () => {
    const bytes = Buffer.concat([
      header({ name: 'l', typeflag: '2', linkName: 't', size: 1000 }),
      header({ name: 'f', body: 'ok' }),
      Buffer.from('ok'.padEnd(512, '\0')),
      Buffer.alloc(1024),
    ]);
    const { entries } = read(bytes);
    expect(entries.map((e) => [e.name.toString(), e.size, e.body])).toEqual([
      ['l', 0, ''],
      ['f', 2, 'ok'],
    ]);
  });
});

describe('oneFileTar', () => {
  it('reads back as one file with its owner and mode, a long name in a pax record', () => {
    for (const name of ['notes.txt', 'n'.repeat(200), 'é'.repeat(60)]) {
      const bytes = oneFileTar({
        name,
        content: Buffer.from('body'),
        mode: 0o640,
        uid: 65532,
        gid: 65533,
        mtime: 1,
      });
      const { entries, ended } = read(bytes, 13);
      expect(ended).toBe(true);
      expect(entries).toHaveLength(1);
      expect(entries[0]).toMatchObject({ type: 'file', size: 4, mode: 0o640, body: 'body' });
      expect(entries[0]!.name.toString()).toBe(name);
      const at = bytes.length - 3 * 512 - 512;
      expect(bytes.subarray(at + 108, at + 115).toString()).toBe((65532).toString(8).padStart(7, '0'));
    }
  });

  it('refuses a name that is more than one path component', () => {
    for (const name of ['/a', '..', 'a/../b', '', 'a\0b', 'a//b'])
      expect(() =>
        oneFileTar({ name, content: Buffer.alloc(0), mode: 0o644, uid: 1, gid: 1, mtime: 0 }),
      ).toThrow();
  });
});

import { Readable } from 'node:stream';

/** Tars built byte by byte for tests, hostile ones included (names, sizes and types as given). */

export interface RawEntry {
  name: Buffer | string;
  typeflag?: string;
  body?: Buffer | string;
  /** The header's size field, when it should lie about the body. */
  size?: number;
  mode?: number;
  uid?: number;
  gid?: number;
  linkName?: Buffer | string;
  /** Write a wrong checksum. */
  badChecksum?: boolean;
  /** Raw bytes for the size field (base-256 and the like). */
  sizeField?: Buffer;
}

const buf = (v: Buffer | string | undefined) => (v === undefined ? Buffer.alloc(0) : Buffer.isBuffer(v) ? v : Buffer.from(v));
const octal = (value: number, length: number) => `${value.toString(8).padStart(length - 1, '0')}\0`;
const pad = (b: Buffer) => Buffer.concat([b, Buffer.alloc((512 - (b.length % 512)) % 512)]);

export function header(entry: RawEntry): Buffer {
  const block = Buffer.alloc(512);
  buf(entry.name).copy(block, 0, 0, 100);
  const body = buf(entry.body);
  block.write(octal(entry.mode ?? 0o644, 8), 100, 'latin1');
  block.write(octal(entry.uid ?? 0, 8), 108, 'latin1');
  block.write(octal(entry.gid ?? 0, 8), 116, 'latin1');
  if (entry.sizeField) entry.sizeField.copy(block, 124);
  else block.write(octal(entry.size ?? body.length, 12), 124, 'latin1');
  block.write(octal(0, 12), 136, 'latin1');
  block.write('        ', 148, 'latin1');
  block.write(entry.typeflag ?? '0', 156, 'latin1');
  buf(entry.linkName).copy(block, 157, 0, 100);
  block.write('ustar\u000000', 257, 'latin1');
  let sum = 0;
  for (const byte of block) sum += byte;
  if (entry.badChecksum) sum += 1;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

export function pax(records: Record<string, Buffer | string>): Buffer {
  return Buffer.concat(
    Object.entries(records).map(([key, value]) => {
      const tail = Buffer.concat([Buffer.from(` ${key}=`), buf(value), Buffer.from('\n')]);
      let length = tail.length + 1;
      while (String(length).length + tail.length !== length) length = String(length).length + tail.length;
      return Buffer.concat([Buffer.from(String(length)), tail]);
    }),
  );
}

/** Entries, each followed by its body (padded), then the end blocks unless `end` is false. */
export function tarOf(entries: RawEntry[], end = true): Buffer {
  const parts: Buffer[] = [];
  for (const entry of entries) parts.push(header(entry), pad(buf(entry.body)));
  if (end) parts.push(Buffer.alloc(1024));
  return Buffer.concat(parts);
}

/** A stream of `bytes` in chunks of `chunk` bytes, which records whether it was destroyed and how much was pulled. */
export function chunked(bytes: Buffer, chunk = 100): Readable & { pulled: () => number } {
  let at = 0;
  const stream = new Readable({
    read() {
      if (at >= bytes.length) return void this.push(null);
      this.push(bytes.subarray(at, at + chunk));
      at += chunk;
    },
  });
  return Object.assign(stream, { pulled: () => Math.min(at, bytes.length) });
}

/** An endless stream: a file entry claiming `size` bytes, then zeros for ever. */
export function endless(size: number): Readable & { pulled: () => number } {
  let pulled = 0;
  const first = header({ name: 'big', size });
  const stream = new Readable({
    read() {
      const chunk = pulled === 0 ? first : Buffer.alloc(64 * 1024, 0x61);
      pulled += chunk.length;
      this.push(chunk);
    },
  });
  return Object.assign(stream, { pulled: () => pulled });
}

/**
 * The tar of exactly one regular file, built in memory for the engine's archive API
 * (`PUT /containers/{id}/archive`): a ustar header (with a pax record for a name longer than the
 * ustar field), the bytes, and the end-of-archive blocks. Its name is one path component: the
 * archive is extracted into the file's directory, so nothing in it can name another place.
 */

import { SandboxError } from './errors.js';

const BLOCK = 512;

export interface OneFile {
  /** One path component: no "/", not "." or "..", no NUL. */
  readonly name: string;
  readonly content: Buffer;
  readonly mode: number;
  readonly uid: number;
  readonly gid: number;
  /** Seconds since the epoch. */
  readonly mtime: number;
}

function octal(value: number, length: number): string {
  return `${value.toString(8).padStart(length - 1, '0')}\0`;
}

function header(name: Buffer, size: number, typeflag: string, file: OneFile): Buffer {
  const block = Buffer.alloc(BLOCK);
  name.copy(block, 0, 0, Math.min(name.length, 100));
  block.write(octal(file.mode & 0o7777, 8), 100, 'latin1');
  block.write(octal(file.uid, 8), 108, 'latin1');
  block.write(octal(file.gid, 8), 116, 'latin1');
  block.write(octal(size, 12), 124, 'latin1');
  block.write(octal(Math.floor(file.mtime), 12), 136, 'latin1');
  block.write('        ', 148, 'latin1');
  block.write(typeflag, 156, 'latin1');
  block.write('ustar\u000000', 257, 'latin1');
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return block;
}

const padded = (bytes: Buffer) =>
  Buffer.concat([bytes, Buffer.alloc((BLOCK - (bytes.length % BLOCK)) % BLOCK)]);

function paxRecord(key: string, value: Buffer): Buffer {
  const tail = Buffer.concat([Buffer.from(` ${key}=`), value, Buffer.from('\n')]);
  // The length counts its own digits.
  let length = tail.length + 1;
  while (String(length).length + tail.length !== length) length = String(length).length + tail.length;
  return Buffer.concat([Buffer.from(String(length)), tail]);
}

export function oneFileTar(file: OneFile): Buffer {
  if (file.name === '' || file.name === '.' || file.name === '..' || /[/\0]/.test(file.name))
    throw new SandboxError(
      'SANDBOX_ARGUMENTS',
      `a file name must be one path component, not ${JSON.stringify(file.name)}.`,
    );
  const name = Buffer.from(file.name, 'utf8');
  const parts: Buffer[] = [];
  if (name.length > 100) {
    const pax = paxRecord('path', name);
    parts.push(header(Buffer.from('PaxHeader'), pax.length, 'x', file), padded(pax));
  }
  parts.push(header(name, file.content.length, '0', file), padded(file.content), Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

import { SandboxError } from './errors.js';

/**
 * The tar of one regular file, and of the directories missing on its way, built in memory for
 * the engine's archive API (`PUT /containers/{id}/archive`): ustar headers (with a pax record for
 * a name longer than the ustar field), the bytes, and the end-of-archive blocks. Names are
 * relative paths of plain components (no "." or "..", no NUL): the archive is extracted into the
 * deepest directory that exists, so nothing in it can name another place.
 */

const BLOCK = 512;

export interface OneFile {
  /** A relative path of plain components: no leading "/", no "." or "..", no NUL. */
  readonly name: string;
  readonly content: Buffer;
  /** Directories to make first (relative, outermost first), with `dirMode`. */
  readonly directories?: readonly string[];
  readonly dirMode?: number;
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

const plain = (name: string) =>
  name !== '' &&
  !name.startsWith('/') &&
  !name.includes('\0') &&
  name.split('/').every((c) => c !== '' && c !== '.' && c !== '..');

function entry(name: string, typeflag: '0' | '5', content: Buffer, file: OneFile, mode: number): Buffer[] {
  if (!plain(name))
    throw new SandboxError(
      'SANDBOX_ARGUMENTS',
      `a name in the archive must be a plain relative path, not ${JSON.stringify(name)}.`,
    );
  const bytes = Buffer.from(typeflag === '5' ? `${name}/` : name, 'utf8');
  const parts: Buffer[] = [];
  const entryFile = { ...file, mode };
  if (bytes.length > 100) {
    const pax = paxRecord('path', bytes);
    parts.push(header(Buffer.from('PaxHeader'), pax.length, 'x', entryFile), padded(pax));
  }
  parts.push(header(bytes, content.length, typeflag, entryFile), padded(content));
  return parts;
}

export function oneFileTar(file: OneFile): Buffer {
  const parts: Buffer[] = [];
  for (const directory of file.directories ?? [])
    parts.push(...entry(directory, '5', Buffer.alloc(0), file, file.dirMode ?? 0o755));
  parts.push(...entry(file.name, '0', file.content, file, file.mode), Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

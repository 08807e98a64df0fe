import { SandboxError } from './errors.js';

/**
 * A small, incremental reader of the tar streams the engine's archive API sends
 * (`GET /containers/{id}/archive`): ustar headers, POSIX pax extended headers and GNU long
 * names. Its input is a sandbox's file system, so every byte of it is the sandbox's choice:
 * names are kept as bytes (never decoded, never used as host paths), sizes are checked, and the
 * only thing ever held in memory is one header, one capped pax/long-name record, and the body
 * bytes its caller asks for. It never reads ahead: the caller stops it (and destroys the stream)
 * the moment it has what it wants.
 */

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'hardlink' | 'other';

export interface TarEntry {
  /** As the archive names it: bytes, not necessarily UTF-8, not necessarily a clean path. */
  readonly name: Buffer;
  readonly type: TarEntryType;
  /** The raw type flag (for `other`: a device, a fifo, …). */
  readonly typeflag: string;
  readonly size: number;
  /** Permission bits and the set-id/sticky bits (the low 12 bits of the header's mode). */
  readonly mode: number;
  /** The numeric owner and group the engine recorded. */
  readonly uid: number;
  readonly gid: number;
  /** A link's target, as bytes; empty for other types. */
  readonly linkName: Buffer;
}

export interface TarHandlers {
  /** Each entry in order; return true to be handed its body bytes. */
  entry(entry: TarEntry): boolean;
  /** Body bytes of the current entry (only when `entry` returned true), in order. */
  data?(bytes: Buffer): void;
  /** The end of the current entry's body (only when `entry` returned true). */
  entryEnd?(): void;
}

const BLOCK = 512;
/** A pax record or GNU long name longer than this is not a name: the archive is refused. */
export const MAX_META_BYTES = 64 * 1024;

const malformed = (why: string) =>
  new SandboxError('SANDBOX_ARCHIVE', `the engine's archive of the sandbox is malformed (${why}).`);

function field(header: Buffer, start: number, length: number): Buffer {
  const raw = header.subarray(start, start + length);
  const nul = raw.indexOf(0);
  return Buffer.from(nul < 0 ? raw : raw.subarray(0, nul));
}

/** A numeric header field: octal text, or GNU base-256 (high bit set) for large values. */
export function tarNumber(header: Buffer, start: number, length: number, what: string): number {
  const raw = header.subarray(start, start + length);
  if (raw[0] !== undefined && (raw[0] & 0x80) !== 0) {
    if (raw[0] !== 0x80) throw malformed(`negative or oversized ${what}`);
    let value = 0;
    for (const byte of raw.subarray(1)) {
      value = value * 256 + byte;
      if (value > Number.MAX_SAFE_INTEGER) throw malformed(`${what} too large`);
    }
    return value;
  }
  const text = raw
    .toString('latin1')
    .replace(/[\0 ]+$/, '')
    .replace(/^ +/, '');
  if (text === '') return 0;
  if (!/^[0-7]+$/.test(text)) throw malformed(`${what} is not a number`);
  const value = Number.parseInt(text, 8);
  if (!Number.isSafeInteger(value)) throw malformed(`${what} too large`);
  return value;
}

function checksumOk(header: Buffer): boolean {
  let sum = 0;
  for (let i = 0; i < BLOCK; i += 1) sum += i >= 148 && i < 156 ? 0x20 : header[i]!;
  return tarNumber(header, 148, 8, 'checksum') === sum;
}

const typeOf = (flag: string): TarEntryType =>
  flag === '0' || flag === '\0' || flag === '7'
    ? 'file'
    : flag === '5'
      ? 'directory'
      : flag === '2'
        ? 'symlink'
        : flag === '1'
          ? 'hardlink'
          : 'other';

/** The records of a pax extended header: `LEN key=value\n`, values kept as bytes. */
export function paxRecords(body: Buffer): Map<string, Buffer> {
  const records = new Map<string, Buffer>();
  let at = 0;
  while (at < body.length) {
    if (body[at] === 0) break;
    const space = body.indexOf(0x20, at);
    if (space < 0 || space - at > 20) throw malformed('a pax record has no length');
    const length = Number(body.subarray(at, space).toString('latin1'));
    if (!Number.isSafeInteger(length) || length <= space - at + 1 || at + length > body.length)
      throw malformed('a pax record has a wrong length');
    const record = body.subarray(space + 1, at + length - 1);
    const equals = record.indexOf(0x3d);
    if (equals < 0) throw malformed('a pax record has no "="');
    records.set(record.subarray(0, equals).toString('latin1'), Buffer.from(record.subarray(equals + 1)));
    at += length;
  }
  return records;
}

type State =
  | { kind: 'header' }
  | { kind: 'meta'; flag: string; left: number; parts: Buffer[]; padding: number }
  | { kind: 'body'; left: number; wanted: boolean; padding: number }
  | { kind: 'padding'; left: number }
  | { kind: 'done' };

/** Feed it the stream's chunks with `write`; it calls the handlers as entries go by. */
export class TarReader {
  private state: State = { kind: 'header' };
  private pending: Buffer = Buffer.alloc(0);
  /** From a pax header or GNU long name/link, for the next entry only. */
  private next: { path?: Buffer; linkpath?: Buffer; size?: number } = {};
  private bytesRead = 0;

  constructor(private readonly handlers: TarHandlers) {}

  /** Whether the archive's end (a zero block) was reached. */
  get ended(): boolean {
    return this.state.kind === 'done';
  }

  /** Bytes of the stream consumed so far. */
  get consumed(): number {
    return this.bytesRead;
  }

  write(chunk: Buffer): void {
    this.bytesRead += chunk.length;
    let data = this.pending.length > 0 ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = Buffer.alloc(0);
    while (data.length > 0 && this.state.kind !== 'done') {
      const state = this.state;
      if (state.kind === 'header') {
        if (data.length < BLOCK) {
          this.pending = Buffer.from(data);
          return;
        }
        this.header(data.subarray(0, BLOCK));
        data = data.subarray(BLOCK);
      } else if (state.kind === 'padding') {
        const take = Math.min(state.left, data.length);
        state.left -= take;
        data = data.subarray(take);
        if (state.left === 0) this.state = { kind: 'header' };
      } else if (state.kind === 'meta') {
        const take = Math.min(state.left, data.length);
        state.parts.push(Buffer.from(data.subarray(0, take)));
        state.left -= take;
        data = data.subarray(take);
        if (state.left === 0) {
          this.meta(state.flag, Buffer.concat(state.parts));
          this.state = state.padding > 0 ? { kind: 'padding', left: state.padding } : { kind: 'header' };
        }
      } else if (state.kind === 'body') {
        const take = Math.min(state.left, data.length);
        if (state.wanted && take > 0) this.handlers.data?.(data.subarray(0, take));
        state.left -= take;
        data = data.subarray(take);
        if (state.left === 0) this.endBody(state);
      }
    }
  }

  private endBody(state: Extract<State, { kind: 'body' }>): void {
    if (state.wanted) this.handlers.entryEnd?.();
    this.state = state.padding > 0 ? { kind: 'padding', left: state.padding } : { kind: 'header' };
  }

  private header(header: Buffer): void {
    if (header.every((byte) => byte === 0)) {
      this.state = { kind: 'done' };
      return;
    }
    if (!checksumOk(header)) throw malformed('a header checksum does not match');
    const flag = String.fromCharCode(header[156]!);
    const headerSize = tarNumber(header, 124, 12, 'size');
    const padding = (BLOCK - (headerSize % BLOCK)) % BLOCK;
    if (flag === 'x' || flag === 'g' || flag === 'L' || flag === 'K') {
      if (headerSize > MAX_META_BYTES)
        throw malformed(`an extended header of ${headerSize} bytes (more than ${MAX_META_BYTES})`);
      this.state = { kind: 'meta', flag, left: headerSize, parts: [], padding };
      if (headerSize === 0) {
        this.meta(flag, Buffer.alloc(0));
        this.state = { kind: 'header' };
      }
      return;
    }
    const ustar = header.subarray(257, 262).toString('latin1') === 'ustar';
    const prefix = ustar ? field(header, 345, 155) : Buffer.alloc(0);
    const shortName = field(header, 0, 100);
    const name =
      this.next.path ??
      (prefix.length > 0 ? Buffer.concat([prefix, Buffer.from('/'), shortName]) : shortName);
    const type = typeOf(flag);
    // Only regular files have bodies; a link's or a directory's size field is not to be trusted.
    const size = this.next.size ?? headerSize;
    const bodySize = type === 'file' || type === 'other' ? size : 0;
    const entry: TarEntry = {
      name,
      type,
      typeflag: flag,
      size: type === 'file' ? size : 0,
      mode: tarNumber(header, 100, 8, 'mode') & 0o7777,
      uid: tarNumber(header, 108, 8, 'uid'),
      gid: tarNumber(header, 116, 8, 'gid'),
      linkName:
        type === 'symlink' || type === 'hardlink'
          ? (this.next.linkpath ?? field(header, 157, 100))
          : Buffer.alloc(0),
    };
    this.next = {};
    const wanted = this.handlers.entry(entry);
    const bodyPadding = (BLOCK - (bodySize % BLOCK)) % BLOCK;
    const body: Extract<State, { kind: 'body' }> = {
      kind: 'body',
      left: bodySize,
      wanted,
      padding: bodyPadding,
    };
    this.state = body;
    if (bodySize === 0) this.endBody(body);
  }

  private meta(flag: string, body: Buffer): void {
    if (flag === 'L') this.next.path = field(body, 0, body.length);
    else if (flag === 'K') this.next.linkpath = field(body, 0, body.length);
    else if (flag === 'x') {
      const records = paxRecords(body);
      const path = records.get('path');
      const linkpath = records.get('linkpath');
      const size = records.get('size');
      if (path) this.next.path = path;
      if (linkpath) this.next.linkpath = linkpath;
      if (size) {
        const text = size.toString('latin1');
        if (!/^[0-9]{1,16}$/.test(text) || !Number.isSafeInteger(Number(text)))
          throw malformed('a pax size is not a number');
        this.next.size = Number(text);
      }
    }
    // 'g' (global pax headers) name nothing an entry listing needs: read and ignored.
  }
}

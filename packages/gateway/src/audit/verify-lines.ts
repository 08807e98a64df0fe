import { isUtf8 } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { RingfenceError } from '../errors.js';
import { type ChainFacts, chainFacts } from './interrupted.js';
import { scanLine } from './scan.js';
import { checkEntryShape, hashLine, isSerializedForm } from './spec.js';
import { type AuditDigest, MAX_LINE_BYTES } from './types.js';

/** Why verification stopped, at the line it names. */
export type AuditVerifyCode =
  | 'AUDIT_UNREADABLE'
  | 'AUDIT_TORN_LINE'
  | 'AUDIT_BAD_JSON'
  | 'AUDIT_BAD_SHAPE'
  | 'AUDIT_NOT_CANONICAL'
  | 'AUDIT_BAD_GENESIS'
  | 'AUDIT_SEQ_GAP'
  | 'AUDIT_SEQ_ORDER'
  | 'AUDIT_DUPLICATE_LINE'
  | 'AUDIT_LINE_INSERTED'
  | 'AUDIT_LINE_CHANGED'
  | 'AUDIT_CHAIN_BROKEN';

export type Parsed =
  | { ok: true; facts: ChainFacts; hash: AuditDigest }
  | { ok: false; code: AuditVerifyCode; message: string };

/**
 * A line's verdict: the one-pass scan accepts the lines in ringfence's exact byte form (all but
 * those with an escaped lone surrogate); every other line gets the reference checks, which alone
 * refuse and say why.
 */
export function parseLine(bytes: Buffer): Parsed {
  const facts = scanLine(bytes);
  if (facts) return { ok: true, facts, hash: hashLine(bytes) };
  return parseLineByReference(bytes);
}

/** JSON.parse, the shape check and the JSON.stringify comparison: the definition of a valid line. */
export function parseLineByReference(bytes: Buffer): Parsed {
  if (bytes.length === 0) return { ok: false, code: 'AUDIT_BAD_JSON', message: 'the line is empty' };
  let value: unknown;
  let text: string;
  // Checked first, then decoded without replacement; a BOM stays a character, so it fails
  // JSON.parse instead of vanishing before the check.
  if (!isUtf8(bytes)) return { ok: false, code: 'AUDIT_BAD_JSON', message: 'the line is not valid UTF-8' };
  text = bytes.toString('utf8');
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      ok: false,
      code: 'AUDIT_BAD_JSON',
      message: `the line is not JSON (${(error as Error).message})`,
    };
  }
  const shape = checkEntryShape(value);
  if (!shape.ok) return { ok: false, code: 'AUDIT_BAD_SHAPE', message: shape.message };
  if (!isSerializedForm(shape.entry, text)) {
    return {
      ok: false,
      code: 'AUDIT_NOT_CANONICAL',
      message:
        'the line is not byte-for-byte what ringfence writes (spacing, key order or escapes were changed)',
    };
  }
  return { ok: true, facts: chainFacts(shape.entry), hash: hashLine(bytes) };
}

/**
 * A line over MAX_LINE_BYTES: the file is not a log. Not read.ts's LineTooLongError, an AuditError,
 * whose module would load all of @ringfence/policy into each of the verifier's worker threads; the
 * base class comes from the light `@ringfence/policy/errors` (through ../errors.ts).
 */
export class LongLineError extends RingfenceError<'AUDIT_LINE_TOO_LONG'> {
  constructor() {
    super('AUDIT_LINE_TOO_LONG', `a line is longer than ${MAX_LINE_BYTES} bytes`);
  }
}

/**
 * A blocking read (`fs.readSync` on a descriptor), for a worker thread: it has nothing else to do
 * while it waits, and an asynchronous read there left it idle for the thread pool's hop each time.
 */
export type ReadSync = (buffer: Buffer, offset: number, length: number, position: number) => number;

/** Bytes asked of each read; the buffer grows only for a line longer than this. */
const READ_BYTES = 256 * 1024;

/**
 * Forward line reader over the bytes before `limit`, with one line of look-ahead; a last line
 * without newline comes back as `complete: false`. One buffer is read into again and again (a new
 * one per read was most of what the verifier allocated), so a line's bytes are valid only until
 * the next call to `next` or `peek`: callers keep its hash, never its bytes.
 */
export class Lines {
  private buffered: { bytes: Buffer; complete: boolean }[] = [];
  private index = 0;
  private position: number;
  private ended = false;
  private chunk = Buffer.allocUnsafe(READ_BYTES);
  /** `chunk[0, filled)` holds file bytes; `chunk[cut, filled)` is a line not complete yet. */
  private filled = 0;
  private cut = 0;

  /** Reads from `start` (a line's first byte) up to `limit`. */
  constructor(
    private readonly handle: FileHandle | ReadSync,
    private readonly limit: number,
    start = 0,
  ) {
    this.position = start;
  }

  /**
   * The next line if it is already read, else `null` (call `next`): a log has millions of lines,
   * and a promise per line costs more than checking one.
   */
  take(): { bytes: Buffer; complete: boolean } | null {
    const item = this.buffered[this.index];
    if (!item) return null;
    this.index += 1;
    return item;
  }

  async next(): Promise<{ bytes: Buffer; complete: boolean } | undefined> {
    await this.fill();
    const item = this.buffered[this.index];
    if (item) this.index += 1;
    return item;
  }

  async peek(): Promise<{ bytes: Buffer; complete: boolean } | undefined> {
    await this.fill();
    return this.buffered[this.index];
  }

  private async fill(): Promise<void> {
    while (this.index >= this.buffered.length && !this.ended) {
      this.buffered = [];
      this.index = 0;
      // The incomplete line moves to the front; every line handed out so far is overwritten.
      const rest = this.filled - this.cut;
      if (this.cut > 0) this.chunk.copyWithin(0, this.cut, this.filled);
      this.filled = rest;
      this.cut = 0;
      if (rest === this.chunk.length) {
        if (rest > MAX_LINE_BYTES) throw new LongLineError();
        const bigger = Buffer.allocUnsafe(Math.min(2 * this.chunk.length, MAX_LINE_BYTES + 1));
        this.chunk.copy(bigger, 0, 0, rest);
        this.chunk = bigger;
      }
      // Only the bytes read are ever looked at, so the buffer need not be zeroed first.
      const want = Math.min(this.chunk.length - rest, this.limit - this.position);
      const bytesRead =
        want <= 0
          ? 0
          : typeof this.handle === 'function'
            ? this.handle(this.chunk, rest, want, this.position)
            : (await this.handle.read(this.chunk, rest, want, this.position)).bytesRead;
      this.position += bytesRead;
      if (bytesRead === 0) {
        this.ended = true;
        if (rest > 0) this.buffered.push({ bytes: this.chunk.subarray(0, rest), complete: false });
        return;
      }
      this.filled = rest + bytesRead;
      const data = this.chunk.subarray(0, this.filled);
      for (let i = data.indexOf(0x0a, rest); i !== -1; i = data.indexOf(0x0a, this.cut)) {
        this.buffered.push({ bytes: data.subarray(this.cut, i), complete: true });
        this.cut = i + 1;
      }
    }
  }
}

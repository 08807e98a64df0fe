import { isUtf8 } from 'node:buffer';
import type { FileHandle } from 'node:fs/promises';
import { checkEntryShape, hashLine, isSerializedForm } from './format.js';
import { type ChainFacts, chainFacts } from './interrupted.js';
import { LineSplitter } from './read.js';
import { scanLine } from './scan.js';
import type { AuditDigest } from './types.js';

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
  | { ok: true; facts: ChainFacts; hash: AuditDigest; bytes: Buffer }
  | { ok: false; code: AuditVerifyCode; message: string };

/**
 * A line's verdict: the one-pass scan accepts the lines in ringfence's byte form that need no
 * escapes (nearly all); every other line gets the reference checks, which alone refuse and say why.
 */
export function parseLine(bytes: Buffer): Parsed {
  const facts = scanLine(bytes);
  if (facts) return { ok: true, facts, hash: hashLine(bytes), bytes };
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
  return { ok: true, facts: chainFacts(shape.entry), hash: hashLine(bytes), bytes };
}

/**
 * Forward line reader over the bytes before `limit`, with one line of look-ahead; a last line
 * without newline comes back as `complete: false`.
 */
export class Lines {
  private readonly splitter = new LineSplitter();
  private buffered: { bytes: Buffer; complete: boolean }[] = [];
  private index = 0;
  private position: number;
  private ended = false;

  /** Reads from `start` (a line's first byte) up to `limit`. */
  constructor(
    private readonly handle: FileHandle,
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
      // Only the bytes read are ever looked at, so the chunk need not be zeroed first.
      const chunk = Buffer.allocUnsafe(Math.min(256 * 1024, this.limit - this.position));
      const { bytesRead } =
        chunk.length > 0 ? await this.handle.read(chunk, 0, chunk.length, this.position) : { bytesRead: 0 };
      this.position += bytesRead;
      if (bytesRead === 0) {
        this.ended = true;
        const rest = this.splitter.pending;
        if (rest.length > 0) this.buffered.push({ bytes: rest, complete: false });
        return;
      }
      for (const bytes of this.splitter.push(chunk.subarray(0, bytesRead))) {
        this.buffered.push({ bytes, complete: true });
      }
    }
  }
}

/**
 * The verifier's fast path: one pass over a line's bytes that accepts it only when it is, byte for
 * byte, what `serializeEntry` writes for an entry that passes `checkEntryShape`. It recognises a
 * strict subset of that form: keys in the spec's order, no spaces, integers as JSON.stringify
 * writes them, strings with only the escapes JSON.stringify writes (and no lone surrogate).
 * Anything else (an escaped lone surrogate, or any damage) is not decided here: `scanLine`
 * returns undefined and the caller runs the reference path (JSON.parse, the shape check, the
 * JSON.stringify comparison), which gives the verdict and its message. So this file can only ever make a line cheaper to accept, never accept one the
 * reference path refuses; `scan.test.ts` checks that against the reference on generated and
 * mutated lines.
 */
import { isUtf8 } from 'node:buffer';
import { type ChainFacts, chainFacts } from './interrupted.js';
import {
  type Check,
  crossFieldProblem,
  entrySpec,
  fieldsOf,
  isDigest,
  isDigestOrNull,
  isName,
  isText,
  isTimestamp,
  type Spec,
} from './spec.js';
import { AUDIT_STRING_MAX, AUDIT_TYPES, type AuditDigest } from './types.js';

const QUOTE = 0x22;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN = 0x7b;
const CLOSE = 0x7d;
const BACKSLASH = 0x5c;
const ZERO = 0x30;
const NINE = 0x39;

/** Lower-case hex digits, the only ones a digest may hold. */
const HEX = new Uint8Array(256);
for (const c of Buffer.from('0123456789abcdef')) HEX[c] = 1;

/** `"sha256:` */
const DIGEST_HEAD = Buffer.from('"sha256:');
/** `"sha256:` + 64 hex digits + `"` */
const DIGEST_BYTES = DIGEST_HEAD.length + 64 + 1;
/** `"2026-01-31T12:00:00.000Z"` */
const TIMESTAMP_BYTES = 26;
/** `{"seq":`: how every line of every type starts. */
const LINE_HEAD = Buffer.from('{"seq":');
/** What follows seq's digits up to the type's value: `,"ts":"…","type":"`. */
const TYPE_AFTER_SEQ = ',"ts":'.length + TIMESTAMP_BYTES + ',"type":"'.length;

/** How a field's value is scanned: checked in place on the bytes, or built for its check. */
enum Kind {
  Built,
  Digest,
  DigestOrNull,
  Timestamp,
  Name,
  Text,
  Object,
}
/** Where a value the later rules read is kept (see `Seen`); -1 for the others. */
const SLOTS: Readonly<Record<string, number>> = {
  type: 0,
  seq: 1,
  parent_seq: 2,
  prev: 3,
  phase: 4,
  allowed: 5,
  arguments: 6,
  kind: 7,
  method: 8,
};

/** A spec's field prepared for matching in place: its key as the bytes `key":` (after the quote). */
interface Compiled {
  readonly key: Buffer;
  readonly optional: boolean;
  readonly kind: Kind;
  readonly check: Check;
  readonly inner: readonly Compiled[];
  readonly slot: number;
}
function compile(spec: Spec): readonly Compiled[] {
  return fieldsOf(spec).map(([key, field]) => {
    const check = field.check;
    const nested = typeof check !== 'function';
    const kind = nested
      ? Kind.Object
      : check === isDigest
        ? Kind.Digest
        : check === isDigestOrNull
          ? Kind.DigestOrNull
          : check === isTimestamp
            ? Kind.Timestamp
            : check === isName
              ? Kind.Name
              : check === isText
                ? Kind.Text
                : Kind.Built;
    return {
      key: Buffer.from(`${key}":`),
      optional: field.optional === true,
      kind,
      check: nested ? () => false : check,
      inner: nested ? compile(check) : [],
      slot: Object.hasOwn(SLOTS, key) ? (SLOTS[key] as number) : -1,
    };
  });
}

/** No value: the scanner found something it does not decide. */
const NONE = Symbol('none');

/**
 * What later rules read of a line (`crossFieldProblem`, `chainFacts`), in one fixed-shape object:
 * every other field is checked and dropped. `prev` holds the offset of its value until the end.
 */
class Seen {
  type = '';
  seq = 0;
  parent_seq: number | undefined = undefined;
  prev: unknown = undefined;
  readonly refs: { phase: unknown; allowed: unknown; arguments: unknown; kind: unknown; method: unknown } = {
    phase: undefined,
    allowed: undefined,
    arguments: undefined,
    kind: undefined,
    method: undefined,
  };

  reset(): void {
    this.type = '';
    this.seq = 0;
    this.parent_seq = undefined;
    this.prev = undefined;
    this.refs.phase = undefined;
    this.refs.allowed = undefined;
    this.refs.arguments = undefined;
    this.refs.kind = undefined;
    this.refs.method = undefined;
  }

  record(slot: number, value: unknown): void {
    switch (slot) {
      case 0:
        this.type = value as string;
        break;
      case 1:
        this.seq = value as number;
        break;
      case 2:
        this.parent_seq = value as number;
        break;
      case 3:
        this.prev = value;
        break;
      case 4:
        this.refs.phase = value;
        break;
      case 5:
        this.refs.allowed = value;
        break;
      case 6:
        this.refs.arguments = value;
        break;
      case 7:
        this.refs.kind = value;
        break;
      case 8:
        this.refs.method = value;
        break;
    }
  }
}

/** One per thread, reset for each line: `scanLine` runs to its end before any other call. */
class Scanner {
  at = 0;
  bytes: Buffer = Buffer.alloc(0);
  readonly seen = new Seen();

  reset(bytes: Buffer): void {
    this.bytes = bytes;
    this.at = 0;
    this.seen.reset();
  }

  /**
   * An object of these fields in their order at `at`. Values the field checks need are built and
   * checked with those checks; names, texts, digests and timestamps are checked in place and
   * stand for the offset of their opening quote (only presence, or `prev`, is read later).
   */
  object(fields: readonly Compiled[]): boolean {
    const b = this.bytes;
    if (b[this.at] !== OPEN) return false;
    this.at += 1;
    let next = 0;
    for (let first = true; ; first = false) {
      if (b[this.at] === CLOSE) break;
      if (!first) {
        if (b[this.at] !== COMMA) return false;
        this.at += 1;
      }
      if (b[this.at] !== QUOTE) return false;
      this.at += 1;
      let i = next;
      // A key may only be one of the fields after the last one seen, skipping only optional ones:
      // this refuses unknown, missing, reordered and repeated keys in one rule.
      for (; i < fields.length; i++) {
        if (this.matches((fields[i] as Compiled).key)) break;
        if (!(fields[i] as Compiled).optional) return false;
      }
      if (i === fields.length) return false;
      const field = fields[i] as Compiled;
      this.at += field.key.length;
      if (field.kind === Kind.Object) {
        if (!this.object(field.inner)) return false;
      } else {
        const value = this.value(field);
        if (value === NONE) return false;
        if (field.slot >= 0) this.seen.record(field.slot, value);
      }
      next = i + 1;
    }
    this.at += 1;
    for (let i = next; i < fields.length; i++) if (!(fields[i] as Compiled).optional) return false;
    return true;
  }

  private matches(key: Buffer): boolean {
    const b = this.bytes;
    const at = this.at;
    for (let j = 0; j < key.length; j++) if (b[at + j] !== key[j]) return false;
    return true;
  }

  private value(field: Compiled): unknown {
    const start = this.at;
    switch (field.kind) {
      case Kind.Digest:
        return this.digest() ? start : NONE;
      case Kind.DigestOrNull:
        if (this.literal('null')) return null;
        return this.digest() ? start : NONE;
      case Kind.Timestamp:
        return this.timestamp() ? start : NONE;
      case Kind.Name:
      case Kind.Text: {
        const units = this.plainString(true);
        return units < 0 || units > AUDIT_STRING_MAX || (field.kind === Kind.Name && units === 0)
          ? NONE
          : start;
      }
      default: {
        const value = this.simple();
        return value !== NONE && field.check(value) ? value : NONE;
      }
    }
  }

  /**
   * A string in JSON.stringify's form, its length in UTF-16 code units (what `string.length`
   * counts), or -1. Bytes past ASCII are raw UTF-8, as JSON.stringify leaves every character but a
   * lone surrogate (never raw in valid UTF-8). With `escapes`, also the escapes it writes: `\"`,
   * `\\`, `\b \f \n \r \t`, and `\u00xx` in lower case for the other control characters; a
   * lone surrogate's `\udxxx` is left to the reference path (whether it is lone depends on its
   * neighbour). Without, no backslash at all: the value is then the bytes as they are.
   */
  private plainString(escapes: boolean): number {
    const b = this.bytes;
    if (b[this.at] !== QUOTE) return -1;
    let units = 0;
    for (let at = this.at + 1; at < b.length; at++) {
      const c = b[at] as number;
      if (c === QUOTE) {
        this.at = at + 1;
        return units;
      }
      if (c < 0x20) return -1;
      if (c === BACKSLASH) {
        const skip = escapes ? escapeLength(b, at) : 0;
        if (skip === 0) return -1;
        units += 1;
        at += skip - 1;
        continue;
      }
      // A lead byte starts a character; one of four bytes is beyond the BMP, a surrogate pair.
      if (c < 0x80) units += 1;
      else if (c >= 0xf0) units += 2;
      else if (c >= 0xc0) units += 1;
    }
    return -1;
  }

  private digest(): boolean {
    const b = this.bytes;
    const at = this.at;
    if (at + DIGEST_BYTES > b.length) return false;
    for (let j = 0; j < DIGEST_HEAD.length; j++) if (b[at + j] !== DIGEST_HEAD[j]) return false;
    const end = at + DIGEST_BYTES - 1;
    for (let j = at + DIGEST_HEAD.length; j < end; j++) if (HEX[b[j] as number] !== 1) return false;
    if (b[end] !== QUOTE) return false;
    this.at = end + 1;
    return true;
  }

  /**
   * `"YYYY-MM-DDTHH:mm:ss.sssZ"` with the ranges Date.parse accepts for that form (any day up to
   * 31 in any month; 24:00:00.000 as the end of a day), as `isTimestamp` requires.
   */
  private timestamp(): boolean {
    const b = this.bytes;
    const at = this.at;
    if (at + TIMESTAMP_BYTES > b.length || b[at] !== QUOTE || b[at + 25] !== QUOTE) return false;
    if (b[at + 5] !== 0x2d || b[at + 8] !== 0x2d || b[at + 11] !== 0x54) return false; // - - T
    if (b[at + 14] !== COLON || b[at + 17] !== COLON || b[at + 20] !== 0x2e || b[at + 24] !== 0x5a)
      return false; // : : . Z
    const year = digitsAt(b, at + 1, 4);
    const month = digitsAt(b, at + 6, 2);
    const day = digitsAt(b, at + 9, 2);
    const hour = digitsAt(b, at + 12, 2);
    const minute = digitsAt(b, at + 15, 2);
    const second = digitsAt(b, at + 18, 2);
    const milli = digitsAt(b, at + 21, 3);
    if (year < 0 || milli < 0 || month < 1 || month > 12 || day < 1 || day > 31) return false;
    const inDay = hour >= 0 && hour <= 23 && minute >= 0 && minute <= 59 && second >= 0 && second <= 59;
    if (!inDay && !(hour === 24 && minute === 0 && second === 0 && milli === 0)) return false;
    this.at = at + TIMESTAMP_BYTES;
    return true;
  }

  private literal(word: 'true' | 'false' | 'null'): boolean {
    const b = this.bytes;
    for (let j = 0; j < word.length; j++) if (b[this.at + j] !== word.charCodeAt(j)) return false;
    this.at += word.length;
    return true;
  }

  /**
   * A plain string, a non-negative integer as JSON.stringify writes it (no sign, no leading zero,
   * no fraction or exponent: what follows must be `,` or `}`, which the object checks), or a
   * literal; built, for a field check to judge.
   */
  private simple(): unknown {
    const b = this.bytes;
    const c = b[this.at];
    if (c === QUOTE) {
      const start = this.at + 1;
      if (this.plainString(false) < 0) return NONE;
      return b.toString('utf8', start, this.at - 1);
    }
    if (c === ZERO) {
      this.at += 1;
      return 0;
    }
    if (c !== undefined && c > ZERO && c <= NINE) {
      let n = 0;
      let at = this.at;
      for (; at < b.length && (b[at] as number) >= ZERO && (b[at] as number) <= NINE; at++) {
        n = n * 10 + ((b[at] as number) - ZERO);
      }
      // Up to 16 digits each step above is exact below 2^53, and a value at or above 2^53 can only
      // round to a double at or above it, which no integer check accepts; longer: the reference.
      if (at - this.at > 16) return NONE;
      this.at = at;
      return n;
    }
    if (this.literal('true')) return true;
    if (this.literal('false')) return false;
    if (this.literal('null')) return null;
    return NONE;
  }
}

/** Escapes JSON.stringify writes in a short form: `"` `\\` b f n r t. */
const SHORT_ESCAPES = new Uint8Array(256);
for (const c of Buffer.from('"\\bfnrt')) SHORT_ESCAPES[c] = 1;
/** Control characters JSON.stringify writes as `\u00xx`: those without a short form. */
const U_ESCAPES = new Uint8Array(0x20).fill(1);
for (const c of [0x08, 0x09, 0x0a, 0x0c, 0x0d]) U_ESCAPES[c] = 0;

/** The length of the escape at `at` (a backslash) if JSON.stringify writes it so, else 0. */
function escapeLength(b: Buffer, at: number): number {
  const e = b[at + 1] as number;
  if (SHORT_ESCAPES[e] === 1) return 2;
  if (e !== 0x75 || b[at + 2] !== ZERO || b[at + 3] !== ZERO) return 0; // \u00
  const high = b[at + 4] as number;
  const low = b[at + 5] as number;
  if ((high !== ZERO && high !== ZERO + 1) || HEX[low] !== 1) return 0;
  const code = (high - ZERO) * 16 + (low <= NINE ? low - ZERO : low - 0x61 + 10);
  return U_ESCAPES[code] === 1 ? 6 : 0;
}

/** The number written by `count` ASCII digits at `from`, or -1 if one of them is not a digit. */
function digitsAt(b: Buffer, from: number, count: number): number {
  let n = 0;
  for (let j = from; j < from + count; j++) {
    const c = b[j] as number;
    if (c < ZERO || c > NINE) return -1;
    n = n * 10 + (c - ZERO);
  }
  return n;
}

const scanner = new Scanner();

/**
 * What the chain needs of a line, when the line is certainly in ringfence's byte form and of a
 * valid shape; undefined when this scan does not decide (see the file's comment).
 */
export function scanLine(bytes: Buffer): ChainFacts | undefined {
  if (!isUtf8(bytes)) return undefined;
  const spec = specOf(bytes);
  if (!spec) return undefined;
  scanner.reset(bytes);
  if (!scanner.object(spec) || scanner.at !== bytes.length) return undefined;
  const { seen } = scanner;
  if (crossFieldProblem(seen)) return undefined;
  // `prev` passed the digest check in place; its offset is where its opening quote is.
  const at = seen.prev as number;
  const prev = bytes.toString('latin1', at + 1, at + DIGEST_BYTES - 1) as AuditDigest;
  return chainFacts({ type: seen.type, seq: seen.seq, parent_seq: seen.parent_seq, prev, refs: seen.refs });
}

/** Each type this version knows as the bytes `type"`, with its spec. */
const TYPES = AUDIT_TYPES.map((type) => ({
  bytes: Buffer.from(`${type}"`),
  fields: compile(entrySpec(type) as Spec),
}));

/**
 * The spec of the type named in a line of the form `{"seq":N,"ts":"…","type":"T",…`; the scan
 * that follows checks every byte of that form again, the type's value included.
 */
function specOf(bytes: Buffer): readonly Compiled[] | undefined {
  for (let j = 0; j < LINE_HEAD.length; j++) if (bytes[j] !== LINE_HEAD[j]) return undefined;
  let at = LINE_HEAD.length;
  while (at < bytes.length && (bytes[at] as number) >= ZERO && (bytes[at] as number) <= NINE) at++;
  const start = at + TYPE_AFTER_SEQ;
  next: for (const type of TYPES) {
    for (let j = 0; j < type.bytes.length; j++) if (bytes[start + j] !== type.bytes[j]) continue next;
    return type.fields;
  }
  return undefined;
}

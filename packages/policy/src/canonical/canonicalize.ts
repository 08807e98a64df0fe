import { createHash } from 'node:crypto';
import { RingfenceError } from '../errors.js';

/** Codes raised when a value has no RFC 8785 canonical form. */
export type CanonicalErrorCode = 'CANONICAL_UNSUPPORTED_VALUE';

/** A value that cannot be written as RFC 8785 canonical JSON (lone surrogate, NaN, cycle, …). */
export class CanonicalError extends RingfenceError<CanonicalErrorCode> {}

const encoder = new TextEncoder();

/**
 * Serialises `value` as RFC 8785 (JSON Canonicalization Scheme) text.
 *
 * Object members are ordered by their UTF-16 code units, numbers use the ECMAScript shortest
 * round-trip form, and strings use the minimal JSON escapes. Values without a single canonical
 * form are refused rather than coerced, because two parties must hash exactly the same bytes:
 * non-finite numbers, lone surrogates, `undefined`, functions, symbols, bigints, cycles and
 * objects that are not plain data.
 *
 * @throws {CanonicalError} `CANONICAL_UNSUPPORTED_VALUE` with the JSON Pointer of the bad value.
 */
export function canonicalize(value: unknown): string {
  const parts: string[] = [];
  write(value, parts, [], new Set());
  return parts.join('');
}

/** The UTF-8 bytes of {@link canonicalize}; these are the bytes that get signed and hashed. */
export function canonicalBytes(value: unknown): Uint8Array {
  return encoder.encode(canonicalize(value));
}

/** Lower-case hex SHA-256 of bytes, or of the UTF-8 encoding of a string. */
export function sha256Hex(data: Uint8Array | string): string {
  return createHash('sha256').update(data).digest('hex');
}

/**
 * `sha256:<hex>` of the canonical JSON of `value`: the fingerprint used for tool pins, policy
 * digests and audit references, so every package names the same content the same way.
 */
export function digestOf(value: unknown): `sha256:${string}` {
  return `sha256:${sha256Hex(canonicalBytes(value))}`;
}

function fail(path: readonly (string | number)[], what: string): never {
  const pointer = path.map((key) => `/${escapePointer(String(key))}`).join('');
  throw new CanonicalError(
    'CANONICAL_UNSUPPORTED_VALUE',
    `${what} at ${pointer === '' ? 'the top level' : pointer} has no canonical JSON form; ` +
      'remove it or replace it with a finite number, a well-formed string, an array or a plain object.',
  );
}

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

// The path is a stack rather than a string so the pointer is only built when something fails:
// canonicalising a large policy must not allocate a string per value.
function write(value: unknown, out: string[], pointer: (string | number)[], seen: Set<object>): void {
  switch (typeof value) {
    case 'string':
      out.push(quote(value, pointer));
      return;
    case 'number':
      if (!Number.isFinite(value)) fail(pointer, `the number ${value}`);
      // ECMAScript Number::toString is exactly the RFC 8785 number form; -0 serialises as 0.
      out.push(Object.is(value, -0) ? '0' : String(value));
      return;
    case 'boolean':
      out.push(value ? 'true' : 'false');
      return;
    case 'object':
      break;
    default:
      fail(pointer, `a value of type ${typeof value}`);
  }
  if (value === null) {
    out.push('null');
    return;
  }
  if (seen.has(value)) fail(pointer, 'a circular reference');
  seen.add(value);
  if (Array.isArray(value)) {
    out.push('[');
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out.push(',');
      pointer.push(i);
      if (!(i in value)) fail(pointer, 'an array hole');
      write(value[i], out, pointer, seen);
      pointer.pop();
    }
    out.push(']');
  } else {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) fail(pointer, 'an object that is not plain data');
    const record = value as Record<string, unknown>;
    // Default sort compares UTF-16 code units, which is what RFC 8785 section 3.2.3 asks for.
    const keys = Object.keys(record).sort();
    out.push('{');
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!;
      if (i > 0) out.push(',');
      out.push(quote(key, pointer), ':');
      pointer.push(key);
      write(record[key], out, pointer, seen);
      pointer.pop();
    }
    out.push('}');
  }
  seen.delete(value);
}

// In a `u` regex a valid surrogate pair is one code point, so this matches only lone halves.
const LONE_SURROGATE = /\p{Cs}/u;

// Printable ASCII other than `"` and `\` needs no escaping: the common case, done without a call.
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

function quote(text: string, pointer: readonly (string | number)[]): string {
  if (PLAIN.test(text)) return `"${text}"`;
  if (LONE_SURROGATE.test(text)) fail(pointer, 'a string with a lone surrogate');
  // JSON.stringify of a well-formed string uses exactly the RFC 8785 escapes (\b \t \n \f \r,
  // \" \\, \u00XX for other controls, everything else literal).
  return JSON.stringify(text);
}

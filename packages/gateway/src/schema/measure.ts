/**
 * Iterative measurement of JSON-like values: serialized size, nesting depth and JSON-ness, with
 * an explicit stack so that a 100k-deep value costs a loop, not the JavaScript call stack, and
 * with early exit so that the work is bounded by the cap rather than by the value.
 */

import { escapePointerToken } from '@ringfence/policy';

export type MeasureProblem =
  | { kind: 'size'; bytes: number }
  | { kind: 'depth'; pointer: string }
  | { kind: 'type'; pointer: string; what: string };

export type Measured = { ok: true; bytes: number } | ({ ok: false } & MeasureProblem);

/** UTF-8 size of `JSON.stringify(text)`; `remaining` lets huge strings be refused unread. */
export function stringBytes(text: string, remaining: number): number {
  // Every UTF-16 unit costs at least one UTF-8 byte, so a long string can be refused unserialised.
  if (text.length + 2 > remaining) return text.length + 2;
  // Printable ASCII other than `"` and `\` is written as it is: the common case, counted without
  // a serialised copy of the string.
  if (PLAIN_JSON.test(text)) return text.length + 2;
  return Buffer.byteLength(JSON.stringify(text));
}

const PLAIN_JSON = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

// In a `u` regex a valid surrogate pair is one code point, so this matches only lone halves.
const LONE_SURROGATE = /\p{Cs}/u;

export function wellFormed(text: string): boolean {
  return !LONE_SURROGATE.test(text);
}

/** Why a scalar is not JSON, or undefined when it is fine. `value` must not be an object. */
export function scalarProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
      return wellFormed(value) ? undefined : 'a string with a lone surrogate';
    case 'number':
      return Number.isFinite(value) ? undefined : `the number ${value}`;
    case 'boolean':
      return undefined;
    default:
      return value === null ? undefined : `a value of type ${typeof value}`;
  }
}

export function scalarBytes(value: unknown, remaining: number): number {
  if (typeof value === 'string') return stringBytes(value, remaining);
  if (typeof value === 'number') return Object.is(value, -0) ? 1 : String(value).length;
  if (typeof value === 'boolean') return value ? 4 : 5;
  return 4; // null
}

/** Plain JSON containers only: anything else has no agreed serialization. */
export function containerProblem(value: object): string | undefined {
  if (Array.isArray(value)) return undefined;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null ? undefined : 'an object that is not plain data';
}

interface Frame {
  value: unknown;
  depth: number;
  pointer: string;
}

/**
 * Measures `value` as JSON. Stops as soon as the size passes `maxBytes` or the nesting passes
 * `maxDepth`; refuses what JSON cannot carry (functions, `undefined`, NaN, lone surrogates,
 * class instances, array holes).
 */
export function measureValue(value: unknown, maxBytes: number, maxDepth: number): Measured {
  let bytes = 0;
  const stack: Frame[] = [{ value, depth: 0, pointer: '' }];
  while (stack.length > 0) {
    const { value: v, depth, pointer } = stack.pop() as Frame;
    if (typeof v !== 'object' || v === null) {
      const what = scalarProblem(v);
      if (what !== undefined) return { ok: false, kind: 'type', pointer, what };
      bytes += scalarBytes(v, maxBytes - bytes + 1);
      if (bytes > maxBytes) return { ok: false, kind: 'size', bytes };
      continue;
    }
    if (depth >= maxDepth) return { ok: false, kind: 'depth', pointer };
    const what = containerProblem(v);
    if (what !== undefined) return { ok: false, kind: 'type', pointer, what };
    if (Array.isArray(v)) {
      bytes += 2 + Math.max(0, v.length - 1);
      if (bytes > maxBytes) return { ok: false, kind: 'size', bytes };
      for (let i = v.length - 1; i >= 0; i--) {
        if (!(i in v)) return { ok: false, kind: 'type', pointer: `${pointer}/${i}`, what: 'an array hole' };
        stack.push({ value: v[i], depth: depth + 1, pointer: `${pointer}/${i}` });
      }
      continue;
    }
    const keys = Object.keys(v);
    bytes += 2 + Math.max(0, keys.length - 1);
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      if (!wellFormed(key)) return { ok: false, kind: 'type', pointer, what: 'a key with a lone surrogate' };
      bytes += stringBytes(key, maxBytes - bytes + 1) + 1;
      if (bytes > maxBytes) return { ok: false, kind: 'size', bytes };
      stack.push({
        value: (v as Record<string, unknown>)[key],
        depth: depth + 1,
        pointer: `${pointer}/${escapePointerToken(key)}`,
      });
    }
  }
  return { ok: true, bytes };
}

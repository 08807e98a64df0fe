/**
 * Sets of code points, and the ECMA-262 character classes as such sets. The pattern translator
 * (ecma-regex.ts) hands RE2 nothing but explicit ranges, so what a class means is decided here,
 * by ECMA-262, and never by RE2's own idea of `\s`, `.` or `\p{…}`.
 */

/** Sorted, disjoint, non-adjacent inclusive ranges, flattened: [lo0, hi0, lo1, hi1, …]. */
export type CharSet = readonly number[];

export const MAX_CODE_POINT = 0x10ffff;

/** Normalizes any list of inclusive [lo, hi] pairs (in any order, overlapping) into a CharSet. */
export function charSet(pairs: readonly number[]): CharSet {
  const ranges: [number, number][] = [];
  for (let i = 0; i + 1 < pairs.length; i += 2) ranges.push([pairs[i] as number, pairs[i + 1] as number]);
  ranges.sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [lo, hi] of ranges) {
    const last = out.length - 1;
    if (last > 0 && lo <= (out[last] as number) + 1) out[last] = Math.max(out[last] as number, hi);
    else out.push(lo, hi);
  }
  return out;
}

export function union(...sets: readonly CharSet[]): CharSet {
  return charSet(sets.flat());
}

const complements = new WeakMap<CharSet, CharSet>();

/** Every code point not in the set, lone surrogates included (what `u`-mode input can hold). */
export function complement(set: CharSet): CharSet {
  const known = complements.get(set);
  if (known !== undefined) return known;
  const out: number[] = [];
  let next = 0;
  for (let i = 0; i < set.length; i += 2) {
    const lo = set[i] as number;
    if (lo > next) out.push(next, lo - 1);
    next = (set[i + 1] as number) + 1;
  }
  if (next <= MAX_CODE_POINT) out.push(next, MAX_CODE_POINT);
  complements.set(set, out);
  return out;
}

export function contains(set: CharSet, codePoint: number): boolean {
  for (let i = 0; i < set.length; i += 2) {
    if (codePoint < (set[i] as number)) return false;
    if (codePoint <= (set[i + 1] as number)) return true;
  }
  return false;
}

/** ECMA-262 LineTerminator: what `.` does not match. */
export const LINE_TERMINATORS = charSet([0x0a, 0x0a, 0x0d, 0x0d, 0x2028, 0x2029]);

/**
 * ECMA-262 `\s`: WhiteSpace (TAB, VT, FF, ZWNBSP U+FEFF, and every Zs code point) plus
 * LineTerminator. Zs is fixed since Unicode 6.3 (U+180E left it); a test compares this set with
 * Node's own `\s` over every code point, so a change in Node's tables fails loudly.
 */
export const SPACE = charSet([
  0x09, 0x0d, 0x20, 0x20, 0xa0, 0xa0, 0x1680, 0x1680, 0x2000, 0x200a, 0x2028, 0x2029, 0x202f, 0x202f, 0x205f,
  0x205f, 0x3000, 0x3000, 0xfeff, 0xfeff,
]);

/** `\d` and `\w` are ASCII in ECMA-262 (no `i` flag, so no ſ/K case-folding extension). */
export const DIGIT = charSet([0x30, 0x39]);
export const WORD = charSet([0x30, 0x39, 0x41, 0x5a, 0x5f, 0x5f, 0x61, 0x7a]);

export const ANY = charSet([0, MAX_CODE_POINT]);
export const DOT = complement(LINE_TERMINATORS);

/** Property sets already enumerated in this thread; bounded, the oldest dropped first. */
const properties = new Map<string, CharSet>();
const PROPERTY_CACHE = 128;

/**
 * The code points of `\p{expression}` as this Node's RegExp sees them, or undefined when Node
 * does not know the property. Enumerating (about 60 ms) rather than using RE2's own tables keeps
 * the Unicode version and the property names exactly those of `new RegExp(p, 'u')`, which is what
 * a JavaScript validator would run. `expression` must already be restricted to property-name
 * characters ([A-Za-z0-9_=]) by the caller, so it cannot change the shape of the probe.
 */
export function propertySet(expression: string): CharSet | undefined {
  const known = properties.get(expression);
  if (known !== undefined) return known;
  let probe: RegExp;
  try {
    // A single property escape, anchored on a one-code-point string: no backtracking possible.
    probe = new RegExp(`^\\p{${expression}}$`, 'u');
  } catch {
    return undefined;
  }
  const out: number[] = [];
  let start = -1;
  for (let cp = 0; cp <= MAX_CODE_POINT; cp++) {
    const member = probe.test(String.fromCodePoint(cp));
    if (member && start < 0) start = cp;
    else if (!member && start >= 0) {
      out.push(start, cp - 1);
      start = -1;
    }
  }
  if (start >= 0) out.push(start, MAX_CODE_POINT);
  if (properties.size >= PROPERTY_CACHE) properties.delete(properties.keys().next().value as string);
  properties.set(expression, out);
  return out;
}

/** ASCII punctuation: RE2 reads a backslash before any of it as that character, in or out of a class. */
const PUNCTUATION = /^[!-/:-@[-`{-~]$/;

/**
 * One code point in RE2 syntax that RE2 can only read as that code point: ASCII letters and
 * digits and most non-ASCII characters as themselves (short text is what makes RE2 parse fast),
 * ASCII punctuation backslash-escaped, controls, line separators and surrogates as hex escapes
 * (two adjacent raw surrogates would be read as one astral character).
 */
export function re2Char(codePoint: number): string {
  if (
    (codePoint >= 0x30 && codePoint <= 0x39) ||
    (codePoint >= 0x41 && codePoint <= 0x5a) ||
    (codePoint >= 0x61 && codePoint <= 0x7a) ||
    (codePoint > 0xa0 && codePoint < 0x2028) ||
    (codePoint > 0x2029 && codePoint < 0xd800) ||
    (codePoint > 0xdfff && codePoint <= MAX_CODE_POINT)
  ) {
    return String.fromCodePoint(codePoint);
  }
  if (codePoint < 0x80 && PUNCTUATION.test(String.fromCharCode(codePoint))) {
    return `\\${String.fromCharCode(codePoint)}`;
  }
  return codePoint < 0x100
    ? `\\x${codePoint.toString(16).padStart(2, '0')}`
    : `\\x{${codePoint.toString(16)}}`;
}

const classes = new WeakMap<CharSet, string>();

/**
 * RE2 syntax for exactly this set, each bound written by `re2Char`. An empty set
 * becomes a class RE2 accepts and nothing matches. Shared sets (class escapes, properties) are
 * written once: the text is most of what RE2 has to parse.
 */
export function re2Class(set: CharSet): string {
  const known = classes.get(set);
  if (known !== undefined) return known;
  let text: string;
  if (set.length === 0) text = `[^${re2Char(0)}-${re2Char(MAX_CODE_POINT)}]`;
  else if (set.length === 2 && set[0] === set[1]) text = re2Char(set[0] as number);
  else {
    text = '[';
    for (let i = 0; i < set.length; i += 2) {
      const lo = set[i] as number;
      const hi = set[i + 1] as number;
      text += lo === hi ? re2Char(lo) : `${re2Char(lo)}-${re2Char(hi)}`;
    }
    text += ']';
  }
  classes.set(set, text);
  return text;
}

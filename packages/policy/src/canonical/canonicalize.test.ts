import { describe, expect, it } from 'vitest';
import { parseStrictJson } from '../json/strict.js';
import { forAll, json, shuffleKeys } from '../testing/property.js';
import { CanonicalError, canonicalBytes, canonicalize, digestOf, sha256Hex } from './canonicalize.js';

describe('canonicalize (RFC 8785)', () => {
  it('orders members by UTF-16 code units, as in the RFC sorting example', () => {
    const value = {
      '\u20ac': 'Euro Sign',
      '\r': 'Carriage Return',
      '\ufb33': 'Hebrew Letter Dalet With Dagesh',
      '1': 'One',
      '\ud83d\ude00': 'Emoji: Grinning Face',
      '\u0080': 'Control',
      '\u00f6': 'Latin Small Letter O With Diaeresis',
    };
    // Read the order from the text: Object.keys would move the integer-like "1" first.
    const keys = [...canonicalize(value).matchAll(/"([^"]*)":/g)].map(
      (m) => JSON.parse(`"${m[1]}"`) as string,
    );
    expect(keys).toEqual(['\r', '1', '\u0080', '\u00f6', '\u20ac', '\ud83d\ude00', '\ufb33']);
  });

  it('writes numbers in the ECMAScript shortest form (RFC 8785 appendix values)', () => {
    const cases: [number, string][] = [
      [0, '0'],
      [-0, '0'],
      [1e21, '1e+21'],
      [1e-7, '1e-7'],
      [Number('333333333.33333329'), '333333333.3333333'],
      [4.5, '4.5'],
      [0.002, '0.002'],
      [1e30, '1e+30'],
      [5e-324, '5e-324'],
      [1.7976931348623157e308, '1.7976931348623157e+308'],
      [9007199254740992, '9007199254740992'],
      [-1.5e-10, '-1.5e-10'],
    ];
    for (const [n, text] of cases) expect(canonicalize(n)).toBe(text);
  });

  it('matches the RFC 8785 section 3.2.2 example', () => {
    const input =
      '{"numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001], "string": "\\u20ac$\\u000F\\u000aA\'\\u0042\\u0022\\u005c\\\\\\"\\/", "literals": [null, true, false]}';
    expect(canonicalize(parseStrictJson(input))).toBe(
      '{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\\u000f\\nA\'B\\"\\\\\\\\\\"/"}',
    );
  });

  it('escapes only what JSON requires, with lower-case hex', () => {
    expect(canonicalize('\u0000\u001f\b\t\n\f\r"\\/\u2028é😀')).toBe(
      '"\\u0000\\u001f\\b\\t\\n\\f\\r\\"\\\\/\u2028é😀"',
    );
  });

  it.each([
    ['NaN', Number.NaN],
    ['Infinity', Number.POSITIVE_INFINITY],
    ['a lone high surrogate', '\ud800'],
    ['a lone low surrogate in a key', { '\udc00': 1 }],
    ['undefined', { a: undefined }],
    ['a function', () => 1],
    ['a bigint', 1n],
    ['a Date', new Date(0)],
    ['a Map', new Map()],
    ['an array hole', new Array(3)],
  ])('refuses %s', (_name, value) => {
    expect(() => canonicalize(value)).toThrow(CanonicalError);
  });

  it('refuses cycles but accepts shared (acyclic) references', () => {
    const shared = { x: 1 };
    expect(canonicalize({ a: shared, b: shared })).toBe('{"a":{"x":1},"b":{"x":1}}');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    expect(() => canonicalize(cyclic)).toThrow(/circular/);
  });

  it('names where the bad value is', () => {
    expect(() => canonicalize({ a: [1, { 'b/c': Number.NaN }] })).toThrow('/a/1/b~1c');
  });

  it('digests the canonical bytes', () => {
    expect(digestOf({ b: 1, a: 2 })).toBe(`sha256:${sha256Hex('{"a":2,"b":1}')}`);
    expect(sha256Hex('')).toBe('e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
    expect(new TextDecoder().decode(canonicalBytes({ e: '€' }))).toBe('{"e":"€"}');
  });

  it('property: parse ∘ canonicalize is stable (canonical text is a fixed point)', () => {
    forAll(
      500,
      (r) => json(r, 4),
      (value) => {
        const once = canonicalize(value);
        expect(canonicalize(parseStrictJson(once))).toBe(once);
        expect(canonicalize(JSON.parse(once))).toBe(once);
      },
    );
  });

  it('property: member order does not change the canonical form or the digest', () => {
    forAll(
      500,
      (r) => json(r, 4),
      (value, r) => {
        const shuffled = shuffleKeys(value, r);
        expect(canonicalize(shuffled)).toBe(canonicalize(value));
        expect(digestOf(shuffled)).toBe(digestOf(value));
      },
    );
  });

  it('property: canonical text parses back to the same JSON value', () => {
    forAll(
      300,
      (r) => json(r, 4),
      (value) => {
        expect(JSON.parse(canonicalize(value))).toEqual(JSON.parse(JSON.stringify(value)));
      },
    );
  });
});

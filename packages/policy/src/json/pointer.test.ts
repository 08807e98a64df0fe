import { describe, expect, it } from 'vitest';
import { forAll, json } from '../testing/property.js';
import { escapePointerToken, MISSING, resolvePointer } from './pointer.js';

/** Every location in a JSON value, as [pointer, value], built with escapePointerToken. */
function locations(value: unknown, at = ''): [string, unknown][] {
  const out: [string, unknown][] = [[at, value]];
  if (typeof value !== 'object' || value === null) return out;
  for (const [key, child] of Object.entries(value))
    out.push(...locations(child, `${at}/${escapePointerToken(key)}`));
  return out;
}

describe('resolvePointer', () => {
  it('undoes ~1 before ~0, so "~01" names the key "~1" and not "/"', () => {
    const document = { '~1': 'tilde-one', '/': 'slash', 'a/b': { 'c~d': 7 } };
    expect(resolvePointer(document, '/~01')).toBe('tilde-one');
    expect(resolvePointer(document, '/~1')).toBe('slash');
    expect(resolvePointer(document, '/a~1b/c~0d')).toBe(7);
  });

  it('reads arrays by plain decimal index within bounds only', () => {
    const document = { list: ['a', 'b'] };
    expect(resolvePointer(document, '/list/1')).toBe('b');
    expect(resolvePointer(document, '/list/2')).toBe(MISSING);
    expect(resolvePointer(document, '/list/01')).toBe(MISSING);
    expect(resolvePointer(document, '/list/-')).toBe(MISSING);
    expect(resolvePointer(document, '/list/length')).toBe(MISSING);
    expect(resolvePointer(document, '/list/ 1')).toBe(MISSING);
  });

  it('never reads inherited members through prototype-named keys', () => {
    for (const key of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf'])
      expect(resolvePointer({ a: 1 }, `/${key}`)).toBe(MISSING);
    const own = JSON.parse('{"__proto__": {"x": 1}, "constructor": 2}') as unknown;
    expect(resolvePointer(own, '/__proto__/x')).toBe(1);
    expect(resolvePointer(own, '/constructor')).toBe(2);
  });

  it('takes "" as the whole document and refuses pointers without a leading "/"', () => {
    expect(resolvePointer('x', '')).toBe('x');
    expect(resolvePointer({ a: 1 }, 'a')).toBe(MISSING);
    expect(resolvePointer({ a: 1 }, '/a/b')).toBe(MISSING);
    expect(resolvePointer({ '': { '': null } }, '//')).toBeNull();
  });

  it('percent-decodes each token of a URI fragment, before the ~ escapes', () => {
    const document = { 'a b': { '%': 1, 'x/y': 2 } };
    expect(resolvePointer(document, '/a%20b/%25', { uriFragment: true })).toBe(1);
    expect(resolvePointer(document, '/a%20b/x~1y', { uriFragment: true })).toBe(2);
    // %2F decodes inside its token: it names the key "x/y", it does not split the pointer.
    expect(resolvePointer(document, '/a%20b/x%2Fy', { uriFragment: true })).toBe(2);
    expect(resolvePointer(document, '/a%20b/%25')).toBe(MISSING);
    expect(resolvePointer(document, '/a%2', { uriFragment: true })).toBe(MISSING);
  });

  it('finds every location of any JSON value by the pointer escapePointerToken builds', () => {
    forAll(300, json, (value) => {
      for (const [pointer, expected] of locations({ '~/': value, 'a~1': [value] })) {
        expect(resolvePointer({ '~/': value, 'a~1': [value] }, pointer)).toEqual(expected);
      }
    });
  });
});

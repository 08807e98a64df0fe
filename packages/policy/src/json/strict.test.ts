import { describe, expect, it } from 'vitest';
import { forAll, json } from '../testing/property.js';
import { JsonError, parseStrictJson } from './strict.js';

function codeOf(text: string): string | undefined {
  try {
    parseStrictJson(text);
    return undefined;
  } catch (error) {
    expect(error).toBeInstanceOf(JsonError);
    return (error as JsonError).code;
  }
}

describe('parseStrictJson', () => {
  it('reads ordinary JSON like JSON.parse', () => {
    const text = '{"a":[1,-2.5e3,true,false,null,"x\\u00e9\\n"],"b":{"c":{}} , "d": [] }';
    expect(parseStrictJson(text)).toEqual(JSON.parse(text));
  });

  it('refuses duplicate keys, including ones spelt differently with escapes', () => {
    expect(codeOf('{"a":1,"a":2}')).toBe('JSON_DUPLICATE_KEY');
    expect(codeOf('{"a":1,"\\u0061":2}')).toBe('JSON_DUPLICATE_KEY');
    expect(codeOf('{"x":{"version":1,"version":9}}')).toBe('JSON_DUPLICATE_KEY');
    expect(codeOf('[{"a":1},{"a":1}]')).toBeUndefined();
  });

  it('refuses __proto__ members however they are written', () => {
    expect(codeOf('{"__proto__":{"admin":true}}')).toBe('JSON_FORBIDDEN_KEY');
    expect(codeOf('{"a":{"\\u005f_proto__":1}}')).toBe('JSON_FORBIDDEN_KEY');
    expect(({} as Record<string, unknown>).admin).toBeUndefined();
  });

  it('refuses lone surrogates, raw or escaped', () => {
    expect(codeOf('"\\ud800"')).toBe('JSON_SYNTAX');
    expect(codeOf('{"\\udc00":1}')).toBe('JSON_SYNTAX');
    expect(codeOf('"\\ud83d\\ude00"')).toBeUndefined();
  });

  it.each([
    ['a trailing comma', '[1,]'],
    ['a trailing comma in an object', '{"a":1,}'],
    ['a comment', '{"a":1 /* c */}'],
    ['a BOM', '\ufeff{}'],
    ['single quotes', "{'a':1}"],
    ['a leading zero', '01'],
    ['a bare decimal point', '1.'],
    ['NaN', 'NaN'],
    ['a number out of range', '1e400'],
    ['a raw control character', '"a\u0001"'],
    ['a bad escape', '"\\x41"'],
    ['two values', '{} {}'],
    ['nothing', ''],
    ['an unterminated string', '"abc'],
    ['a truncated literal', 'tru'],
  ])('refuses %s', (_name, text) => {
    expect(codeOf(text)).toBe('JSON_SYNTAX');
  });

  it('limits nesting depth instead of overflowing the stack', () => {
    expect(codeOf('['.repeat(300) + ']'.repeat(300))).toBe('JSON_TOO_DEEP');
    expect(codeOf('['.repeat(100) + ']'.repeat(100))).toBeUndefined();
    expect(() => parseStrictJson('['.repeat(100000))).toThrow(JsonError);
  });

  it('reports line and column', () => {
    expect(() => parseStrictJson('{\n  "a": 1,\n  "a": 2\n}', { source: 'x.json' })).toThrow('x.json:3:3');
  });

  it('property: agrees with JSON.parse on documents without duplicates', () => {
    forAll(
      500,
      (r) => JSON.stringify(json(r, 5), null, r() < 0.5 ? 2 : undefined),
      (text) => {
        expect(parseStrictJson(text)).toEqual(JSON.parse(text));
      },
    );
  });
});

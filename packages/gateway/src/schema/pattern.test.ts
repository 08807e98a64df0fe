/**
 * `pattern`, `patternProperties` and `propertyNames` mean what ECMA-262 (`u` flag) says, through
 * the real guard: vetting, the worker, ajv, the unknown-argument rule. The first cases are issue
 * 11's finding: RE2's own `\S` and `.` let whitespace and line terminators through.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaGuard } from './guard.js';

const guard = new SchemaGuard();
beforeAll(() => guard.warmUp(), 60_000);
afterAll(() => guard.close());

const withPattern = (pattern: string, draft07 = false) => ({
  ...(draft07 ? { $schema: 'http://json-schema.org/draft-07/schema#' } : {}),
  type: 'object',
  properties: { v: { type: 'string', pattern } },
});

describe('pattern keeps its ECMA-262 meaning (issue 11, finding 4)', () => {
  const token = withPattern('^\\S+$');
  const line = withPattern('^.*$');

  it.each([
    ['U+00A0 no-break space', 'abc\u00a0def'],
    ['U+2028 line separator', 'abc\u2028def'],
    ['U+FEFF zero-width no-break space', 'abc\ufeffdef'],
  ])('^\\S+$ refuses %s', async (_name, value) => {
    expect(await guard.checkArguments(token, { v: value })).toMatchObject({
      ok: false,
      code: 'ARGUMENTS_INVALID',
      message: 'argument /v: must match pattern "^\\S+$"',
    });
  });

  it.each([
    ['\\r', 'abc\rdef'],
    ['U+2028', 'abc\u2028def'],
  ])('^.*$ refuses %s', async (_name, value) => {
    expect(await guard.checkArguments(line, { v: value })).toMatchObject({
      ok: false,
      code: 'ARGUMENTS_INVALID',
    });
  });

  it('the same patterns still accept what ECMA-262 accepts', async () => {
    expect(await guard.checkArguments(token, { v: 'abc-DEF_123😀' })).toEqual({ ok: true });
    expect(await guard.checkArguments(line, { v: 'abc def\t😀' })).toEqual({ ok: true });
    expect(await guard.checkArguments(line, { v: '' })).toEqual({ ok: true });
  });

  it('draft-07 schemas get the same meaning', async () => {
    const schema = withPattern('^\\S+$', true);
    expect(await guard.checkArguments(schema, { v: 'a\u00a0b' })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    expect(await guard.checkArguments(schema, { v: 'ab' })).toEqual({ ok: true });
  });

  it('$ is the end of the input, never before a final newline; \\d is ASCII only', async () => {
    expect(await guard.checkArguments(withPattern('^[a-z]+$'), { v: 'abc\n' })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    expect(await guard.checkArguments(withPattern('^\\d+$'), { v: '12\u0663' })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    expect(await guard.checkArguments(withPattern('^\\w+$'), { v: 'caf\u00e9' })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
  });

  it('an astral character is one code point, as for RegExp with the u flag', async () => {
    expect(await guard.checkArguments(withPattern('^.$'), { v: '😀' })).toEqual({ ok: true });
    expect(await guard.checkArguments(withPattern('^..$'), { v: '😀' })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    expect(await guard.checkArguments(withPattern('^[^a]$'), { v: '😀' })).toEqual({ ok: true });
  });

  it('patternProperties keys declare names with ECMA-262 meaning (the unknown-argument rule)', async () => {
    const schema = { type: 'object', patternProperties: { '^\\S+$': { type: 'string' } } };
    expect(await guard.checkArguments(schema, { plain: 'x' })).toEqual({ ok: true });
    expect(await guard.checkArguments(schema, { 'sneaky\u00a0name': 'x' })).toMatchObject({
      ok: false,
      code: 'ARGUMENTS_UNKNOWN',
    });
  });

  it('propertyNames patterns have ECMA-262 meaning', async () => {
    const schema = {
      type: 'object',
      properties: { inner: { type: 'object', propertyNames: { pattern: '^.+$' } } },
    };
    expect(await guard.checkArguments(schema, { inner: { ok: 1 } })).toEqual({ ok: true });
    expect(await guard.checkArguments(schema, { inner: { 'a\u2028b': 1 } })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
  });
});

describe('patterns that cannot keep their meaning are refused at prepare', () => {
  const linear = 'which cannot be checked in linear time with ECMA-262 meaning';
  it.each([
    ['^(a+)\\1$', `uses a backreference "\\1", ${linear}`],
    ['^(?!admin$)', `uses a negative lookahead "(?!…)", ${linear}`],
    // RE2 spellings that are not ECMA-262: a JavaScript validator would not compile them either.
    ['(?i)^admin$', 'is not a valid ECMA-262 regular expression (u flag): an unknown group "(?i"'],
    ['^[[:alpha:]]+$', 'is not a valid ECMA-262 regular expression (u flag): a lone "]"'],
  ])('%s', async (pattern, why) => {
    expect(await guard.prepare(withPattern(pattern))).toEqual({
      ok: false,
      code: 'SCHEMA_PATTERN',
      message: `pattern ${JSON.stringify(pattern)} ${why}`,
    });
    // A call against the schema gets the same refusal; nothing is checked with another meaning.
    expect(await guard.checkArguments(withPattern(pattern), { v: 'admin' })).toMatchObject({
      code: 'SCHEMA_PATTERN',
    });
  });
});

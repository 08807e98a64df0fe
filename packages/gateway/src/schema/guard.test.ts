import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaGuard } from './guard.js';
import { passThroughJsonSchemaValidator } from './sdk-validator.js';

const guard = new SchemaGuard();
beforeAll(() => guard.warmUp(), 60_000);
afterAll(() => guard.close());

const search = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1 },
    limit: { type: 'integer', minimum: 1, maximum: 100 },
    filters: {
      type: 'object',
      properties: { tag: { type: 'string', pattern: '^[a-z]+$' } },
    },
  },
  required: ['query'],
};

describe('SchemaGuard: arguments', () => {
  it('accepts valid arguments (2020-12, the default)', async () => {
    expect(await guard.prepare(search)).toMatchObject({
      ok: true,
      digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
    });
    expect(
      await guard.checkArguments(search, { query: 'ringfence', limit: 5, filters: { tag: 'mcp' } }),
    ).toEqual({
      ok: true,
    });
  });

  it('accepts valid arguments under draft-07, with draft-07 semantics', async () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      definitions: {
        pair: { type: 'array', items: [{ type: 'string' }, { type: 'number' }], additionalItems: false },
      },
      properties: { pair: { $ref: '#/definitions/pair' } },
    };
    expect(await guard.prepare(schema)).toMatchObject({ ok: true });
    expect(await guard.checkArguments(schema, { pair: ['a', 1] })).toEqual({ ok: true });
    // Tuple `items` and `additionalItems` only mean this in draft-07.
    expect(await guard.checkArguments(schema, { pair: ['a', 1, 2] })).toMatchObject({
      ok: false,
      code: 'ARGUMENTS_INVALID',
    });
  });

  it('resolves local anchors: 2020-12 $dynamicRef trees and draft-07 "#name" ids', async () => {
    const tree = {
      $dynamicAnchor: 'node',
      type: 'object',
      properties: { children: { type: 'array', items: { $dynamicRef: '#node' } } },
    };
    expect(await guard.prepare(tree)).toMatchObject({ ok: true });
    expect(await guard.checkArguments(tree, { children: [{ children: [] }] })).toEqual({ ok: true });
    expect(await guard.checkArguments(tree, { children: [{ children: 'no' }] })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    const draft7 = {
      $schema: 'http://json-schema.org/draft-07/schema',
      definitions: { s: { $id: '#str', type: 'string' } },
      type: 'object',
      properties: { a: { $ref: '#str' } },
    };
    expect(await guard.checkArguments(draft7, { a: 'x' })).toEqual({ ok: true });
    expect(await guard.checkArguments(draft7, { a: 1 })).toMatchObject({ code: 'ARGUMENTS_INVALID' });
  });

  it('refuses type errors and missing required arguments, naming the property', async () => {
    const wrongType = await guard.checkArguments(search, { query: 'x', limit: 'five' });
    expect(wrongType).toMatchObject({ ok: false, code: 'ARGUMENTS_INVALID' });
    expect(wrongType.ok || wrongType.message).toContain('/limit');
    expect(wrongType.ok || wrongType.message).toContain('integer');
    const missing = await guard.checkArguments(search, { limit: 3 });
    expect(missing).toMatchObject({ ok: false, code: 'ARGUMENTS_INVALID' });
    expect(missing.ok || missing.message).toContain("'query'");
    const nested = await guard.checkArguments(search, { query: 'x', filters: { tag: 'UPPER' } });
    expect(nested.ok || nested.message).toContain('/filters/tag');
  });

  it('refuses unknown top-level arguments though the schema does not say additionalProperties: false', async () => {
    const verdict = await guard.checkArguments(search, { query: 'x', exfiltrate: 'secret' });
    expect(verdict).toMatchObject({ ok: false, code: 'ARGUMENTS_UNKNOWN' });
    expect(verdict.ok || verdict.message).toContain('"exfiltrate"');
    // Names matched by patternProperties are declared; an explicit open schema allows any name.
    const patterned = {
      type: 'object',
      properties: { a: {} },
      patternProperties: { '^x-[a-z]+$': { type: 'string' } },
    };
    expect(await guard.checkArguments(patterned, { a: 1, 'x-trace': 'id' })).toEqual({ ok: true });
    expect(await guard.checkArguments(patterned, { a: 1, 'y-trace': 'id' })).toMatchObject({
      code: 'ARGUMENTS_UNKNOWN',
    });
    const open = { type: 'object', additionalProperties: { type: 'string' } };
    expect(await guard.checkArguments(open, { anything: 'goes' })).toEqual({ ok: true });
    expect(await guard.checkArguments(open, { anything: 1 })).toMatchObject({ code: 'ARGUMENTS_INVALID' });
    // A tool without parameters takes none.
    expect(await guard.checkArguments({ type: 'object' }, { surprise: true })).toMatchObject({
      code: 'ARGUMENTS_UNKNOWN',
    });
    expect(await guard.checkArguments({ type: 'object' }, undefined)).toEqual({ ok: true });
  });

  it('refuses arguments that are not an object, not JSON, too deep or too large', async () => {
    expect(await guard.checkArguments(search, ['x'])).toMatchObject({ code: 'ARGUMENTS_INVALID' });
    expect(await guard.checkArguments(search, 'x')).toMatchObject({ code: 'ARGUMENTS_INVALID' });
    expect(await guard.checkArguments(search, { query: 'x', limit: Number.POSITIVE_INFINITY })).toMatchObject(
      {
        code: 'ARGUMENTS_INVALID',
      },
    );
    let deep: unknown = {};
    for (let i = 0; i < 100_000; i++) deep = { tag: deep };
    expect(await guard.checkArguments(search, { query: 'x', filters: deep })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    expect(await guard.checkArguments(search, { query: 'x'.repeat(1024 * 1024) })).toMatchObject({
      code: 'ARGUMENTS_TOO_LARGE',
    });
  });

  it('answers a vetting failure with the schema reason instead of checking', async () => {
    const verdict = await guard.checkArguments({ $ref: 'https://evil.example/s.json' }, {});
    expect(verdict).toMatchObject({ ok: false, code: 'SCHEMA_REMOTE_REF' });
  });

  it('refuses patterns RE2 cannot run (backreferences, lookaround) at prepare', async () => {
    expect(await guard.prepare({ type: 'string', pattern: '^(a)\\1$' })).toMatchObject({
      code: 'SCHEMA_PATTERN',
    });
    expect(await guard.prepare({ type: 'string', pattern: '^(?!admin)' })).toMatchObject({
      code: 'SCHEMA_PATTERN',
    });
    expect(await guard.prepare({ patternProperties: { '(?<=x)y': true } })).toMatchObject({
      code: 'SCHEMA_PATTERN',
    });
    expect(await guard.prepare({ propertyNames: { pattern: '(x)\\1' } })).toMatchObject({
      code: 'SCHEMA_PATTERN',
    });
    // Ordinary ECMA-262 spellings still work: classes, \d, \p{…}, named groups, \u escapes.
    const ok = { type: 'string', pattern: '^(?<word>[\\p{L}\\d_-]+)\\u0021?$' };
    expect(await guard.prepare(ok)).toMatchObject({ ok: true });
    expect(await guard.checkArguments({ type: 'object', properties: { w: ok } }, { w: 'héllo_1!' })).toEqual({
      ok: true,
    });
  });

  it('refuses schemas ajv itself rejects, with SCHEMA_INVALID', async () => {
    expect(await guard.prepare({ type: 'strng' })).toMatchObject({ code: 'SCHEMA_INVALID' });
    expect(await guard.prepare({ required: 'name' })).toMatchObject({ code: 'SCHEMA_INVALID' });
  });

  it('keeps validators apart by content, not by object identity', async () => {
    const a = { type: 'object', properties: { n: { type: 'string' } } };
    const b = { type: 'object', properties: { n: { type: 'number' } } };
    expect(await guard.checkArguments(a, { n: 'x' })).toEqual({ ok: true });
    expect(await guard.checkArguments(b, { n: 'x' })).toMatchObject({ code: 'ARGUMENTS_INVALID' });
    expect(await guard.checkArguments(structuredClone(a), { n: 'x' })).toEqual({ ok: true });
  });
});

describe('SchemaGuard: results', () => {
  const output = {
    type: 'object',
    properties: { count: { type: 'integer' }, items: { type: 'array', items: { type: 'string' } } },
    required: ['count'],
  };

  it('accepts structuredContent valid against the output schema', async () => {
    const result = {
      content: [{ type: 'text', text: '{"count":1}' }],
      structuredContent: { count: 1, items: ['a'] },
    };
    expect(await guard.checkResult(output, result)).toEqual({ ok: true });
  });

  it('refuses a missing structuredContent when an output schema is declared', async () => {
    expect(await guard.checkResult(output, { content: [{ type: 'text', text: 'hi' }] })).toMatchObject({
      code: 'RESULT_MISSING_STRUCTURED',
    });
  });

  it('refuses structuredContent that breaks the output schema, naming where', async () => {
    const verdict = await guard.checkResult(output, {
      content: [],
      structuredContent: { count: 1, items: [3] },
    });
    expect(verdict).toMatchObject({ ok: false, code: 'RESULT_INVALID' });
    expect(verdict.ok || verdict.message).toContain('/items/0');
  });

  it('skips the structured check for isError results', async () => {
    expect(
      await guard.checkResult(output, { isError: true, content: [{ type: 'text', text: 'boom' }] }),
    ).toEqual({
      ok: true,
    });
  });

  it('without an output schema, only caps the size', async () => {
    expect(await guard.checkResult(undefined, { content: [{ type: 'text', text: 'x' }] })).toEqual({
      ok: true,
    });
    const big = { content: [{ type: 'text', text: 'x'.repeat(1024 * 1024) }] };
    expect(await guard.checkResult(undefined, big)).toMatchObject({ code: 'RESULT_TOO_LARGE' });
    expect(await guard.checkResult(output, { ...big, isError: true })).toMatchObject({
      code: 'RESULT_TOO_LARGE',
    });
  });

  it('takes the result cap from the limits', async () => {
    const small = new SchemaGuard({ limits: { maxResultBytes: 64 } });
    try {
      expect(await small.checkResult(undefined, { content: [{ type: 'text', text: 'short' }] })).toEqual({
        ok: true,
      });
      expect(
        await small.checkResult(undefined, { content: [{ type: 'text', text: 'x'.repeat(64) }] }),
      ).toMatchObject({
        code: 'RESULT_TOO_LARGE',
      });
    } finally {
      await small.close();
    }
  });
});

describe('SchemaGuard: lifecycle', () => {
  it('answers SCHEMA_GUARD_CLOSED after close, and never throws', async () => {
    const g = new SchemaGuard({ workers: 1 });
    expect(await g.checkArguments({ type: 'object' }, {})).toEqual({ ok: true });
    await g.close();
    expect(await g.checkArguments({ type: 'object' }, {})).toMatchObject({ code: 'SCHEMA_GUARD_CLOSED' });
    expect(g.workerCount).toBe(0);
  });

  it('starts a second worker only for checks the starting one cannot take', async () => {
    const g = new SchemaGuard({ workers: 2 });
    try {
      // As at `mcp serve`'s start: one worker is warming up when the first schema arrives.
      const warming = g.warmUp(1);
      expect(await g.prepare({ type: 'object', properties: { a: { type: 'string' } } })).toMatchObject({
        ok: true,
      });
      await warming;
      expect(g.workerCount).toBe(1);
      // Two checks at once with one worker: the second one gets a worker of its own.
      const both = await Promise.all([
        g.prepare({ type: 'object', properties: { b: { type: 'string' } } }),
        g.prepare({ type: 'object', properties: { c: { type: 'string' } } }),
      ]);
      expect(both).toMatchObject([{ ok: true }, { ok: true }]);
      expect(g.workerCount).toBe(2);
    } finally {
      await g.close();
    }
  });

  it('refuses nonsensical limits with a coded error', () => {
    expect(() => new SchemaGuard({ limits: { timeoutMs: 0 } })).toThrow(
      expect.objectContaining({ code: 'SCHEMA_LIMITS' }),
    );
  });
});

describe('passThroughJsonSchemaValidator', () => {
  it('never compiles: even a hostile schema yields a validator that accepts', () => {
    const validate = passThroughJsonSchemaValidator.getValidator<{ a: number }>({
      $ref: 'https://evil.example/x',
    });
    expect(validate({ a: 1 })).toEqual({ valid: true, data: { a: 1 }, errorMessage: undefined });
  });
});

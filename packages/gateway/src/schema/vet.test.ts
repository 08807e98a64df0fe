import { describe, expect, it } from 'vitest';
import { DEFAULT_SCHEMA_LIMITS } from './types.js';
import { analyzeSchema, vetSchema } from './vet.js';

function code(schema: unknown, limits?: Parameters<typeof vetSchema>[1]): string {
  const verdict = vetSchema(schema, limits);
  return verdict.ok ? 'ok' : verdict.code;
}

/** Builds `{key: {key: … {}}}` iteratively, `depth` levels deep. */
function nest(key: string, depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i++) value = { [key]: value };
  return value;
}

describe('vetSchema: dialects', () => {
  it('defaults to 2020-12 and accepts the declared 2020-12 and draft-07 URIs', () => {
    expect(code({ type: 'object' })).toBe('ok');
    expect(code({ $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object' })).toBe('ok');
    expect(code({ $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' })).toBe('ok');
    expect(code({ $schema: 'http://json-schema.org/draft-07/schema', type: 'object' })).toBe('ok');
    expect(code(true)).toBe('ok');
  });

  it('refuses every other dialect, and $schema below the root', () => {
    expect(code({ $schema: 'http://json-schema.org/draft-04/schema#' })).toBe('SCHEMA_DIALECT');
    expect(code({ $schema: 'https://json-schema.org/draft/2019-09/schema' })).toBe('SCHEMA_DIALECT');
    expect(code({ $schema: 'https://evil.example/meta' })).toBe('SCHEMA_DIALECT');
    expect(code({ $schema: 7 })).toBe('SCHEMA_DIALECT');
    expect(code({ properties: { a: { $schema: 'http://json-schema.org/draft-07/schema#' } } })).toBe(
      'SCHEMA_DIALECT',
    );
    expect(code({ $recursiveRef: '#' })).toBe('SCHEMA_DIALECT');
  });

  it('refuses what is not a schema or not JSON', () => {
    expect(code(null)).toBe('SCHEMA_INVALID');
    expect(code([{ type: 'string' }])).toBe('SCHEMA_INVALID');
    expect(code({ properties: { a: 5 } })).toBe('SCHEMA_INVALID');
    expect(code({ const: Number.NaN })).toBe('SCHEMA_INVALID');
    expect(code({ description: 'lone \ud800' })).toBe('SCHEMA_INVALID');
    expect(code({ default: new Date(0) })).toBe('SCHEMA_INVALID');
    expect(code({ default: () => 1 })).toBe('SCHEMA_INVALID');
  });
});

describe('vetSchema: references', () => {
  it('accepts local pointers and anchors', () => {
    expect(code({ $defs: { s: { type: 'string' } }, properties: { a: { $ref: '#/$defs/s' } } })).toBe('ok');
    expect(
      code({ $defs: { s: { $anchor: 'str', type: 'string' } }, properties: { a: { $ref: '#str' } } }),
    ).toBe('ok');
    expect(
      code({ definitions: { 'a/b': { type: 'string' } }, properties: { a: { $ref: '#/definitions/a~1b' } } }),
    ).toBe('ok');
    expect(code({ $defs: { 'x y': { type: 'string' } }, properties: { a: { $ref: '#/$defs/x%20y' } } })).toBe(
      'ok',
    );
    // Recursion that consumes input (a tree) is fine.
    expect(code({ type: 'object', properties: { child: { $ref: '#' } } })).toBe('ok');
  });

  it('refuses remote, relative and URN references', () => {
    expect(code({ properties: { a: { $ref: 'https://evil.example/s.json' } } })).toBe('SCHEMA_REMOTE_REF');
    expect(code({ properties: { a: { $ref: 'other.json#/x' } } })).toBe('SCHEMA_REMOTE_REF');
    expect(code({ $ref: 'urn:uuid:1234' })).toBe('SCHEMA_REMOTE_REF');
    expect(code({ $ref: '' })).toBe('SCHEMA_REMOTE_REF');
    expect(code({ $dynamicRef: 'https://evil.example/s.json#meta' })).toBe('SCHEMA_REMOTE_REF');
    // Unknown keywords are vetted as schemas too, because a pointer can reach into them.
    expect(code({ 'x-extra': { $ref: 'https://evil.example/s.json' } })).toBe('SCHEMA_REMOTE_REF');
  });

  it('refuses embedded $id (new base URIs) but allows a root $id and draft-07 anchors', () => {
    expect(code({ $id: 'https://example.com/root.json', type: 'object' })).toBe('ok');
    expect(code({ $defs: { a: { $id: 'https://evil.example/a.json' } } })).toBe('SCHEMA_REMOTE_REF');
    expect(code({ $defs: { a: { $id: 'a.json' } } })).toBe('SCHEMA_REMOTE_REF');
    expect(
      code({
        $schema: 'http://json-schema.org/draft-07/schema#',
        definitions: { a: { $id: '#name', type: 'string' } },
        properties: { x: { $ref: '#name' } },
      }),
    ).toBe('ok');
    expect(code({ $defs: { a: { $id: '#name' } } })).toBe('SCHEMA_REMOTE_REF');
  });

  it('refuses references to nothing, to data, and duplicate anchors', () => {
    expect(code({ $ref: '#/$defs/missing' })).toBe('SCHEMA_INVALID');
    expect(code({ enum: [{ type: 'string' }], properties: { a: { $ref: '#/enum/0' } } })).toBe(
      'SCHEMA_INVALID',
    );
    expect(code({ $ref: '#nowhere' })).toBe('SCHEMA_INVALID');
    expect(code({ $ref: '#/%E0%A4%A' })).toBe('SCHEMA_INVALID');
    expect(code({ $defs: { a: { $anchor: 'x' }, b: { $anchor: 'x' } } })).toBe('SCHEMA_INVALID');
  });

  it('refuses reference cycles that make no progress', () => {
    expect(code({ $ref: '#' })).toBe('SCHEMA_REF_CYCLE');
    expect(code({ $defs: { a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }, $ref: '#/$defs/a' })).toBe(
      'SCHEMA_REF_CYCLE',
    );
    // Not even reachable from the root: ajv would still compile it.
    expect(
      code({ $defs: { a: { allOf: [{ $ref: '#/$defs/b' }] }, b: { anyOf: [{ $ref: '#/$defs/a' }] } } }),
    ).toBe('SCHEMA_REF_CYCLE');
    expect(code({ $anchor: 'me', not: { $ref: '#me' } })).toBe('SCHEMA_REF_CYCLE');
    expect(code({ if: { $ref: '#' } })).toBe('SCHEMA_REF_CYCLE');
    expect(code({ $dynamicAnchor: 'm', oneOf: [{ $dynamicRef: '#m' }] })).toBe('SCHEMA_REF_CYCLE');
  });

  it('refuses in-place expansion bombs (anyOf of anyOf of … through $ref)', () => {
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i <= 40; i++) {
      defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
    }
    expect(code({ $defs: defs, $ref: '#/$defs/d40' })).toBe('SCHEMA_TOO_COMPLEX');
    // The same shape a few levels deep is ordinary.
    const small: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i <= 4; i++)
      small[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { type: 'null' }] };
    expect(code({ $defs: small, $ref: '#/$defs/d4' })).toBe('ok');
  });
});

describe('vetSchema: exponential re-application through recursion', () => {
  const ok = {
    'a JSON value': {
      $defs: {
        json: {
          anyOf: [
            { type: ['string', 'number', 'boolean', 'null'] },
            { type: 'array', items: { $ref: '#/$defs/json' } },
            { type: 'object', additionalProperties: { $ref: '#/$defs/json' } },
          ],
        },
      },
      $ref: '#/$defs/json',
    },
    'a binary tree': { type: 'object', properties: { left: { $ref: '#' }, right: { $ref: '#' } } },
    'named properties beside additionalProperties': {
      type: 'object',
      properties: { a: { $ref: '#' } },
      additionalProperties: { $ref: '#' },
    },
    'a tuple then items': {
      type: 'array',
      prefixItems: [{ $ref: '#' }, { $ref: '#' }],
      items: { $ref: '#' },
    },
    'a linked list': {
      $defs: {
        node: {
          type: 'object',
          properties: { next: { anyOf: [{ $ref: '#/$defs/node' }, { type: 'null' }] } },
        },
      },
      $ref: '#/$defs/node',
    },
    'mutual recursion on distinct names': {
      $defs: {
        a: { properties: { b: { $ref: '#/$defs/b' } } },
        b: { properties: { a: { $ref: '#/$defs/a' } }, items: { $ref: '#/$defs/a' } },
      },
      $ref: '#/$defs/a',
    },
  };
  for (const [name, schema] of Object.entries(ok)) {
    it(`accepts ${name}`, () => expect(code(schema)).toBe('ok'));
  }

  const refused = {
    'allOf of two properties.a → itself': {
      $defs: {
        n: {
          allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, { properties: { a: { $ref: '#/$defs/n' } } }],
        },
      },
      $ref: '#/$defs/n',
    },
    'two routes that meet one level later': {
      $defs: {
        n: {
          allOf: [
            { properties: { a: { $ref: '#/$defs/m1' } } },
            { properties: { a: { $ref: '#/$defs/m2' } } },
          ],
        },
        m1: { properties: { x: { $ref: '#/$defs/n' } } },
        m2: { properties: { x: { $ref: '#/$defs/n' } } },
      },
      $ref: '#/$defs/n',
    },
    'a name that matches a pattern too': {
      type: 'object',
      properties: { a: { $ref: '#' } },
      patternProperties: { '^a': { $ref: '#' } },
    },
    'inherited and overridden recursion': {
      $defs: { base: { properties: { kids: { items: { $ref: '#' } } } } },
      allOf: [{ $ref: '#/$defs/base' }],
      properties: { kids: { items: { $ref: '#' } } },
    },
    'items and contains on the same array': { type: 'array', items: { $ref: '#' }, contains: { $ref: '#' } },
  };
  for (const [name, schema] of Object.entries(refused)) {
    it(`refuses ${name}`, () => expect(code(schema)).toBe('SCHEMA_TOO_COMPLEX'));
  }
});

describe('vetSchema: caps', () => {
  it('refuses 100k-deep nesting without exhausting the stack', () => {
    expect(code(nest('not', 100_000))).toBe('SCHEMA_TOO_DEEP');
    const text = `${'{"items":'.repeat(100_000)}{}${'}'.repeat(100_000)}`;
    expect(code(JSON.parse(text))).toBe('SCHEMA_TOO_DEEP');
    // Data nesting counts too (an enum value is serialized like everything else).
    let data: unknown = 1;
    for (let i = 0; i < 100_000; i++) data = [data];
    expect(code({ enum: [data] })).toBe('SCHEMA_TOO_DEEP');
  });

  it('applies the depth cap at exactly maxDepth', () => {
    const limits = { maxDepth: 10 };
    expect(code(nest('not', 9), limits)).toBe('ok');
    expect(code(nest('not', 10), limits)).toBe('SCHEMA_TOO_DEEP');
  });

  it('refuses schemas over the size cap, counting UTF-8 bytes', () => {
    expect(code({ description: 'x'.repeat(300 * 1024) })).toBe('SCHEMA_TOO_LARGE');
    // The count is exact: the cap at the serialized size passes, one byte less refuses.
    const samples = [
      { description: 'x'.repeat(80) },
      {
        description: 'é"\n\u0001😀',
        enum: [1.5, -0, null, true, [], {}],
        properties: { ü: { type: ['a', 'b'] } },
      },
      true,
    ];
    for (const sample of samples) {
      const bytes = Buffer.byteLength(JSON.stringify(sample));
      expect(code(sample, { maxSchemaBytes: bytes })).toBe('ok');
      expect(code(sample, { maxSchemaBytes: bytes - 1 })).toBe('SCHEMA_TOO_LARGE');
    }
  });

  it('refuses too many subschemas', () => {
    const properties: Record<string, unknown> = {};
    for (let i = 0; i < DEFAULT_SCHEMA_LIMITS.maxSubschemas; i++) properties[`p${i}`] = { type: 'string' };
    expect(code({ properties })).toBe('SCHEMA_TOO_MANY_SUBSCHEMAS');
    expect(code({ properties }, { maxSubschemas: 2_001 })).toBe('ok');
    expect(code({ anyOf: Array.from({ length: 50 }, () => true) }, { maxSubschemas: 20 })).toBe(
      'SCHEMA_TOO_MANY_SUBSCHEMAS',
    );
  });

  it('refuses over-long patterns', () => {
    expect(code({ pattern: 'a'.repeat(1_025) })).toBe('SCHEMA_PATTERN');
    expect(code({ patternProperties: { ['b'.repeat(1_025)]: true } })).toBe('SCHEMA_PATTERN');
    expect(code({ pattern: 'a'.repeat(1_024) })).toBe('ok');
  });
});

describe('analyzeSchema: the argument rule', () => {
  const rule = (schema: unknown) => {
    const analyzed = analyzeSchema(schema, DEFAULT_SCHEMA_LIMITS);
    if (!('analysis' in analyzed)) throw new Error(analyzed.verdict.message);
    return analyzed.analysis.argumentRule;
  };

  it('collects names from the root and from what applies to it in place', () => {
    const r = rule({
      $defs: { base: { properties: { fromRef: {} } } },
      $ref: '#/$defs/base',
      properties: { a: {} },
      allOf: [{ properties: { fromAllOf: {} } }],
      if: { properties: { kind: {} } },
      // biome-ignore lint/suspicious/noThenProperty: `then` is a JSON Schema keyword here
      then: { properties: { fromThen: {} } },
      not: { properties: { forbidden: {} } },
      patternProperties: { '^x-': {} },
      additionalProperties: false,
    });
    expect(r.known.sort()).toEqual(['a', 'fromAllOf', 'fromRef', 'fromThen', 'kind']);
    expect(r.patterns).toEqual(['^x-']);
    expect(r.open).toBe(false);
  });

  it('is open only when the schema says so explicitly', () => {
    expect(rule({ properties: { a: {} } }).open).toBe(false);
    expect(rule({ additionalProperties: { type: 'string' } }).open).toBe(true);
    expect(rule({ additionalProperties: true }).open).toBe(true);
    expect(rule({ unevaluatedProperties: false }).open).toBe(false);
    expect(rule(true)).toEqual({ known: [], patterns: [], open: false });
  });

  it('compiles the root without $schema and $id', () => {
    const analyzed = analyzeSchema(
      { $schema: 'http://json-schema.org/draft-07/schema#', $id: 'https://x.example/s', type: 'object' },
      DEFAULT_SCHEMA_LIMITS,
    );
    expect('analysis' in analyzed && analyzed.analysis).toEqual({
      dialect: 'draft-07',
      compiled: { type: 'object' },
      argumentRule: { known: [], patterns: [], open: false },
    });
  });
});

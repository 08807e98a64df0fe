/**
 * Hostile schemas (issue 5): each is withheld or refused within the budget while a concurrent
 * check on another tool's schema completes. Assertions are about outcomes and order; the 2 s
 * budget is only used as an upper bound, with slack for slow shared machines.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SchemaGuard } from './guard.js';
import type { SchemaVerdict } from './types.js';

const BUDGET_MS = 2_000;
/** Generous: a loaded CI machine may be slow to schedule the timer or the replacement worker. */
const SLACK_MS = 3_000;

const guard = new SchemaGuard({ workers: 2, limits: { timeoutMs: BUDGET_MS } });
beforeAll(() => guard.warmUp(), 60_000);
afterAll(() => guard.close());

/** Another tool's ordinary schema and arguments, checked while the hostile one is in flight. */
const benignSchema = {
  type: 'object',
  properties: { city: { type: 'string', pattern: '^[A-Z][a-z]+$' }, days: { type: 'integer', minimum: 1 } },
  required: ['city'],
};

interface Timed {
  verdict: SchemaVerdict;
  ms: number;
  order: number;
}

async function race(hostile: () => Promise<SchemaVerdict>): Promise<{ hostile: Timed; benign: Timed }> {
  let finished = 0;
  const started = performance.now();
  const timed = async (run: () => Promise<SchemaVerdict>): Promise<Timed> => {
    const verdict = await run();
    return { verdict, ms: performance.now() - started, order: finished++ };
  };
  // The hostile check starts first, so a blocked event loop or a blocked pool would hold the benign one.
  const hostilePromise = timed(hostile);
  const benignPromise = timed(() => guard.checkArguments(benignSchema, { city: 'Lisbon', days: 3 }));
  const [h, b] = await Promise.all([hostilePromise, benignPromise]);
  return { hostile: h, benign: b };
}

function nested(key: string, depth: number): unknown {
  let value: unknown = {};
  for (let i = 0; i < depth; i++) value = { [key]: value };
  return value;
}

/** `n` is applied twice to every level of `{a: {a: …}}`: 2^depth evaluations, tiny and acyclic in place. */
const doublingSchema = {
  $defs: {
    n: {
      type: 'object',
      allOf: [{ properties: { a: { $ref: '#/$defs/n' } } }, { properties: { a: { $ref: '#/$defs/n' } } }],
    },
  },
  $ref: '#/$defs/n',
};

/**
 * Passes every static check, yet ajv compares object items pairwise for `uniqueItems`: 80,000
 * distinct objects (under 1 MiB) cost ~3·10^9 comparisons. Only the time budget stops it.
 */
const slowSchema = {
  type: 'object',
  properties: { xs: { type: 'array', uniqueItems: true, items: { type: 'object' } } },
};
const slowArguments = { xs: Array.from({ length: 80_000 }, (_, i) => ({ a: i })) };

describe('hostile schemas are refused within the budget while other checks complete', () => {
  const statics: [string, () => unknown, string][] = [
    ['{"$ref":"#"}', () => ({ $ref: '#' }), 'SCHEMA_REF_CYCLE'],
    [
      'mutual $defs loop',
      () => ({
        type: 'object',
        $defs: { a: { allOf: [{ $ref: '#/$defs/b' }] }, b: { anyOf: [{ $ref: '#/$defs/a' }] } },
        properties: { x: { $ref: '#/$defs/a' } },
      }),
      'SCHEMA_REF_CYCLE',
    ],
    ['100k-deep nesting (built)', () => nested('not', 100_000), 'SCHEMA_TOO_DEEP'],
    [
      '100k-deep nesting (parsed)',
      () => JSON.parse(`${'{"properties":{"a":'.repeat(100_000)}{}${'}}'.repeat(100_000)}`),
      'SCHEMA_TOO_DEEP',
    ],
    [
      'remote $ref',
      () => ({ type: 'object', properties: { a: { $ref: 'https://schemas.evil.example/a.json' } } }),
      'SCHEMA_REMOTE_REF',
    ],
    [
      'unknown $schema',
      () => ({ $schema: 'https://evil.example/my-dialect', type: 'object' }),
      'SCHEMA_DIALECT',
    ],
    [
      'anyOf compile bomb',
      () => {
        const defs: Record<string, unknown> = { d0: { type: 'string', pattern: '^x' } };
        for (let i = 1; i <= 64; i++) {
          defs[`d${i}`] = { anyOf: [{ $ref: `#/$defs/d${i - 1}` }, { $ref: `#/$defs/d${i - 1}` }] };
        }
        return { $defs: defs, type: 'object', properties: { a: { $ref: '#/$defs/d64' } } };
      },
      'SCHEMA_TOO_COMPLEX',
    ],
    ['properties doubling bomb (exponential in input depth)', () => doublingSchema, 'SCHEMA_TOO_COMPLEX'],
    [
      'nested anyOf breadth bomb',
      () => {
        let schema: unknown = { type: 'string' };
        for (let i = 0; i < 30; i++) schema = { anyOf: [schema, schema, schema] };
        return schema;
      },
      'SCHEMA_TOO_MANY_SUBSCHEMAS',
    ],
  ];

  for (const [name, build, expected] of statics) {
    it(`${name}: withheld (${expected})`, async () => {
      const schema = build();
      const { hostile, benign } = await race(() => guard.prepare(schema));
      expect(hostile.verdict).toMatchObject({ ok: false, code: expected });
      expect(hostile.ms).toBeLessThan(BUDGET_MS + SLACK_MS);
      expect(benign.verdict).toEqual({ ok: true });
      // And a call on the hostile tool is refused with the same reason, never checked.
      expect(await guard.checkArguments(schema, {})).toMatchObject({ ok: false, code: expected });
    }, 30_000);
  }

  it('catastrophic pattern ^(a+)+$ on "aaa…a!": refused by a linear-time match, not a timeout', async () => {
    const schema = { type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } };
    expect(await guard.prepare(schema)).toMatchObject({ ok: true });
    // A backtracking engine needs ~2^50 steps here and would hit the budget instead.
    const { hostile, benign } = await race(() => guard.checkArguments(schema, { s: `${'a'.repeat(50)}!` }));
    expect(hostile.verdict).toMatchObject({ ok: false, code: 'ARGUMENTS_INVALID' });
    expect(hostile.ms).toBeLessThan(BUDGET_MS);
    expect(benign.verdict).toEqual({ ok: true });
    expect(await guard.checkArguments(schema, { s: 'a'.repeat(10_000) })).toEqual({ ok: true });
  }, 30_000);

  it('catastrophic patternProperties and propertyNames patterns are linear too', async () => {
    const schema = {
      type: 'object',
      patternProperties: { '^(x+x+)+y$': { type: 'string' } },
      propertyNames: { pattern: '^(([a-z])+.)+[A-Z]([a-z])+$' },
      additionalProperties: true,
    };
    const key = `${'x'.repeat(40)}z`;
    const { hostile, benign } = await race(() => guard.checkArguments(schema, { [key]: 1 }));
    expect(hostile.verdict).toMatchObject({ ok: false, code: 'ARGUMENTS_INVALID' });
    expect(hostile.ms).toBeLessThan(BUDGET_MS);
    expect(benign.verdict).toEqual({ ok: true });
  }, 30_000);

  it('a validation that outlives the budget fails with SCHEMA_TIMEOUT after the concurrent check, and the worker is replaced', async () => {
    expect(await guard.prepare(slowSchema)).toMatchObject({ ok: true });
    const { hostile, benign } = await race(() => guard.checkArguments(slowSchema, slowArguments));
    expect(hostile.verdict).toMatchObject({ ok: false, code: 'SCHEMA_TIMEOUT' });
    expect(hostile.ms).toBeGreaterThanOrEqual(BUDGET_MS - 50);
    expect(hostile.ms).toBeLessThan(BUDGET_MS + SLACK_MS);
    expect(benign.verdict).toEqual({ ok: true });
    expect(benign.order).toBe(0);
    expect(benign.ms).toBeLessThan(hostile.ms);
    // The pool is back to full strength and keeps serving, the same schema included.
    await guard.warmUp();
    expect(guard.workerCount).toBe(2);
    expect(await guard.checkArguments(benignSchema, { city: 'Porto' })).toEqual({ ok: true });
    expect(await guard.checkArguments(slowSchema, { xs: [{ a: 1 }, { a: 2 }] })).toEqual({ ok: true });
    expect(await guard.checkArguments(slowSchema, { xs: [{ a: 1 }, { a: 1 }] })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
    expect(await guard.checkArguments(benignSchema, { city: 'porto' })).toMatchObject({
      code: 'ARGUMENTS_INVALID',
    });
  }, 30_000);

  it('two hostile checks at once occupy both workers; a third check waits and still completes', async () => {
    const started = performance.now();
    const hostile = [
      guard.checkArguments(slowSchema, slowArguments),
      guard.checkResult(slowSchema, { structuredContent: slowArguments }),
    ];
    const benign = guard.checkArguments(benignSchema, { city: 'Faro' });
    const [first, second, third] = await Promise.all([...hostile, benign]);
    expect(first).toMatchObject({ code: 'SCHEMA_TIMEOUT' });
    expect(second).toMatchObject({ code: 'SCHEMA_TIMEOUT' });
    expect(third).toEqual({ ok: true });
    expect(performance.now() - started).toBeLessThan(2 * BUDGET_MS + 2 * SLACK_MS);
  }, 30_000);

  it('with a single worker, the one that timed out is replaced and the queue moves on', async () => {
    const single = new SchemaGuard({ workers: 1, limits: { timeoutMs: BUDGET_MS } });
    try {
      await single.warmUp();
      const hostile = single.checkArguments(slowSchema, slowArguments);
      // Queued behind the hostile check: it can only run once that worker is gone and replaced.
      const queued = single.checkArguments(benignSchema, { city: 'Braga' });
      expect(await hostile).toMatchObject({ code: 'SCHEMA_TIMEOUT' });
      expect(await queued).toEqual({ ok: true });
      expect(single.workerCount).toBe(1);
    } finally {
      await single.close();
    }
  }, 30_000);

  it('one caller flooding the queue with slow checks does not starve another: the queue is fair between keys', async () => {
    const single = new SchemaGuard({ workers: 1, limits: { timeoutMs: BUDGET_MS } });
    try {
      await single.warmUp();
      const order: string[] = [];
      const flood = Array.from({ length: 4 }, (_, i) =>
        single.checkArguments(slowSchema, slowArguments, { key: 'hostile' }).then((v) => {
          order.push(`hostile-${i}`);
          return v;
        }),
      );
      const other = single.checkArguments(benignSchema, { city: 'Porto' }, { key: 'other' }).then((v) => {
        order.push('other');
        return v;
      });
      expect(await other).toEqual({ ok: true });
      // Served right after the first slow check, not after all four (first come would be last).
      expect(order).toEqual(['hostile-0', 'other']);
      await Promise.all(flood);
    } finally {
      await single.close();
    }
  }, 60_000);

  it('the event loop stays free during a hostile check', async () => {
    const check = guard.checkArguments(slowSchema, slowArguments);
    // Timers keep firing on time while the worker grinds.
    let ticks = 0;
    const interval = setInterval(() => ticks++, 50);
    const verdict = await check;
    clearInterval(interval);
    expect(verdict).toMatchObject({ code: 'SCHEMA_TIMEOUT' });
    expect(ticks).toBeGreaterThanOrEqual(10);
  }, 30_000);
});

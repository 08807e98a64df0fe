import { digestOf } from '@ringfence/policy';
import { afterAll, describe, expect, it } from 'vitest';
import { resolveLimits } from './limits.js';
import { WorkerPool } from './pool.js';
import { checkSimple, simpleSchema } from './simple.js';
import { analyzeSchema } from './vet.js';

// The in-thread check must give the worker's verdicts (ajv's), code and first-error text alike:
// every schema here is checked both ways against every value.
const pool = new WorkerPool({ size: 1, timeoutMs: 10_000, maxWaitMs: 60_000 });
afterAll(() => pool.close());

const limits = resolveLimits({});

const SCHEMAS: Record<string, unknown> = {
  plain: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
  closed: {
    type: 'object',
    properties: { a: { type: 'integer' }, b: { type: ['string', 'null'] } },
    required: ['a'],
    additionalProperties: false,
  },
  annotated: {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    title: 'T',
    description: 'D',
    properties: {
      mode: { enum: ['fast', 'slow', 1, null], description: 'how' },
      n: { type: 'number', default: 3, examples: [1] },
      flag: { type: 'boolean' },
      any: { description: 'anything at all' },
    },
    required: ['mode', 'flag'],
  },
  open: {
    type: 'object',
    properties: { x: { type: 'string' } },
    additionalProperties: true,
  },
  empty: { type: 'object' },
  'odd names': { type: 'object', properties: { 'a/b': { type: 'string' }, 'c~d': { type: 'number' } } },
};

const VALUES: unknown[] = [
  {},
  { text: 'hi' },
  { text: 3 },
  { text: null },
  { a: 1 },
  { a: 1.5 },
  { a: 1, b: null },
  { a: 1, b: 'x', c: true },
  { a: '1' },
  { mode: 'fast', flag: true },
  { mode: 'medium', flag: true },
  { mode: 1, flag: false, n: 2.5 },
  { mode: null, flag: 'yes' },
  { mode: 'slow', flag: true, n: '3', any: [1, { deep: true }] },
  { x: 'y', extra: 1 },
  { x: 1 },
  { 'a/b': 1 },
  { 'c~d': 'no' },
  { 'a/b': 'ok', 'c~d': 2 },
  { text: 'hi', other: 1 },
  { flag: true },
];

describe('the in-thread check of simple schemas', () => {
  for (const [name, schema] of Object.entries(SCHEMAS)) {
    it(`gives the worker's verdicts for the ${name} schema`, async () => {
      const analyzed = analyzeSchema(schema, limits);
      if (!('analysis' in analyzed)) throw new Error(`schema ${name} refused: ${analyzed.verdict.message}`);
      const { analysis } = analyzed;
      const simple = simpleSchema(analysis.compiled, analysis.argumentRule);
      expect(simple, 'this schema takes the in-thread path').toBeDefined();
      for (const role of ['arguments', 'result'] as const) {
        for (const value of VALUES) {
          const inThread = checkSimple(simple!, analysis.argumentRule, value, role);
          const inWorker = await pool.run({
            op: 'validate',
            digest: digestOf(schema),
            dialect: analysis.dialect,
            schema: analysis.compiled,
            rule: analysis.argumentRule,
            role,
            value,
          });
          expect({ role, value, verdict: inThread }).toEqual({ role, value, verdict: inWorker });
        }
      }
    }, 60_000);
  }

  it('leaves every other schema to the worker', () => {
    const others: unknown[] = [
      { type: 'object', properties: { s: { type: 'string', pattern: '^a+$' } } },
      { type: 'object', properties: { s: { type: 'string', maxLength: 3 } } },
      { type: 'object', properties: { o: { type: 'object' } } },
      { type: 'object', properties: { r: { $ref: '#' } } },
      { type: 'object', patternProperties: { '^x': { type: 'string' } } },
      { type: 'object', additionalProperties: { type: 'string' } },
      { type: 'object', properties: { a: { type: 'array' } } },
      { type: 'object', properties: { e: { enum: [{ a: 1 }] } } },
      { type: 'object', properties: { t: { type: ['string', 'string'] } } },
      { type: 'object', anyOf: [{ required: ['a'] }] },
      { properties: { a: { type: 'string' } } },
    ];
    for (const schema of others) {
      const analyzed = analyzeSchema(schema, limits);
      if (!('analysis' in analyzed)) continue;
      expect(simpleSchema(analyzed.analysis.compiled, analyzed.analysis.argumentRule)).toBeUndefined();
    }
  });
});

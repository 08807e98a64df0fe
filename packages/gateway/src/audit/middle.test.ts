import { digestOf } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import { PrecomputedDigest, prepareEntry, prepareEntryGenerically } from './format.js';
import { middleText } from './middle.js';
import type { AuditInput } from './types.js';

// The writer's one-walk path (middle.ts) must accept only what the generic path accepts and write
// the same bytes: checked here against it on well-formed entries of every type and on thousands
// of hostile variants (long, escaped, wrong-typed, unknown, missing, non-plain values).

const BASES: AuditInput[] = [
  {
    type: 'gateway.start',
    refs: { pid: 42, version: '1.2.3', policy: { name: 'p', digest: digestOf({}), signer: 'k' } },
  },
  {
    type: 'mcp.decision',
    agent: 'claude',
    scope: 'repo',
    refs: {
      phase: 'call',
      server: 'gh',
      tool: 'echo',
      allowed: true,
      rule: 'default',
      reason: 'ok',
      arguments: { text: 'x' },
      policy: { name: 'p', digest: digestOf({}), signer: 'k' },
      task: 't1',
      sandbox: 'box',
      secrets: 'aws at a',
      trace_id: '0af7651916cd43dd8448eb211c80319c',
    },
  },
  {
    type: 'mcp.decision',
    refs: {
      phase: 'call',
      server: 'up',
      tool: 'r',
      kind: 'prompt',
      method: 'completion/complete',
      allowed: false,
      rule: 'r',
      arguments: new PrecomputedDigest(digestOf(1)),
    },
  },
  {
    type: 'mcp.decision',
    refs: { phase: 'expose', server: 'gh', tool: 't', allowed: true, rule: 'r', digest: digestOf(2) },
  },
  {
    type: 'mcp.result',
    parentSeq: 6,
    refs: {
      server: 'gh',
      tool: 'p',
      kind: 'prompt',
      is_error: true,
      result: { x: 1 },
      reason: 'why',
      dropped: 2,
      cancelled: 'client',
      redacted: 1,
      redacted_classes: 'aws',
    },
  },
  {
    type: 'mcp.result',
    parentSeq: 1,
    refs: { server: 'gh', tool: 'echo', is_error: false, result: new PrecomputedDigest(null) },
  },
  {
    type: 'mcp.egress',
    refs: { server: 'gh', host: 'h', port: 443, allowed: false, reason: 'no', status: 403, count: 3 },
  },
  {
    type: 'mcp.server_request',
    refs: { server: 'gh', method: 'sampling/createMessage', allowed: true, rule: 'r', request: {} },
  },
  { type: 'mcp.server_answer', parentSeq: 1, refs: { server: 'gh', method: 'm', is_error: false } },
  { type: 'mcp.task', refs: { op: 'cancel', task: '', allowed: true, reason: 'r', server: 's', tool: 't' } },
  { type: 'mcp.oauth', refs: { server: 's', event: 'used', token: 'sha256:0123456789abcdef', status: 401 } },
] as AuditInput[];

class Box {
  constructor(readonly server: string) {}
}

const VALUES: unknown[] = [
  undefined,
  null,
  '',
  'x',
  'é\u2028"\\\n\u0000t',
  '\ud800',
  'a'.repeat(1023) + '\ud83d\ude00',
  'y'.repeat(1024),
  'z'.repeat(1025),
  'w'.repeat(5000),
  0,
  -0,
  1,
  1.5,
  65535,
  65536,
  Number.MAX_SAFE_INTEGER,
  Number.NaN,
  true,
  false,
  [],
  {},
  Object.create(null),
  new Box('gh'),
  new String('x'),
  'call',
  'expose',
  'prompt',
  'instructions',
  'log-level',
  'resource',
  'logging/setLevel',
  'completion/complete',
  'client',
  digestOf({}),
  `${digestOf({})}"`,
  'sha256:0123456789abcdef',
  '00000000000000000000000000000000',
  { name: 'p', digest: digestOf({}), signer: 'k' },
  { name: 'p', digest: digestOf({}), signer: 'k', extra: 1 },
  { name: 'p', digest: 'nope', signer: 'k' },
  { toJSON: () => 'x' },
];

/** A small seeded generator, so a failure is reproduced by its seed. */
function rng(seed: number): () => number {
  let s = seed >>> 0;
  return () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32;
  };
}

function outcome(prepare: () => { middle: string; parentSeq: number | undefined }): string {
  try {
    const p = prepare();
    return `ok ${p.middle} ${p.parentSeq}`;
  } catch (error) {
    return `refused ${(error as Error).message}`;
  }
}

describe('the one-walk path of prepareEntry', () => {
  it('is taken for well-formed entries of every type, with the generic path’s bytes', () => {
    for (const input of BASES) {
      const generic = prepareEntryGenerically(input, 'sess', 'box');
      const top = {
        type: input.type,
        session: 'sess',
        agent: input.agent,
        scope: input.scope,
        sandbox: 'box',
        parent_seq: 'parentSeq' in input ? input.parentSeq : undefined,
      };
      const refs = input.refs as Record<string, unknown>;
      const key =
        (
          {
            'mcp.result': 'result',
            'mcp.server_request': 'request',
            'mcp.server_answer': 'answer',
          } as Record<string, string>
        )[input.type] ?? (refs.phase === 'call' ? 'arguments' : undefined);
      const replacement = key ? JSON.parse(`{${generic.middle}}`).refs[key] : undefined;
      expect(middleText(top, refs, key, replacement, Number.MAX_SAFE_INTEGER)).toBe(generic.middle);
      expect(prepareEntry(input, 'sess', 'box')).toEqual(generic);
    }
  });

  it('accepts only what the generic path accepts, and writes the same bytes, on hostile variants', () => {
    const next = rng(26);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)] as T;
    let refused = 0;
    for (let i = 0; i < 20_000; i++) {
      const base = pick(BASES);
      const refs: Record<string, unknown> = { ...(base.refs as Record<string, unknown>) };
      const input: Record<string, unknown> = { ...base, refs };
      for (let m = Math.floor(next() * 3); m > 0; m--) {
        const where = next();
        if (where < 0.6)
          refs[pick([...Object.keys(refs), 'kind', 'method', 'unknown', 'task', 'policy', 'arguments'])] =
            pick(VALUES);
        else if (where < 0.7) delete refs[pick(Object.keys(refs))];
        else if (where < 0.9) input[pick(['agent', 'scope', 'session', 'parentSeq'])] = pick(VALUES);
        else input.refs = pick([Object.assign(Object.create(null), refs), new Box('gh'), [], null, refs]);
      }
      const session = pick(['sess', 'sess', 'sess', '', 'z'.repeat(1025)]);
      const sandbox = pick([undefined, 'box', 'box', '']);
      const fast = outcome(() => prepareEntry(input as unknown as AuditInput, session, sandbox));
      const generic = outcome(() =>
        prepareEntryGenerically(input as unknown as AuditInput, session, sandbox),
      );
      expect(
        fast,
        JSON.stringify({ i, input }, (_k, v) => (v === undefined ? '<undefined>' : v)),
      ).toBe(generic);
      if (generic.startsWith('refused')) refused++;
    }
    // Both outcomes were exercised in numbers.
    expect(refused).toBeGreaterThan(2000);
    expect(refused).toBeLessThan(16_000);
  });
});

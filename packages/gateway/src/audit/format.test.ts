import { digestOf } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import {
  checkEntryShape,
  completeEntry,
  contentDigest,
  hashLine,
  prepareEntry,
  serializeEntry,
} from './format.js';
import { AUDIT_GENESIS, type AuditEntry } from './types.js';

const decision = {
  seq: 2,
  ts: '2026-11-29T00:00:00.000Z',
  type: 'mcp.decision',
  session: 's',
  refs: { phase: 'call', server: 'gh', tool: 't', allowed: true, rule: 'r', arguments: digestOf({}) },
  prev: AUDIT_GENESIS,
};

describe('checkEntryShape', () => {
  it('accepts a well-formed entry', () => {
    expect(checkEntryShape(decision)).toMatchObject({ ok: true });
  });

  it.each([
    ['an unknown top-level field', { ...decision, extra: 1 }, /unknown field extra/],
    [
      'an unknown refs field',
      { ...decision, refs: { ...decision.refs, body: 'x' } },
      /unknown field refs\.body/,
    ],
    ['a missing prev', { ...decision, prev: undefined }, /missing field prev/],
    ['an uppercase digest', { ...decision, prev: AUDIT_GENESIS.toUpperCase() }, /prev must be/],
    ['a seq of 0', { ...decision, seq: 0 }, /seq must be a positive integer/],
    ['a local time', { ...decision, ts: '2026-11-29T00:00:00.000+01:00' }, /ts must be/],
    [
      'a call without arguments',
      { ...decision, refs: { ...decision.refs, arguments: undefined } },
      /arguments digest/,
    ],
    [
      'an expose with arguments',
      { ...decision, refs: { ...decision.refs, phase: 'expose' } },
      /expose decision has no arguments/,
    ],
    ['parent_seq on a decision', { ...decision, parent_seq: 1 }, /unknown field parent_seq/],
    [
      'an unknown type',
      { ...decision, type: 'mcp.future' },
      /unknown entry type "mcp\.future".*newer ringfence/,
    ],
    ['an array', [decision], /must be a JSON object/],
  ])('refuses %s', (_, value, message) => {
    const result = checkEntryShape(value);
    expect(result.ok).toBe(false);
    expect(!result.ok && result.message).toMatch(message);
  });

  it('refuses a result whose parent_seq is not before its seq', () => {
    const result = {
      seq: 3,
      ts: decision.ts,
      type: 'mcp.result',
      session: 's',
      parent_seq: 3,
      refs: { server: 'gh', tool: 't', is_error: false, result: null },
      prev: AUDIT_GENESIS,
    };
    expect(checkEntryShape(result)).toMatchObject({ ok: false });
    expect(checkEntryShape({ ...result, parent_seq: 2 })).toMatchObject({ ok: true });
  });

  it('accepts a result without `cancelled` (older logs) or naming who cancelled, and nothing else', () => {
    const result = {
      seq: 3,
      ts: decision.ts,
      type: 'mcp.result',
      session: 's',
      parent_seq: 2,
      refs: { server: 'gh', tool: 't', is_error: true, result: null, reason: 'cancelled by the client' },
      prev: AUDIT_GENESIS,
    };
    expect(checkEntryShape(result)).toMatchObject({ ok: true });
    for (const who of ['client', 'timeout'])
      expect(checkEntryShape({ ...result, refs: { ...result.refs, cancelled: who } })).toMatchObject({
        ok: true,
      });
    for (const bad of [true, 'server', ''])
      expect(checkEntryShape({ ...result, refs: { ...result.refs, cancelled: bad } })).toMatchObject({
        ok: false,
        message: 'refs.cancelled must be "client" or "timeout"',
      });
    const line = serializeEntry({
      ...result,
      refs: { cancelled: 'client', ...result.refs },
    } as AuditEntry);
    expect(line).toContain('"reason":"cancelled by the client","cancelled":"client"},"prev"');
  });
});

describe('serializeEntry', () => {
  it('writes the documented field order whatever order the object had, and round-trips', () => {
    const shuffled = {
      prev: decision.prev,
      refs: { ...decision.refs },
      type: decision.type,
      seq: 2,
      session: 's',
      ts: decision.ts,
    };
    const line = serializeEntry(shuffled as AuditEntry);
    expect(
      line.startsWith(
        '{"seq":2,"ts":"2026-11-29T00:00:00.000Z","type":"mcp.decision","session":"s","refs":{"phase":"call"',
      ),
    ).toBe(true);
    expect(line.endsWith(`"prev":"${AUDIT_GENESIS}"}`)).toBe(true);
    expect(serializeEntry(JSON.parse(line) as AuditEntry)).toBe(line);
  });

  it('escapes control characters and keeps lone surrogates escaped, so a line is one line', () => {
    const tricky = { ...decision, session: 'a\nb\u2028c\ud800' } as AuditEntry;
    const line = serializeEntry(tricky);
    expect(line).not.toMatch(/\n/);
    expect(line).toContain('\\ud800');
    expect(serializeEntry(JSON.parse(line) as AuditEntry)).toBe(line);
  });
});

describe('digests', () => {
  it('hashes the exact bytes of a line and digests values canonically', () => {
    expect(hashLine('abc')).toBe('sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(contentDigest({ b: 1, a: [1, 'x'] })).toBe(contentDigest({ a: [1, 'x'], b: 1 }));
    expect(contentDigest({ a: '\udc00' })).toBeNull();
  });

  it('prepares entries with digests in place of values and refuses bad input at once', () => {
    const prepared = prepareEntry(
      {
        type: 'mcp.result',
        parentSeq: 4,
        refs: { server: 'gh', tool: 't', is_error: false, result: { text: 'secret' } },
      },
      'sess',
    );
    expect(JSON.stringify(prepared)).not.toContain('secret');
    expect(completeEntry(prepared, 5, decision.ts, AUDIT_GENESIS)).toMatchObject({
      ok: true,
      entry: { seq: 5, parent_seq: 4, session: 'sess', refs: { result: digestOf({ text: 'secret' }) } },
    });
    expect(completeEntry(prepared, 4, decision.ts, AUDIT_GENESIS)).toMatchObject({ ok: false });
    expect(() =>
      prepareEntry(
        { type: 'mcp.egress', refs: { server: 'gh', host: 'h', port: 70000, allowed: true, reason: '' } },
        's',
      ),
    ).toThrow(expect.objectContaining({ code: 'AUDIT_INVALID_ENTRY' }));
  });
});

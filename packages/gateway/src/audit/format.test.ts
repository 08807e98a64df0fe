import { digestOf } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import {
  canonicalForm,
  checkEntryShape,
  completeEntry,
  contentDigest,
  entryLine,
  hashLine,
  PrecomputedDigest,
  prepareEntry,
  serializeEntry,
} from './format.js';
import { AUDIT_GENESIS, type AuditEntry, type AuditInput } from './types.js';

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

  it('accepts a prompt decision and result marked with kind, and writes kind right after tool', () => {
    const prompt = { ...decision, refs: { ...decision.refs, kind: 'prompt' } };
    expect(checkEntryShape(prompt)).toMatchObject({ ok: true });
    expect(serializeEntry(prompt as AuditEntry)).toContain('"tool":"t","kind":"prompt","allowed":true');
    // An entry of an older version (no kind) keeps its exact bytes.
    expect(serializeEntry(decision as AuditEntry)).toContain('"tool":"t","allowed":true');
    const result = {
      ...decision,
      seq: 3,
      type: 'mcp.result',
      parent_seq: 2,
      refs: { server: 'gh', tool: 't', kind: 'prompt', is_error: false, result: null },
    };
    expect(checkEntryShape(result)).toMatchObject({ ok: true });
  });

  it.each([
    ['an unknown top-level field', { ...decision, extra: 1 }, /unknown field extra/],
    [
      'a kind it does not know',
      { ...decision, refs: { ...decision.refs, kind: 'tool' } },
      /refs\.kind must be "prompt"/,
    ],
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

  it('writes null for a value nested too deeply to canonicalise, instead of failing the entry', () => {
    const deep = JSON.parse(`{"content":[],"_meta":${'{"a":'.repeat(50_000)}1${'}'.repeat(50_000)}}`);
    expect(contentDigest(deep)).toBeNull();
    const prepared = prepareEntry(
      { type: 'mcp.result', parentSeq: 1, refs: { server: 'gh', tool: 't', is_error: true, result: deep } },
      's',
    );
    expect(prepared.fields).toMatchObject({ refs: { result: null } });
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

describe('canonicalForm (one serialisation for the size check and the digest)', () => {
  const resultEntry = (result: unknown) =>
    prepareEntry(
      { type: 'mcp.result', parentSeq: 1, refs: { server: 'gh', tool: 't', is_error: false, result } },
      's',
    ).fields as { refs: { result: unknown } };

  it('gives the digest digestOf gives, for every kind of JSON value', () => {
    const values: unknown[] = [
      { z: 1, a: [true, null, -0, 1e21, 5e-324, 0.1], m: { y: '', b: 'x' } },
      { text: 'quote " backslash \\ newline \n tab \t nul \u0000 del \u007f' },
      { text: 'é ü 中文 emoji 😀 U+2028 \u2028' },
      JSON.parse('{"__proto__":{"polluted":1},"content":[]}'),
      [],
      'plain',
      42,
    ];
    for (const value of values) {
      const { json, digest } = canonicalForm(value);
      expect(digest.digest).toBe(digestOf(value));
      expect(json).toBeDefined();
      // Same bytes as JSON.stringify, in another key order: the size check counts these.
      expect(Buffer.byteLength(json as string)).toBe(Buffer.byteLength(JSON.stringify(value)));
    }
  });

  it('has no json and a null digest for a lone surrogate or a value nested too deeply', () => {
    expect(canonicalForm({ a: '\udc00' })).toEqual({ digest: new PrecomputedDigest(null) });
    const deep = JSON.parse(`${'['.repeat(50_000)}${']'.repeat(50_000)}`);
    expect(canonicalForm(deep).json).toBeUndefined();
    expect(canonicalForm(deep).digest.digest).toBeNull();
  });

  it('takes a precomputed digest as it is, and hashes anything that only looks like one', () => {
    const digest = digestOf({ real: 1 });
    expect(resultEntry(new PrecomputedDigest(digest)).refs.result).toBe(digest);
    // What a server sends is parsed JSON: the same shape as a plain object is a value to hash.
    const lookalike = JSON.parse(`{"digest":"${digest}"}`);
    expect(resultEntry(lookalike).refs.result).toBe(digestOf(lookalike));
    expect(resultEntry(lookalike).refs.result).not.toBe(digest);
  });
});

describe('mcp.result dropped', () => {
  const result = {
    seq: 3,
    ts: decision.ts,
    type: 'mcp.result',
    session: 's',
    parent_seq: 2,
    refs: { server: 'gh', tool: 't', is_error: false, result: null },
    prev: AUDIT_GENESIS,
  };
  const withDropped = (dropped: unknown) => ({ ...result, refs: { ...result.refs, dropped } });

  it('accepts an entry without it (written before it existed) and one with a count', () => {
    expect(checkEntryShape(result)).toMatchObject({ ok: true });
    expect(checkEntryShape(withDropped(1))).toMatchObject({ ok: true });
    expect(checkEntryShape(withDropped(Number.MAX_SAFE_INTEGER))).toMatchObject({ ok: true });
  });

  it.each([0, -1, 1.5, '3', null, true, [1], 2 ** 53])('refuses dropped %j', (dropped) => {
    const check = checkEntryShape(withDropped(dropped));
    expect(check).toMatchObject({ ok: false, message: 'refs.dropped must be a positive integer' });
  });

  it('writes it last in refs, after reason, and the writer prepares it', () => {
    const line = serializeEntry({
      ...result,
      refs: { dropped: 4, reason: 'r', result: null, is_error: true, tool: 't', server: 'gh' },
    } as AuditEntry);
    expect(line).toContain(
      '"refs":{"server":"gh","tool":"t","is_error":true,"result":null,"reason":"r","dropped":4}',
    );
    const prepared = prepareEntry(
      {
        type: 'mcp.result',
        parentSeq: 1,
        refs: { server: 'gh', tool: 't', is_error: false, result: {}, dropped: 2 },
      },
      's',
    );
    expect(completeEntry(prepared, 2, decision.ts, AUDIT_GENESIS)).toMatchObject({
      ok: true,
      entry: { refs: { dropped: 2 } },
    });
    expect(() =>
      prepareEntry(
        {
          type: 'mcp.result',
          parentSeq: 1,
          refs: { server: 'gh', tool: 't', is_error: false, result: {}, dropped: 0 },
        },
        's',
      ),
    ).toThrow(expect.objectContaining({ code: 'AUDIT_INVALID_ENTRY' }));
  });
});

describe('entryLine', () => {
  const prev = hashLine('the line before');
  const ts = '2026-11-30T17:00:00.123Z';
  // One input of every type, with optional fields, escapes and a long (clipped) string.
  const inputs: AuditInput[] = [
    { type: 'gateway.start', refs: { pid: 42, version: '1.2.3' } },
    {
      type: 'mcp.decision',
      agent: 'claude "code"',
      scope: 'repo\nx',
      refs: {
        phase: 'call',
        server: 'gh',
        tool: 'é\u2028t',
        allowed: false,
        rule: 'r',
        reason: 'x'.repeat(5000),
        arguments: { b: [1, '\u0000'], a: 'ü' },
        policy: { name: 'p', digest: digestOf({}), signer: 'k' },
      },
    },
    { type: 'mcp.decision', refs: { phase: 'expose', server: 'gh', tool: 't', allowed: true, rule: 'r' } },
    {
      type: 'mcp.result',
      parentSeq: 6,
      refs: {
        server: 'gh',
        tool: 'p',
        kind: 'prompt',
        is_error: true,
        result: { x: 1 },
        dropped: 2,
        cancelled: 'client',
      },
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
  ] as AuditInput[];

  it.each(inputs.map((input) => [input.type, input] as const))(
    'writes a %s entry byte for byte as serializeEntry does',
    (_type, input) => {
      const prepared = prepareEntry(input, 'sess');
      const complete = completeEntry(prepared, 7, ts, prev);
      if (!complete.ok) throw new Error(complete.message);
      const line = entryLine(prepared, 7, ts, prev);
      expect(line).toEqual({ ok: true, line: serializeEntry(complete.entry) });
      if (!line.ok) return;
      const parsed = checkEntryShape(JSON.parse(line.line));
      expect(parsed.ok).toBe(true);
      expect(serializeEntry((parsed as { entry: AuditEntry }).entry)).toBe(line.line);
    },
  );

  it('checks what was not known when the entry was prepared', () => {
    const result = prepareEntry(inputs[3] as AuditInput, 's');
    expect(entryLine(result, 6, ts, prev)).toEqual({
      ok: false,
      message: 'parent_seq 6 must come before seq 6',
    });
    expect(entryLine(result, 7, ts, prev).ok).toBe(true);
    const start = prepareEntry(inputs[0] as AuditInput, 's');
    expect(entryLine(start, 0, ts, prev)).toMatchObject({ ok: false, message: /seq must be/ });
    expect(entryLine(start, 1.5, ts, prev)).toMatchObject({ ok: false, message: /seq must be/ });
    expect(entryLine(start, 1, '2026-11-30T17:00:00Z', prev)).toMatchObject({
      ok: false,
      message: /ts must be/,
    });
    expect(entryLine(start, 1, '2026-13-40T17:00:00.000Z', prev)).toMatchObject({
      ok: false,
      message: /ts must be/,
    });
    expect(entryLine(start, 1, ts, `${prev}"`)).toMatchObject({ ok: false, message: /prev must be/ });
  });
});

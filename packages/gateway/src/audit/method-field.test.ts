import { describe, expect, it } from 'vitest';
import { scanLine } from './scan.js';
import { checkEntryShape, crossFieldProblem, serializeEntry } from './spec.js';
import { AUDIT_GENESIS, type AuditEntry } from './types.js';

const decision = (refs: Record<string, unknown>) =>
  ({
    seq: 2,
    ts: '2026-12-01T00:00:00.000Z',
    type: 'mcp.decision',
    session: 's',
    refs: {
      phase: 'call',
      server: 'docs',
      tool: 'greet',
      kind: 'prompt',
      method: 'completion/complete',
      allowed: false,
      rule: 'no-s',
      arguments: `sha256:${'a'.repeat(64)}`,
      ...refs,
    },
    prev: AUDIT_GENESIS,
  }) as unknown as AuditEntry;

describe('the method field of call decisions and results', () => {
  it('accepts each method this version writes, and a log-level subject, in the written order', () => {
    for (const [method, kind] of [
      ['completion/complete', 'prompt'],
      ['completion/complete', 'template'],
      ['resources/subscribe', 'resource'],
      ['resources/unsubscribe', 'resource'],
      ['logging/setLevel', 'log-level'],
    ]) {
      const line = serializeEntry(decision({ method, kind }));
      expect(checkEntryShape(JSON.parse(line)), method).toMatchObject({ ok: true });
      expect(line).toContain(`"kind":"${kind}","method":"${method}","allowed"`);
      // The scanner's fast path accepts exactly what the reference path does.
      expect(scanLine(Buffer.from(line)), method).toMatchObject({ seq: 2 });
    }
  });

  it('refuses a method it does not write (the kind implies tools/call, prompts/get, resources/read)', () => {
    for (const method of ['tools/call', 'prompts/get', 'resources/read', 'sampling/createMessage', '', 1]) {
      const line = serializeEntry(decision({ method }));
      expect(checkEntryShape(JSON.parse(line)), String(method)).toMatchObject({ ok: false });
      expect(scanLine(Buffer.from(line)), String(method)).toBeUndefined();
    }
  });

  it('refuses a method on an expose decision, a method its kind does not fit, and a log level with no method', () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [
        { phase: 'expose', arguments: undefined, digest: `sha256:${'b'.repeat(64)}` },
        /an expose decision names no method/,
      ],
      [{ method: 'logging/setLevel' }, /a logging\/setLevel entry must be about a log-level/],
      [{ method: 'resources/subscribe', kind: 'template' }, /must be about a resource/],
      [{ method: 'completion/complete', kind: undefined }, /must be about a prompt or template/],
      [{ method: undefined, kind: 'log-level' }, /a log-level entry must name its method/],
      [{ method: undefined, kind: 'instructions' }, /only an expose decision is about instructions/],
    ];
    for (const [refs, why] of bad) {
      const line = serializeEntry(decision(refs));
      expect(checkEntryShape(JSON.parse(line)), line).toMatchObject({
        ok: false,
        message: expect.stringMatching(why),
      });
      expect(scanLine(Buffer.from(line)), line).toBeUndefined();
    }
  });

  it("accepts an expose decision about a server's instructions, and nothing else about them", () => {
    const exposed = serializeEntry(
      decision({
        phase: 'expose',
        tool: 'instructions',
        kind: 'instructions',
        method: undefined,
        arguments: undefined,
        digest: `sha256:${'b'.repeat(64)}`,
      }),
    );
    expect(checkEntryShape(JSON.parse(exposed)), exposed).toMatchObject({ ok: true });
    expect(scanLine(Buffer.from(exposed)), exposed).toMatchObject({ seq: 2 });
    expect(
      crossFieldProblem({ type: 'mcp.result', seq: 3, parent_seq: 2, refs: { kind: 'instructions' } }),
    ).toMatch(/a result is never about instructions/);
  });
});

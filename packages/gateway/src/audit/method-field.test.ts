import { describe, expect, it } from 'vitest';
import { scanLine } from './scan.js';
import { checkEntryShape, serializeEntry } from './spec.js';
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
    for (const method of [
      'completion/complete',
      'resources/subscribe',
      'resources/unsubscribe',
      'logging/setLevel',
    ]) {
      const entry = decision({
        method,
        ...(method === 'logging/setLevel' ? { kind: 'log-level', tool: 'debug' } : {}),
      });
      const line = serializeEntry(entry);
      expect(checkEntryShape(JSON.parse(line)), method).toMatchObject({ ok: true });
      expect(line).toContain(
        `"kind":"${method === 'logging/setLevel' ? 'log-level' : 'prompt'}","method":"${method}","allowed"`,
      );
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
});

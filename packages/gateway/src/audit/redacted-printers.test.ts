import { describe, expect, it } from 'vitest';
import { shownEntry } from '../console/audit-feed.js';
import { describeAuditLine } from './describe.js';
import { checkEntryShape, serializeEntry } from './spec.js';
import { AUDIT_GENESIS, type AuditEntry } from './types.js';

const SECRET = 'hunter2Secret';
const entry = {
  seq: 2,
  ts: '2026-12-01T00:00:00.000Z',
  type: 'mcp.decision',
  session: 's',
  refs: {
    phase: 'call',
    server: 'docs',
    tool: `https://api.example.com/doc?access_token=${SECRET}`,
    kind: 'resource',
    allowed: false,
    rule: 'no-fetch',
    reason: `cannot fetch https://u:${SECRET}@h/x`,
    arguments: `sha256:${'a'.repeat(64)}`,
  },
  prev: AUDIT_GENESIS,
} as unknown as AuditEntry;
const raw = serializeEntry(entry);

describe('audit printers show no secret from an entry', () => {
  it('the entry is one the log may hold', () => {
    expect(checkEntryShape(JSON.parse(raw))).toMatchObject({ ok: true });
    expect(raw).toContain(SECRET);
  });

  it('audit tail: the resource URI and the reason are redacted', () => {
    const line = describeAuditLine({ raw, entry } as never);
    expect(line).not.toContain(SECRET);
    expect(line).toContain('docs/resource https://api.example.com/doc?access_token=***');
    expect(line).toContain('(cannot fetch https://***@h/x)');
  });

  it('the console: subject, reason and the JSON of the entry are redacted', () => {
    const shown = shownEntry(1, { raw, entry } as never);
    expect(JSON.stringify(shown)).not.toContain(SECRET);
    expect(shown.subject).toBe('resource https://api.example.com/doc?access_token=***');
    expect(shown.json).toContain('"reason": "cannot fetch https://***@h/x"');
    // What holds no secret is shown as it is: the digest, the rule.
    expect(shown.json).toContain(`"arguments": "sha256:${'a'.repeat(64)}"`);
  });
});

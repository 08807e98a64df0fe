import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../audit/index.js';
import { ocsfEvent } from './ocsf.js';

const context = {
  seq: 7,
  hash: `sha256:${'b'.repeat(64)}`,
  log: `sha256:${'c'.repeat(64)}`,
  host: 'dev',
  version: '0.1.0',
} as const;
const base = {
  seq: 7,
  ts: '2026-12-01T10:00:00.123Z',
  session: 's-1',
  prev: `sha256:${'a'.repeat(64)}`,
} as const;

describe('OCSF API Activity (6003)', () => {
  it('maps a refused call: class, activity, denial, rule and policy, the arguments digest only', () => {
    const entry = {
      ...base,
      type: 'mcp.decision',
      agent: 'ci-bot',
      scope: 'contractors',
      refs: {
        phase: 'call',
        server: 'github',
        tool: 'create_issue',
        allowed: false,
        rule: 'no-issues-on-prod',
        reason: 'see https://user:hunter2@example.com/x',
        policy: { name: 'corp', digest: `sha256:${'d'.repeat(64)}`, signer: 'k1' },
        arguments: `sha256:${'e'.repeat(64)}`,
      },
    } as AuditEntry;
    const event = ocsfEvent(entry, context);
    expect(event).toMatchObject({
      class_uid: 6003,
      category_uid: 6,
      activity_id: 99,
      type_uid: 600399,
      time: Date.parse(base.ts),
      status_id: 2,
      action_id: 2,
      disposition_id: 2,
      metadata: {
        version: '1.1.0',
        uid: context.hash,
        sequence: 7,
        product: { name: 'ringfence', version: '0.1.0' },
        event_code: 'mcp.decision',
      },
      actor: { user: { name: 'ci-bot', groups: [{ name: 'contractors' }] }, session: { uid: 's-1' } },
      api: { operation: 'tools/call', service: { name: 'github' }, request: { uid: '7' } },
      resources: [{ name: 'create_issue', type: 'tool' }],
      policy: { name: 'no-issues-on-prod', uid: `sha256:${'d'.repeat(64)}` },
      unmapped: { log: context.log, prev: base.prev, arguments: `sha256:${'e'.repeat(64)}` },
    });
    // A reason is redacted as `audit tail` shows it: no password leaves in an OCSF event.
    expect(JSON.stringify(event)).not.toContain('hunter2');
  });

  it('maps a result to its call (request uid = parent seq) and an error to failure', () => {
    const entry = {
      ...base,
      type: 'mcp.result',
      parent_seq: 6,
      refs: {
        server: 'files',
        tool: 'doc',
        kind: 'resource',
        is_error: true,
        result: `sha256:${'f'.repeat(64)}`,
      },
    } as AuditEntry;
    const event = ocsfEvent(entry, context);
    expect(event).toMatchObject({
      activity_id: 2,
      type_uid: 600302,
      status_id: 2,
      api: { operation: 'resources/read', request: { uid: '6' }, response: { error: 'error' } },
      metadata: { correlation_uid: 's-1:6' },
      unmapped: { parent_seq: 6, result: `sha256:${'f'.repeat(64)}` },
    });
    expect(event).not.toHaveProperty('action_id');
  });

  it('maps egress to the host and port, allowed', () => {
    const entry = {
      ...base,
      type: 'mcp.egress',
      refs: {
        server: 'gh',
        host: 'api.github.com',
        port: 443,
        allowed: true,
        reason: 'allowed by rule',
        status: 200,
      },
    } as AuditEntry;
    expect(ocsfEvent(entry, context)).toMatchObject({
      api: { operation: 'egress connect' },
      resources: [{ name: 'api.github.com:443', type: 'host' }],
      action: 'Allowed',
      status: 'Success',
    });
  });

  it('never holds a value an entry does not: every string in the event comes from the entry or the mapping', () => {
    const entry = { ...base, type: 'gateway.start', refs: { pid: 42, version: '0.1.0' } } as AuditEntry;
    const event = ocsfEvent(entry, context);
    expect(event).toMatchObject({ api: { operation: 'gateway start' }, status_id: 1, severity_id: 1 });
    expect(JSON.stringify(event)).not.toMatch(/arguments|result"/);
  });
});

describe('OCSF never ships a credential that audit tail hides', () => {
  it('redacts a resource URI as audit tail shows it (the URI is the request, it may carry a token)', async () => {
    const { redactUrl } = await import('../text/redact.js');
    const uri = 'https://docs.example.com/page?access_token=ghp_abcdefghijklmnopqrstuvwxyz0123456789';
    expect(redactUrl(uri)).not.toContain('ghp_abc');
    for (const type of ['mcp.decision', 'mcp.result'] as const) {
      const entry = {
        ...base,
        type,
        ...(type === 'mcp.result' ? { parent_seq: 6 } : {}),
        refs: {
          ...(type === 'mcp.decision' ? { phase: 'call', allowed: true, rule: 'r' } : { is_error: false }),
          server: 'docs',
          kind: 'resource',
          tool: uri,
        },
      } as unknown as AuditEntry;
      const text = JSON.stringify(ocsfEvent(entry, context));
      expect(text).not.toContain('ghp_abc');
      expect(ocsfEvent(entry, context).resources).toEqual([{ name: redactUrl(uri), type: 'resource' }]);
    }
  });
});

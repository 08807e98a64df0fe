// Arguments are egress, results are ingress: the credential scan in the call pipeline.
import { describe, expect, it } from 'vitest';
import type { AuditInput } from '../../audit/types.js';
import type { KnownCredential } from '../../credentials/known.js';
import { fixedCredentials } from '../../credentials/registered.js';
import type { Reach } from '../../credentials/scan/reach.js';
import { SecretScanner } from '../../credentials/scan/scanner.js';
import { FakeUpstream } from '../../ports/__fixtures__/fake-upstream.js';
import type { Caller } from '../../ports/caller.js';
import { LOCAL_ONLY, type PolicyView } from '../../ports/policy.js';
import type { SchemaChecks } from '../../ports/schema.js';
import type { CatalogEntry } from '../catalog.js';
import { runForward } from './index.js';
import type { PipelineDeps, ToolCallRequest } from './types.js';

const KEY_ID = ['AKIA', 'QWERTYUIOPASDFGH'].join('');
const STORED = 'Zq8vN2pL5xR7tW4k';
const OTHERS: KnownCredential = { id: 'deploy', class: 'aws', value: STORED, boundTo: ['deployer'] };
const OWN: KnownCredential = {
  id: 'files-token',
  class: 'generic',
  value: 'Hj3kL9mN2bV6cX1z',
  boundTo: ['files'],
};

const entry: CatalogEntry = {
  kind: 'tool',
  exposedName: 'files_write',
  server: 'files',
  tool: 'write',
  digest: `sha256:${'a'.repeat(64)}`,
  presented: {},
  inputSchema: { type: 'object' },
  outputSchema: undefined,
};

function harness(
  options: {
    decide?: ReturnType<PolicyView['decideCall']>;
    reach?: Reach;
    patterns?: { class: string; pattern: string }[];
    result?: unknown;
    fail?: Error;
    maxBytes?: number;
  } = {},
) {
  const written: AuditInput[] = [];
  const calls: Record<string, unknown>[] = [];
  const ok = async () => ({ ok: true });
  const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
  const upstream = new FakeUpstream('files', {
    destination: 'sandbox mcp-files',
    limits: { maxResultBytes: options.maxBytes ?? 4 << 20 },
    callTool: async (_name, args) => {
      calls.push(args);
      if (options.fail) throw options.fail;
      return options.result ?? { content: [{ type: 'text', text: 'done' }] };
    },
  });
  Object.defineProperty(upstream, 'reach', {
    value: options.reach ?? { kind: 'hosts', hosts: ['api.files.example'] },
  });
  const deps: PipelineDeps = {
    policy: {
      ...LOCAL_ONLY,
      decideCall: () => options.decide ?? { action: 'allow', rule: 'no-policy', reason: 'r' },
    },
    guard,
    audit: {
      append: async (input) => {
        written.push(input);
        return written.length;
      },
    },
    policyRef: {},
    maxResultBytes: options.maxBytes ?? 4 << 20,
    log: () => {},
    linkUri: (server, uri) => `ringfence:${server}/${uri}`,
    secrets: new SecretScanner(fixedCredentials([OTHERS, OWN]), options.patterns),
  };
  const call = (args: Record<string, unknown>, caller: Caller = {}) =>
    runForward(deps, {
      method: 'tools/call',
      entry,
      args,
      caller,
      upstream,
      unavailableReason: '',
      protocolVersion: '2025-11-25',
    } satisfies ToolCallRequest);
  const decision = () => written.find((w) => w.type === 'mcp.decision')!.refs as Record<string, unknown>;
  const result = () =>
    written.find((w) => w.type === 'mcp.result')?.refs as Record<string, unknown> | undefined;
  return { call, calls, written, decision, result };
}

const text = (reply: { content: unknown[] }) => (reply.content[0] as { text: string }).text;
const nested = (value: string) => ({ path: 'notes.txt', options: { meta: [{ note: value }] } });

describe('arguments are egress', () => {
  it('a stored credential bound to another server, in a nested field: refused, audited by class and path', async () => {
    const h = harness();
    const reply = await h.call(nested(`creds: ${STORED}`));
    expect(reply.isError).toBe(true);
    expect(text(reply)).toMatch(
      /^ringfence refused files\/write: the arguments carry a secret \(aws, at \/options\/meta\/0\/note\)/,
    );
    expect(text(reply)).toMatch(/not bound to files/);
    expect(h.calls).toEqual([]);
    expect(h.decision()).toMatchObject({
      allowed: false,
      rule: 'egress-secrets',
      secrets: 'aws (credential deploy) at /options/meta/0/note',
    });
    expect(JSON.stringify(h.written) + text(reply)).not.toContain(STORED);
  });

  it('a key of a known format never stored: refused the same way', async () => {
    const h = harness();
    const reply = await h.call(nested(`aws_access_key_id=${KEY_ID}`));
    expect(text(reply)).toMatch(/no stored credential binds a key like this to files/);
    expect(h.calls).toEqual([]);
    expect(h.decision().secrets).toBe('aws at /options/meta/0/note');
    expect(JSON.stringify(h.written) + text(reply)).not.toContain(KEY_ID);
  });

  it('base64 and split variants are refused too', async () => {
    for (const args of [
      { blob: Buffer.from(`[default]\n${STORED}\n`).toString('base64') },
      { parts: [STORED.slice(0, 6), STORED.slice(6)] },
      { [KEY_ID]: 'as a key' },
    ]) {
      const h = harness();
      expect((await h.call(args)).isError, JSON.stringify(Object.keys(args))).toBe(true);
      expect(h.calls).toEqual([]);
    }
  });

  it('the credential bound to this server passes, and is not noted', async () => {
    const h = harness();
    const reply = await h.call({ token: OWN.value });
    expect(reply.isError).toBeUndefined();
    expect(h.calls).toEqual([{ token: OWN.value }]);
    expect(h.decision()).not.toHaveProperty('secrets');
  });

  it('to a server with no network even its own credential is refused, whatever the policy says', async () => {
    const h = harness({
      reach: { kind: 'none' },
      decide: { action: 'allow', rule: 'r', reason: 'r', egressSecrets: { action: 'allow', from: 'policy' } },
    });
    const reply = await h.call({ token: OWN.value });
    expect(text(reply)).toMatch(/files has no network/);
    expect(h.calls).toEqual([]);
  });

  it('egress_secrets: allow lets it go, and the decision entry still names class and path', async () => {
    const h = harness({
      decide: {
        action: 'allow',
        rule: 'vault',
        reason: 'r',
        egressSecrets: { action: 'allow', from: 'rule' },
      },
    });
    await h.call({ key: KEY_ID });
    expect(h.calls).toEqual([{ key: KEY_ID }]);
    expect(h.decision()).toMatchObject({ allowed: true, secrets: 'aws at /key' });
  });

  it('egress_secrets: ask names the server, where it can send and the class, never the value', async () => {
    const asked: string[] = [];
    const ask = (answer: 'accept' | 'decline'): Caller => ({
      ask: async (question) => {
        asked.push(question);
        return answer;
      },
    });
    const decide = {
      action: 'allow',
      rule: 'r',
      reason: 'r',
      egressSecrets: { action: 'ask', from: 'policy' },
    } as const;
    const declined = harness({ decide });
    const reply = await declined.call({ key: KEY_ID }, ask('decline'));
    expect(text(reply)).toMatch(/did not approve sending it \(decline\)/);
    expect(declined.calls).toEqual([]);
    expect(asked[0]).toMatch(
      /carry aws \(at \/key\).*goes to files, which can reach only api\.files\.example\. The value is not shown here\.$/,
    );
    expect(asked[0]).not.toContain(KEY_ID);
    const accepted = harness({ decide, reach: { kind: 'remote', host: 'mcp.example.com' } });
    await accepted.call({ key: KEY_ID }, ask('accept'));
    expect(asked[1]).toMatch(/can reach the remote host mcp\.example\.com/);
    expect(accepted.calls).toEqual([{ key: KEY_ID }]);
    expect(accepted.decision().secrets).toBe('aws at /key (approved by the person)');
    // No client to ask: refused.
    const none = harness({ decide });
    expect(text(await none.call({ key: KEY_ID }))).toMatch(/this client cannot be asked/);
    expect(none.calls).toEqual([]);
  });

  it('a secret used as an object key never reaches a path: not in the reply, the question or any audit entry', async () => {
    const GH = ['ghp_', 'a1B2'.repeat(9)].join('');
    const JWT = [
      'eyJhbGciOiJIUzI1NiJ9',
      'eyJzdWIiOiIxMjM0In0',
      'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk',
    ].join('.');
    for (const [args, key] of [
      [{ note: { [STORED]: GH } }, STORED],
      [{ [GH]: KEY_ID }, GH],
      [{ outer: { [KEY_ID]: { deeper: JWT } } }, KEY_ID],
    ] as const) {
      const refused = harness();
      const reply = await refused.call(args as Record<string, unknown>);
      expect(reply.isError).toBe(true);
      expect(text(reply)).toMatch(/~secret/);
      expect(refused.calls).toEqual([]);
      expect(JSON.stringify(refused.written) + text(reply), key).not.toContain(key);
      // Asked, and let go by policy: the question and the decision entry hold no key either.
      const asked: string[] = [];
      const decide = (action: 'ask' | 'allow') =>
        ({ action: 'allow', rule: 'r', reason: 'r', egressSecrets: { action, from: 'policy' } }) as const;
      const ask = harness({ decide: decide('ask') });
      await ask.call(args as Record<string, unknown>, {
        ask: async (question) => {
          asked.push(question);
          return 'accept';
        },
      });
      const allow = harness({ decide: decide('allow') });
      await allow.call(args as Record<string, unknown>);
      expect(asked).toHaveLength(1);
      expect(asked[0] + JSON.stringify(ask.decision()) + JSON.stringify(allow.decision()), key).not.toContain(
        key,
      );
    }
  });

  it("the organisation's own patterns (RE2) are found; one RE2 refuses makes every call refused", async () => {
    const h = harness({ patterns: [{ class: 'acme', pattern: 'acme_[a-z0-9]{12}' }] });
    expect(text(await h.call({ q: 'use acme_0123456789ab now' }))).toMatch(/carry a secret \(acme, at \/q\)/);
    const broken = harness({ patterns: [{ class: 'acme', pattern: '(a)\\1' }] });
    const reply = await broken.call({ q: 'nothing secret' });
    expect(text(reply)).toMatch(/secret_patterns\[0\] \(class "acme"\) is not a pattern RE2 accepts/);
    expect(broken.calls).toEqual([]);
  });

  it('a 1 MiB argument is scanned whole (the key at its very end is found)', async () => {
    const h = harness();
    const reply = await h.call({ body: `${'lorem ipsum '.repeat(87382)}${KEY_ID}` });
    expect(reply.isError).toBe(true);
    expect(h.calls).toEqual([]);
    expect(h.decision().secrets).toBe('aws at /body');
  });
});

describe('results are ingress', () => {
  it('every text, nested structuredContent and embedded resource text: each key replaced by its marker, counted', async () => {
    const structured = { creds: { list: [`id ${KEY_ID}`], own: OWN.value } };
    const h = harness({
      result: {
        content: [
          { type: 'text', text: JSON.stringify(structured) },
          { type: 'resource', resource: { uri: 'file:///x', text: `aws_secret=${STORED}` } },
        ],
        structuredContent: structured,
      },
    });
    const reply = (await h.call({ path: 'x' })) as {
      content: { text?: string; resource?: { text: string } }[];
      structuredContent?: unknown;
    };
    const shown = JSON.stringify(reply);
    for (const value of [KEY_ID, STORED, OWN.value]) expect(shown).not.toContain(value);
    // The structuredContent still agrees with its text twin: both redacted alike, so it is passed.
    expect(reply.structuredContent).toEqual({
      creds: { list: ['id [ringfence: aws key removed]'], own: '[ringfence: generic key removed]' },
    });
    expect(JSON.parse(reply.content[0]!.text!)).toEqual(reply.structuredContent);
    expect(reply.content[1]!.resource!.text).toBe('aws_secret=[ringfence: aws key removed]');
    expect(h.result()).toMatchObject({ redacted: 5, redacted_classes: 'aws,generic' });
  });

  it("a server's error text is scanned too", async () => {
    const { call, result } = harness({
      fail: Object.assign(new Error(`bad credentials ${KEY_ID}`), { code: -32000 }),
    });
    const reply = await call({ path: 'x' });
    expect(text(reply)).toMatch(/failed upstream: \[-32000\] bad credentials \[ringfence: aws key removed\]/);
    expect(result()).toMatchObject({ is_error: true, redacted: 1, redacted_classes: 'aws' });
  });

  it('a clean result is passed as it came and its entry counts nothing', async () => {
    const h = harness();
    await h.call({ path: 'x' });
    await new Promise((r) => setTimeout(r, 80));
    expect(h.result()).not.toHaveProperty('redacted');
  });
});

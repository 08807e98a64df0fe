import { describe, expect, it } from 'vitest';
import type { AuditInput } from '../../audit/types.js';
import { DEFAULT_CALL_LIMITS } from '../../config/limits.js';
import type { AuditSink } from '../../ports/audit.js';
import type { Caller } from '../../ports/caller.js';
import { LOCAL_ONLY, type PolicyView } from '../../ports/policy.js';
import type { SchemaChecks } from '../../ports/schema.js';
import type { Upstream } from '../../ports/upstream.js';
import type { CatalogEntry } from '../catalog.js';
import { lookup, PREVIEW_CHARS, runForward } from './index.js';
import type { ForwardedRequest, PipelineDeps } from './types.js';

const entry: CatalogEntry = {
  exposedName: 'files_read',
  server: 'files',
  tool: 'read',
  digest: `sha256:${'a'.repeat(64)}`,
  presented: {},
  inputSchema: { type: 'object' },
  outputSchema: undefined,
};

interface Written {
  input: AuditInput;
  defer: boolean;
}

function harness(
  overrides: {
    policy?: Partial<PolicyView>;
    guard?: Partial<SchemaChecks>;
    callTool?: Upstream['callTool'];
    maxResultBytes?: number;
  } = {},
) {
  const written: Written[] = [];
  const events: string[] = [];
  const audit: AuditSink = {
    append: async (input, options) => {
      written.push({ input, defer: options?.defer === true });
      events.push(`audit:${input.type}`);
      return written.length;
    },
  };
  const ok = async () => ({ ok: true });
  const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok, ...overrides.guard };
  const calls: Record<string, unknown>[] = [];
  const upstream: Upstream = {
    name: 'files',
    destination: 'sandbox mcp-files',
    limits: { ...DEFAULT_CALL_LIMITS, maxResultBytes: overrides.maxResultBytes ?? 1024 },
    start: async () => {},
    listTools: async () => ({ tools: [], problems: [] }),
    callTool: async (name, args, options) => {
      calls.push(args);
      events.push('forward');
      return overrides.callTool
        ? overrides.callTool(name, args, options)
        : { content: [{ type: 'text', text: 'hello' }] };
    },
    onToolsChanged: () => {},
    onClosed: () => {},
    close: async () => {},
  };
  const deps: PipelineDeps = {
    policy: { ...LOCAL_ONLY, ...overrides.policy },
    guard,
    audit,
    policyRef: {},
    maxResultBytes: overrides.maxResultBytes ?? 1024,
    log: () => {},
  };
  const request = (args: unknown, caller: Caller = {}, available = true): ForwardedRequest => ({
    method: 'tools/call',
    entry,
    args,
    caller,
    upstream: available ? upstream : undefined,
    unavailableReason: 'its container exited with code 1',
  });
  return { deps, request, written, calls, events };
}

const text = (result: { content: unknown[] }) => (result.content[0] as { text: string }).text;
const decisions = (written: Written[]) => written.filter((w) => w.input.type === 'mcp.decision');
const refs = (w: Written | undefined) => (w?.input as { refs?: Record<string, unknown> } | undefined)?.refs;

describe('the call pipeline: every refusal writes one decision entry and never reaches the upstream', () => {
  const refusals: {
    name: string;
    setup: Parameters<typeof harness>[0];
    args: unknown;
    caller?: Caller;
    available?: boolean;
    rule: string;
    reply: RegExp;
  }[] = [
    {
      name: 'arguments that are not an object',
      setup: {},
      args: ['a'],
      rule: 'arguments',
      reply: /^ringfence refused files\/read: the arguments must be a JSON object/,
    },
    {
      name: 'arguments over the cap',
      setup: { maxResultBytes: 10 },
      args: { path: 'x'.repeat(20) },
      rule: 'arguments',
      reply: /over the 10-byte cap\. Send less\.$/,
    },
    {
      name: 'a policy deny',
      setup: { policy: { decideCall: () => ({ action: 'deny', rule: 'no-read', reason: 'reads are off' }) } },
      args: {},
      rule: 'no-read',
      reply: /reads are off \(policy rule "no-read"\)/,
    },
    {
      name: 'an ask the client cannot put to a person',
      setup: { policy: { decideCall: () => ({ action: 'ask', rule: 'ask-me', reason: 'sensitive' }) } },
      args: {},
      rule: 'ask-me',
      reply: /cannot ask \(it does not support MCP elicitation\)\. Use a client that supports elicitation/,
    },
    {
      name: 'an ask whose arguments are too long to show whole',
      setup: {
        maxResultBytes: 10_000,
        policy: { decideCall: () => ({ action: 'ask', rule: 'ask-me', reason: 'sensitive' }) },
      },
      args: { path: 'x'.repeat(PREVIEW_CHARS) },
      caller: { ask: async () => 'accept' },
      rule: 'ask-me',
      reply: /too long \(over 2000 characters\) to show them whole/,
    },
    {
      name: 'an ask the person declines',
      setup: { policy: { decideCall: () => ({ action: 'ask', rule: 'ask-me', reason: 'sensitive' }) } },
      args: {},
      caller: { ask: async () => 'decline' },
      rule: 'ask-me',
      reply: /did not approve it \(decline\)/,
    },
    {
      name: 'an ask whose prompt fails',
      setup: { policy: { decideCall: () => ({ action: 'ask', rule: 'ask-me', reason: 'sensitive' }) } },
      args: {},
      caller: { ask: async () => Promise.reject(new Error('client went away')) },
      rule: 'ask-me',
      reply: /did not approve it \(cancel\)/,
    },
    {
      name: 'arguments the pinned input schema refuses',
      setup: {
        guard: { checkArguments: async () => ({ ok: false, code: 'SCHEMA', message: 'path is required' }) },
      },
      args: {},
      rule: 'input-schema',
      reply: /pinned input schema: path is required\. Fix the arguments and call again\.$/,
    },
    {
      name: 'a server that is not running',
      setup: {},
      args: {},
      available: false,
      rule: 'unavailable',
      reply:
        /^ringfence could not call files\/read: the server files is not available \(its container exited with code 1\)\. Restart the gateway/,
    },
  ];

  for (const c of refusals) {
    it(`refuses ${c.name}`, async () => {
      const h = harness(c.setup);
      const result = await runForward(h.deps, h.request(c.args, c.caller, c.available ?? true));
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(c.reply);
      expect(h.calls).toEqual([]);
      expect(h.written).toHaveLength(1);
      expect(refs(h.written[0])).toMatchObject({ phase: 'call', allowed: false, rule: c.rule });
      expect(h.written[0]?.defer).toBe(false);
    });
  }
});

describe('the call pipeline: forwarding', () => {
  it('makes the allowing decision durable before forwarding, then defers the result entry', async () => {
    const h = harness();
    const result = await runForward(h.deps, h.request({ path: 'a' }, { agent: 'ci', scope: 'build' }));
    expect(text(result)).toBe('hello');
    expect(h.events).toEqual(['audit:mcp.decision', 'forward', 'audit:mcp.result']);
    expect(refs(decisions(h.written)[0])).toMatchObject({ allowed: true, rule: 'no-policy' });
    expect(h.written[0]?.input).toMatchObject({ agent: 'ci', scope: 'build' });
    const result1 = h.written[1];
    expect(result1?.defer).toBe(true);
    expect(result1?.input).toMatchObject({ type: 'mcp.result', parentSeq: 1, agent: 'ci' });
    expect(refs(result1)).toMatchObject({ server: 'files', tool: 'read', is_error: false });
    expect(refs(result1)).not.toHaveProperty('reason');
  });

  it('asks a person with the whole arguments, printable, and forwards on accept', async () => {
    let question = '';
    const h = harness({
      policy: { decideCall: () => ({ action: 'ask', rule: 'ask-me', reason: 'sensitive' }) },
    });
    const result = await runForward(
      h.deps,
      h.request(
        { b: 'two\u001b[2K', a: 1 },
        {
          ask: async (q) => {
            question = q;
            return 'accept';
          },
        },
      ),
    );
    expect(result.isError).toBeUndefined();
    expect(question).toContain('Allow files/read? Arguments go to files (sandbox mcp-files)');
    expect(question).toContain('{"a":1,"b":"two');
    expect(question).not.toContain('\u001b');
    expect(refs(h.written[0])).toMatchObject({ allowed: true, rule: 'ask-me' });
  });

  it('records an upstream failure as an error result with only a capped, printable message', async () => {
    const h = harness({
      callTool: async () => {
        throw Object.assign(new Error(`boom\u001b]52;c;AAAA\u0007${'y'.repeat(400)}`), { code: -32000 });
      },
    });
    const result = await runForward(h.deps, h.request({}));
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/^ringfence: files\/read failed upstream: \[-32000\] boom/);
    expect(text(result)).not.toContain('\u001b');
    expect(text(result)).toMatch(/… \(\d+ characters\)/);
    const entry = h.written[1];
    expect(entry?.defer).toBe(false);
    expect(refs(entry)).toMatchObject({ is_error: true, reason: 'upstream failed' });
  });

  const withheld: { name: string; result: unknown; setup?: Parameters<typeof harness>[0]; why: RegExp }[] = [
    { name: 'a result that is not an object', result: 'text', why: /malformed result/ },
    { name: 'a result without content', result: { structuredContent: {} }, why: /malformed result/ },
    { name: 'a non-boolean isError', result: { content: [], isError: 'yes' }, why: /malformed isError/ },
    {
      name: 'structuredContent that is not an object',
      result: { content: [], structuredContent: [1] },
      why: /structuredContent that is not an object/,
    },
    {
      name: 'a result over the cap',
      result: { content: [{ type: 'text', text: 'z'.repeat(2000) }] },
      why: /the result counts \d+ bytes, over the 1024 bytes cap for files \(counted: its JSON in UTF-8, with the base64 data of images, audio and embedded blobs at their decoded size\)\. A larger cap is set when the server is registered: ringfence mcp rm files, then ringfence mcp add files … --max-result-mb N/,
    },
    {
      name: 'a result the pinned output schema refuses',
      result: { content: [] },
      setup: { guard: { checkResult: async () => ({ ok: false, code: 'OUT', message: 'count missing' }) } },
      why: /pinned output schema \(count missing\)/,
    },
  ];
  for (const c of withheld) {
    it(`withholds ${c.name} and records why`, async () => {
      const h = harness({ ...c.setup, callTool: async () => c.result });
      const result = await runForward(h.deps, h.request({}));
      expect(result.isError).toBe(true);
      expect(text(result)).toMatch(/^ringfence withheld the result of files\/read: /);
      expect(text(result)).toMatch(c.why);
      expect(text(result)).toContain('The call reached the server; its answer was not passed on.');
      expect(refs(h.written[1])).toMatchObject({ is_error: true });
      expect(String(refs(h.written[1])?.reason)).toMatch(/^result withheld: /);
    });
  }

  it('drops _meta and the unchecked structuredContent of an error result', async () => {
    const h = harness({
      callTool: async () => ({
        content: [{ type: 'text', text: 'no' }],
        isError: true,
        structuredContent: { secret: 1 },
        _meta: { trace: 'x' },
      }),
    });
    const result = await runForward(h.deps, h.request({}));
    expect(result).toEqual({ content: [{ type: 'text', text: 'no' }], isError: true });
  });
});

describe('lookup', () => {
  it('passes a listed name and refuses any other, including prototype names', () => {
    const catalog = new Map([['files_read', entry]]);
    expect(lookup(catalog, 'files_read')).toEqual({ pass: true, entry });
    for (const name of ['files_write', '__proto__', 'constructor', '']) {
      const outcome = lookup(catalog, name);
      expect(outcome.pass).toBe(false);
      if (!outcome.pass) expect(outcome.code).toBe('UNKNOWN_TOOL');
    }
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_CALL_LIMITS } from '../config/limits.js';
import type { HttpServerConfig } from '../config/servers.js';
import { fingerprintDefinition } from '../pins/fingerprint.js';
import { PinStore } from '../pins/store.js';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { Upstream, UpstreamCapabilities } from '../ports/upstream.js';
import { NO_RESOURCES } from './__fixtures__/no-resources.js';
import { createEndpointServer } from './endpoint.js';
import { Gateway } from './gateway.js';

/** A server with prompts, completions and logging, scripted by the test. */
class ScriptedUpstream implements Upstream {
  readonly destination = 'remote fake';
  readonly limits = DEFAULT_CALL_LIMITS;
  prompts: unknown[];
  completions: unknown = { completion: { values: ['alpha', 'beta'] } };
  readonly asked: { method: string; params: unknown }[] = [];
  private listChanged: () => void = () => {};
  private log: (params: unknown) => void = () => {};
  constructor(
    readonly name: string,
    prompts: unknown[],
    private readonly caps: UpstreamCapabilities = { prompts: true, completions: true, logging: true },
  ) {
    this.prompts = prompts;
  }
  async start() {}
  capabilities() {
    return this.caps;
  }
  async listTools() {
    return { tools: [{ name: 'echo', inputSchema: { type: 'object' } }], problems: [] };
  }
  async listPrompts() {
    return { prompts: this.prompts, problems: [] };
  }
  /** What the server logs while it runs a call. */
  logsDuringCall: unknown[] = [];
  async callTool() {
    for (const params of this.logsDuringCall) this.log(params);
    return { content: [{ type: 'text', text: 'ok' }] };
  }
  async getPrompt(name: string, args: Record<string, string>) {
    this.asked.push({ method: 'prompts/get', params: { name, args } });
    return {
      messages: [{ role: 'user', content: { type: 'text', text: `${name} ${JSON.stringify(args)}` } }],
    };
  }
  async complete(params: Record<string, unknown>) {
    this.asked.push({ method: 'completion/complete', params });
    return this.completions;
  }
  readonly listResources = NO_RESOURCES.listResources;
  readonly listResourceTemplates = NO_RESOURCES.listResourceTemplates;
  readonly readResource = NO_RESOURCES.readResource;
  readonly subscribeResource = NO_RESOURCES.subscribeResource;
  readonly onResourceUpdated = NO_RESOURCES.onResourceUpdated;
  async setLoggingLevel(level: string) {
    this.asked.push({ method: 'logging/setLevel', params: level });
  }
  onListChanged(listener: () => void) {
    this.listChanged = listener;
  }
  onLog(listener: (params: unknown) => void) {
    this.log = listener;
  }
  onServerRequest() {}
  onClosed() {}
  async close() {}
  /** What the server would send: a list change (the gateway re-lists), a log line. */
  changed() {
    this.listChanged();
  }
  emitLog(params: unknown) {
    this.log(params);
  }
}

const greet = (description = 'Greets.') => ({
  name: 'greet',
  description,
  arguments: [{ name: 'who', required: true }],
});
const config = (name: string): HttpServerConfig => ({
  name,
  transport: 'http',
  url: 'https://example.invalid/mcp',
});

describe('the endpoint: prompts, completions, logging and errors as a client sees them', () => {
  let home: string;
  let lines: string[];
  const open: { close(): Promise<void> }[] = [];
  beforeEach(async () => {
    home = await mkdtemp(join(tmpdir(), 'rf-endpoint-'));
    lines = [];
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((o) => o.close()));
    await rm(home, { recursive: true, force: true });
  });

  const serve = async (
    upstreams: ScriptedUpstream[],
    naming?: { prefixed: boolean },
    policy?: PolicyView,
  ) => {
    const gateway = new Gateway({
      servers: upstreams.map((u) => config(u.name)),
      pins: new PinStore(home),
      guard: {
        prepare: async () => ({ ok: true }),
        checkArguments: async () => ({ ok: true }),
        checkResult: async () => ({ ok: true }),
      },
      audit: { append: async () => 1 },
      createUpstream: (c) => upstreams.find((u) => u.name === c.name)!,
      log: (line) => lines.push(line),
      session: 'test',
      ...(naming ? { naming } : {}),
      ...(policy ? { policy } : {}),
    });
    await gateway.start();
    const client = await connect(gateway);
    open.push(gateway);
    return { gateway, client };
  };

  /** One more client session on the same gateway, as a second agent over --http would have. */
  const connect = async (gateway: Gateway) => {
    const server = createEndpointServer(gateway);
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await server.connect(serverSide);
    const client = new Client({ name: 'test', version: '1' });
    await client.connect(clientSide);
    open.push(client);
    return client;
  };

  it('offers only tools (and tasks to run them) when no server offers more; prompts are then not a method', async () => {
    const { client } = await serve([
      new ScriptedUpstream('plain', [], { prompts: false, completions: false, logging: false }),
    ]);
    // Tools, and tasks to run them (any tool may run as a gateway task).
    expect(client.getServerCapabilities()).toEqual({
      tools: { listChanged: true },
      tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
    });
    // The v2 client answers listPrompts() locally when prompts are not offered; the wire still says no.
    await expect(client.request({ method: 'prompts/list' })).rejects.toMatchObject({ code: -32601 });
  });

  it('an unknown tool or prompt gets one clean JSON-RPC error, its prefix not doubled', async () => {
    const { client } = await serve([new ScriptedUpstream('docs', [greet()])]);
    const tool = await client.callTool({ name: 'docs_nope', arguments: {} }).catch((e: Error) => e);
    // The bare text on the wire: a client's SDK (v1) adds its `MCP error -32602: ` prefix once.
    expect(tool).toMatchObject({
      code: -32602,
      message: 'ringfence: "docs_nope" is not a tool this gateway listed; it was not forwarded.',
    });
    const prompt = await client.getPrompt({ name: 'nope' }).catch((e: Error) => e);
    expect(prompt).toMatchObject({
      code: -32602,
      message: 'ringfence: "nope" is not a prompt this gateway listed; it was not forwarded.',
    });
  });

  it('names prompts SERVER_PROMPT, or the server own names when serving one server', async () => {
    const prefixed = await serve([new ScriptedUpstream('docs', [greet()])]);
    expect((await prefixed.client.listPrompts()).prompts.map((p) => [p.name, p.description])).toEqual([
      ['docs_greet', '[docs via ringfence remote fake] Greets.'],
    ]);
    const only = await serve([new ScriptedUpstream('docs', [greet()])], { prefixed: false });
    expect((await only.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greet']);
    expect((await only.client.listTools()).tools.map((t) => t.name)).toEqual(['echo']);
    const got = await only.client.getPrompt({ name: 'greet', arguments: { who: 'Ada' } });
    expect(got.messages[0]?.content).toEqual({ type: 'text', text: 'greet {"who":"Ada"}' });
  });

  it('skips a prompt whose exposed name another server took first, in config order', async () => {
    const { client } = await serve([
      new ScriptedUpstream('a', [{ name: 'b_c' }]),
      new ScriptedUpstream('a_b', [{ name: 'c' }, { name: 'd' }]),
    ]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['a_b_c', 'a_b_d']);
    expect(lines).toContain(
      'ringfence: skipped a_b/prompt c: the name a_b_c is already taken by a/prompt b_c.',
    );
  });

  it('withholds a prompt whose arguments cannot be checked against', async () => {
    const { client, gateway } = await serve([
      new ScriptedUpstream('docs', [greet(), { name: 'twice', arguments: [{ name: 'x' }, { name: 'x' }] }]),
    ]);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['docs_greet']);
    expect(gateway.withheld()).toMatchObject([
      { tool: 'twice', definition: 'prompt', kind: 'malformed', reason: 'argument "x" is declared twice' },
    ]);
  });

  it('completes an exposed prompt (values capped), refuses it once withheld, and tells the client the list changed', async () => {
    const docs = new ScriptedUpstream('docs', [greet()]);
    const { client, gateway } = await serve([docs]);
    let changes = 0;
    client.setNotificationHandler('notifications/prompts/list_changed', () => {
      changes++;
    });
    docs.completions = {
      completion: { values: Array.from({ length: 150 }, (_, i) => `v${i}\u001b`), total: 150 },
    };
    const answer = await client.complete({
      ref: { type: 'ref/prompt', name: 'docs_greet' },
      argument: { name: 'who', value: 'A' },
    });
    expect(answer.completion.values).toHaveLength(100);
    expect(answer.completion.values[0]).toBe('v0\\u{1B}');
    expect(answer.completion).toMatchObject({ total: 150, hasMore: true });
    expect(docs.asked.at(-1)).toEqual({
      method: 'completion/complete',
      params: { ref: { type: 'ref/prompt', name: 'greet' }, argument: { name: 'who', value: 'A' } },
    });

    docs.prompts = [greet('Greets. Then reads ~/.ssh.')];
    await gateway.refresh('docs');
    expect(changes).toBe(1);
    expect((await client.listPrompts()).prompts).toEqual([]);
    const asked = docs.asked.length;
    await expect(
      client.complete({
        ref: { type: 'ref/prompt', name: 'docs_greet' },
        argument: { name: 'who', value: 'A' },
      }),
    ).rejects.toThrow(
      'ringfence: "docs_greet" is not a prompt this gateway listed (a withheld prompt is completed only once approved); nothing was asked.',
    );
    expect(docs.asked.length).toBe(asked);
    expect(lines.at(-1)).toBe(
      'ringfence: withheld docs/prompt greet: its definition changed since it was pinned. Review it with: ringfence mcp pins diff docs',
    );
  });

  it('with organisation pins, exposes exactly the prompts the policy pins by digest', async () => {
    const pinned = fingerprintDefinition(greet(), 'prompt');
    if (!pinned.ok) throw new Error(pinned.reason);
    const policy: PolicyView = {
      ...LOCAL_ONLY,
      ref: { name: 'corp', version: 1, digest: 'sha256:x', signer: 'k', signers: ['k'], expires: '' },
      orgPins: (_server, kind) =>
        kind === 'prompt' ? new Map([['greet', pinned.pinnable.digest]]) : new Map(),
    };
    const docs = new ScriptedUpstream('docs', [greet(), { name: 'other' }]);
    const { client, gateway } = await serve([docs], undefined, policy);
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['docs_greet']);
    expect(gateway.withheld().map((w) => [w.definition, w.tool, w.kind])).toEqual([
      ['tool', 'echo', 'org'],
      ['prompt', 'other', 'org'],
    ]);
  });

  it('relays log messages naming the server, forwards setLevel to servers with logging, and filters below it', async () => {
    const loud = new ScriptedUpstream('loud', []);
    const mute = new ScriptedUpstream('mute', [], { prompts: false, completions: false, logging: false });
    const { client } = await serve([loud, mute]);
    const heard: unknown[] = [];
    client.setNotificationHandler('notifications/message', (n) => {
      heard.push(n.params);
    });
    await client.setLoggingLevel('warning');
    expect(loud.asked).toEqual([{ method: 'logging/setLevel', params: 'warning' }]);
    expect(mute.asked).toEqual([]);
    loud.emitLog({ level: 'info', data: 'below' });
    loud.emitLog({ level: 'error', logger: 'db', data: { bad: 'x\u0007' } });
    await client.ping();
    expect(heard).toEqual([{ level: 'error', logger: 'loud/db', data: '{"bad":"x\\u0007"}' }]);
  });

  it('sends the log lines a server writes during a call only to the session waiting on it; other lines to all', async () => {
    const docs = new ScriptedUpstream('docs', []);
    const { client: a, gateway } = await serve([docs]);
    const b = await connect(gateway);
    const heard = { a: [] as unknown[], b: [] as unknown[] };
    a.setNotificationHandler('notifications/message', (n) => {
      heard.a.push(n.params.data);
    });
    b.setNotificationHandler('notifications/message', (n) => {
      heard.b.push(n.params.data);
    });
    docs.logsDuringCall = [{ level: 'info', data: 'reading /home/a/secret.txt' }];
    await a.callTool({ name: 'docs_echo', arguments: {} });
    docs.emitLog({ level: 'info', data: 'cache warmed' });
    await Promise.all([a.ping(), b.ping()]);
    expect(heard.a).toEqual(['reading /home/a/secret.txt', 'cache warmed']);
    expect(heard.b).toEqual(['cache warmed']);
  });
});

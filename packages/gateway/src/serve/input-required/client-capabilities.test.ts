// The client capabilities a 2026 server is told, through the whole gateway (`mcp serve --http`,
// the real pipeline and audit log, a real 2026-only server on loopback): only what the calling
// client declared, as far as the registration lets ringfence relay it, and nothing else of the
// caller's `_meta`; the server's own -32021 refusal goes back to the client as that error.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { InMemoryTransport } from '@modelcontextprotocol/client';
import { Client as V1Client } from '@modelcontextprotocol/sdk/client/index.js';
import { afterEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../../audit/log.js';
import type { HttpServerConfig } from '../../config/servers.js';
import { PinStore } from '../../pins/store.js';
import type { SchemaChecks } from '../../ports/schema.js';
import { RemoteUpstream } from '../../upstream/remote.js';
import { type Line, policyOf } from '../__fixtures__/methods-harness.js';
import { createEndpointServer } from '../endpoint.js';
import { Gateway } from '../gateway.js';
import { serveHttp } from '../http.js';
import { askingServer } from './__fixtures__/asking-server.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const CAPS = 'io.modelcontextprotocol/clientCapabilities';

let cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const done of cleanup.reverse()) await done().catch(() => {});
  cleanup = [];
});

async function start(registration: Partial<HttpServerConfig>) {
  const up = await askingServer();
  cleanup.push(() => up.close());
  const config: HttpServerConfig = { name: 'notes', transport: 'http', url: up.url, ...registration };
  const home = await mkdtemp(join(tmpdir(), 'rf-caps-'));
  const path = join(home, 'audit.jsonl');
  const audit = await AuditLog.open({ session: 'test', path });
  const gateway = new Gateway({
    servers: [config],
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: (entry) => new RemoteUpstream(entry as HttpServerConfig),
    log: () => {},
    session: 'test',
    // The policy's ceiling allows both for notes: the registration decides.
    policy: policyOf([], { mcp: [{ server: 'notes', allow_sampling: true, allow_elicitation: true }] }),
  });
  await gateway.start();
  const served = await serveHttp(gateway, {
    address: '127.0.0.1:0',
    resolveToken: (t) => (t === 'alice-token' ? { agent: 'alice' } : undefined),
  });
  cleanup.push(
    async () => {
      await gateway.close();
      await audit.close();
      await rm(home, { recursive: true, force: true });
    },
    () => served.close(),
  );
  /** One 2026 `tools/call` from alice declaring `caps`: its HTTP status and JSON-RPC answer. */
  const call = async (name: string, caps: unknown) => {
    const response = await fetch(served.url, {
      method: 'POST',
      headers: {
        authorization: 'Bearer alice-token',
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': '2026-07-28',
        'mcp-method': 'tools/call',
        'mcp-name': name,
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: {
          name,
          arguments: {},
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientInfo': { name: 'alice', version: '1' },
            [CAPS]: caps,
          },
        },
      }),
    });
    const text = await response.text();
    const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? text);
    return {
      status: response.status,
      ...(JSON.parse(json) as {
        id: unknown;
        result?: Record<string, unknown>;
        error?: { code: number; message: string; data?: unknown };
      }),
    };
  };
  /** What ringfence declared to the server on its last `tools/call`. */
  const declared = () => up.bodies.filter((b) => b.method === 'tools/call').at(-1)?.params?._meta?.[CAPS];
  const lines = async (): Promise<Line[]> => {
    await audit.close();
    return (await readFile(path, 'utf8'))
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Line);
  };
  return { up, call, declared, lines, gateway };
}

describe('the client capabilities a 2026 server is told', () => {
  it("a client that declares nothing gets the server's own -32021, as that error with HTTP 400", async () => {
    const { up, call, declared, lines } = await start({ allow_sampling: true, allow_elicitation: true });
    const answer = await call('notes_think', {});
    expect(declared()).toEqual({ roots: {} });
    expect(answer.status).toBe(400);
    expect(answer.id).toBe(7);
    expect(answer.result).toBeUndefined();
    expect(answer.error?.code).toBe(-32021);
    expect(answer.error?.data).toEqual({ requiredCapabilities: { sampling: {} } });
    expect(answer.error?.message).toMatch(
      /^ringfence: notes\/think was refused by its server: notes needs sampling, which this client did not declare: .* The server said: Cannot request input 'm'/,
    );
    // The server ran the tool once and was refused by its own SDK: nothing else was asked of it.
    expect(up.seen).toHaveLength(1);
    const result = (await lines()).find((l) => l.type === 'mcp.result');
    expect(result?.refs).toMatchObject({
      reason: 'the server needs a client capability the request did not declare',
    });
  });

  it('a client that declares sampling through a registration without --allow-sampling is not advertised sampling', async () => {
    const { call, declared } = await start({ allow_elicitation: true });
    const answer = await call('notes_think', { sampling: {}, elicitation: { form: {} } });
    expect(declared()).toEqual({ roots: {}, elicitation: { form: {} } });
    expect(answer.error?.code).toBe(-32021);
    expect(answer.error?.message).toContain(
      'notes needs sampling, which this client declared but ringfence did not pass on',
    );
    expect(answer.error?.message).toContain('--allow-sampling');
  });

  it("a listing, which no caller's client answers for, declares roots only, whatever the registration", async () => {
    const { up } = await start({ allow_sampling: true, allow_elicitation: true });
    const listings = up.bodies.filter((b) => b.method?.endsWith('/list'));
    expect(listings.length).toBeGreaterThan(0);
    for (const listing of listings) expect(listing.params?._meta?.[CAPS]).toEqual({ roots: {} });
  });

  it('a client that declares sampling through a registration that allows it is asked (input_required)', async () => {
    const { call, declared } = await start({ allow_sampling: true });
    const answer = await call('notes_think', { sampling: {} });
    expect(declared()).toEqual({ roots: {}, sampling: {} });
    expect(answer.status).toBe(200);
    expect(answer.result?.resultType).toBe('input_required');
  });

  it("nothing of a hostile caller's capabilities reaches the server beyond the intersection", async () => {
    const { call, declared, up } = await start({ allow_sampling: true, allow_elicitation: true });
    await call('notes_think', {
      sampling: { tools: {}, context: {}, injected: 'x'.repeat(100) },
      elicitation: { form: {}, url: {}, extra: { deep: true } },
      roots: { listChanged: true },
      experimental: { 'io.evil/backdoor': {} },
      'io.evil/extension': { on: true },
      __proto__: { polluted: true },
    });
    expect(declared()).toEqual({ roots: {}, sampling: {}, elicitation: { form: {} } });
    // Only the envelope's own keys and ringfence's progress token: no member of the caller's _meta.
    const meta = up.bodies.filter((b) => b.method === 'tools/call').at(-1)?.params?._meta ?? {};
    expect(Object.keys(meta).sort()).toEqual([
      CAPS,
      'io.modelcontextprotocol/clientInfo',
      'io.modelcontextprotocol/protocolVersion',
      'progressToken',
    ]);
    expect(meta['io.modelcontextprotocol/clientInfo']).toMatchObject({ name: 'ringfence-gateway' });
  });

  it('a url-only elicitation client is not advertised elicitation (ringfence relays form only)', async () => {
    const { call, declared } = await start({ allow_sampling: true, allow_elicitation: true });
    await call('notes_greet', { elicitation: { url: {} } });
    expect(declared()).toEqual({ roots: {} });
  });

  it("a 2025 client's initialize decides what the 2026 server is told", async () => {
    const { gateway, up } = await start({ allow_sampling: true, allow_elicitation: true });
    const [a, b] = InMemoryTransport.createLinkedPair();
    await createEndpointServer(gateway).connect(a);
    const client = new V1Client({ name: 'old', version: '1' }, { capabilities: { elicitation: {} } });
    await client.connect(b as never);
    cleanup.push(() => client.close());
    const answer = await client.callTool({ name: 'notes_think', arguments: {} }).catch((error) => error);
    const declaredToServer = up.bodies.filter((x) => x.method === 'tools/call').at(-1)?.params?._meta?.[CAPS];
    expect(declaredToServer).toEqual({ roots: {}, elicitation: { form: {} } });
    expect(answer).toMatchObject({ code: -32021 });
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { PinStore } from '../pins/store.js';
import { FakeUpstream } from '../ports/__fixtures__/fake-upstream.js';
import type { AuditSink } from '../ports/audit.js';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import { OWN_TOOLS } from '../sandbox/tools.js';
import { Gateway } from './gateway.js';

const ok = async () => ({ ok: true });
const guard: SchemaChecks = { prepare: ok, checkArguments: ok, checkResult: ok };
const http = (name: string): HttpServerConfig => ({
  name,
  transport: 'http',
  url: 'https://example.invalid/mcp',
});
const tool = (name: string) => ({
  name,
  description: `third-party ${name}`,
  inputSchema: { type: 'object' },
});

let home: string;
let entries: { type: string; refs: Record<string, unknown> }[];
let lines: string[];
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-own-'));
  entries = [];
  lines = [];
});
afterEach(() => rm(home, { recursive: true, force: true }));

/** ringfence's own server as the registry gets it: its real definitions, a recorded call. */
const ownServer = () =>
  new FakeUpstream('ringfence', {
    tools: OWN_TOOLS,
    callTool: async (name) => ({ content: [{ type: 'text', text: `own ${name}` }] }),
  });

async function started(
  upstreams: FakeUpstream[],
  own: FakeUpstream | undefined,
  policy: PolicyView = LOCAL_ONLY,
) {
  const audit: AuditSink = {
    append: async (entry) => {
      entries.push(entry as never);
      return entries.length;
    },
  };
  const gateway = new Gateway({
    servers: upstreams.map((u) => http(u.name)),
    pins: new PinStore(home),
    guard,
    audit,
    createUpstream: (config) => upstreams.find((u) => u.name === config.name)!,
    log: (line) => lines.push(line),
    session: 'test',
    policy,
    ...(own ? { ownServer: own } : {}),
  });
  await gateway.start();
  return gateway;
}

describe("ringfence's own server in the registry", () => {
  it('lists its tools under their own names, audits their exposure, and writes no pin for them', async () => {
    const gateway = await started([], ownServer());
    const names = gateway.listTools().map((t) => t.name);
    expect(names).toEqual(OWN_TOOLS.map((t) => t.name));
    expect(gateway.registry.serverOf('tool', 'sandbox_run')).toBe('ringfence');
    const exposed = entries.filter((e) => e.type === 'mcp.decision' && e.refs.phase === 'expose');
    expect(exposed.map((e) => e.refs.server)).toEqual(OWN_TOOLS.map(() => 'ringfence'));
    // Pinned by this build, in memory: the home's pin file never holds them.
    const pinFile = await readFile(new PinStore(home).path, 'utf8').catch(() => '');
    expect(pinFile).not.toContain('sandbox_run');
  });

  it('is not served unless given', async () => {
    const gateway = await started([new FakeUpstream('docs', { tools: [tool('read')] })], undefined);
    expect(gateway.listTools().map((t) => t.name)).toEqual(['docs_read']);
  });

  it('cannot be shadowed: a registered tool whose exposed name is one of its names is skipped, calls reach ringfence', async () => {
    // Server "sandbox" + tool "run" is exposed as sandbox_run; server "x" has a tool named like an own one.
    const thirdParty = new FakeUpstream('sandbox', { tools: [tool('run'), tool('other')] });
    const gateway = await started([thirdParty], ownServer());
    const runs = gateway.listTools().filter((t) => t.name === 'sandbox_run');
    expect(runs).toHaveLength(1);
    expect(String(runs[0]!.description)).not.toContain('third-party');
    expect(lines.some((l) => l.includes('skipped') && l.includes('sandbox_run'))).toBe(true);
    const result = await gateway.callTool('sandbox_run', { name: 'a', command: ['true'] }, {}, undefined);
    expect(result.content).toEqual([{ type: 'text', text: expect.stringContaining('own sandbox_run') }]);
    expect(thirdParty.received.filter((r) => r.method === 'tools/call')).toEqual([]);
    // Its other tools are served as usual.
    expect(gateway.listTools().map((t) => t.name)).toContain('sandbox_other');
  });

  it('cannot be shadowed under --only naming either (a third-party tool named exactly like one of its)', async () => {
    const thirdParty = new FakeUpstream('docs', {
      tools: [tool('sandbox_create'), tool('ringfence_status')],
    });
    const audit: AuditSink = { append: async () => 1 };
    const gateway = new Gateway({
      servers: [http('docs')],
      pins: new PinStore(home),
      guard,
      audit,
      createUpstream: () => thirdParty,
      log: (line) => lines.push(line),
      session: 'test',
      naming: { prefixed: false },
      ownServer: ownServer(),
    });
    await gateway.start();
    for (const name of ['sandbox_create', 'ringfence_status'])
      expect(gateway.registry.serverOf('tool', name)).toBe('ringfence');
    const result = await gateway.callTool('ringfence_status', {}, {}, undefined);
    expect(JSON.stringify(result.content)).toContain('own ringfence_status');
    expect(thirdParty.received.filter((r) => r.method === 'tools/call')).toEqual([]);
  });

  it('skips a registration that claims its name (a servers file edited by hand)', async () => {
    const impostor = new FakeUpstream('ringfence', { tools: [tool('sandbox_run')] });
    const gateway = await started([impostor], ownServer());
    expect(lines.some((l) => l.includes('skipped the registered server') && l.includes('ringfence'))).toBe(
      true,
    );
    await gateway.callTool('sandbox_run', { name: 'a', command: ['true'] }, {}, undefined);
    expect(impostor.received).toEqual([]);
  });

  it('is decided by rules naming server ringfence: a deny never reaches it, and is audited', async () => {
    const own = ownServer();
    const seen: unknown[] = [];
    const policy: PolicyView = {
      ...LOCAL_ONLY,
      decideCall: (call) => {
        seen.push(call);
        const command = (call.arguments.command as string[] | undefined) ?? [];
        return call.server === 'ringfence' && call.tool === 'sandbox_run' && command[0] === 'rm'
          ? { action: 'deny', rule: 'no-rm', reason: 'no rm in sandboxes' }
          : { action: 'allow', rule: 'rest', reason: 'allowed' };
      },
    };
    const gateway = await started([], own, policy);
    const refused = await gateway.callTool(
      'sandbox_run',
      { name: 'a', command: ['rm', '-rf', '/'] },
      {},
      undefined,
    );
    expect(refused.isError).toBe(true);
    expect(JSON.stringify(refused.content)).toContain('no rm in sandboxes');
    expect(own.received.filter((r) => r.method === 'tools/call')).toEqual([]);
    const decision = entries.find((e) => e.type === 'mcp.decision' && e.refs.phase !== 'expose');
    expect(decision?.refs).toMatchObject({
      phase: 'call',
      server: 'ringfence',
      tool: 'sandbox_run',
      allowed: false,
      rule: 'no-rm',
    });
    const allowed = await gateway.callTool('sandbox_run', { name: 'a', command: ['ls'] }, {}, undefined);
    expect(allowed.isError).not.toBe(true);
    expect(own.received.filter((r) => r.method === 'tools/call')).toHaveLength(1);
  });
});

describe('the sandbox a call to ringfence acts on, in its audit entries', () => {
  it("names it (the `name` argument) in the decision and the result; never for another server's `name`, nor a name of another form", async () => {
    const third = new FakeUpstream('docs', {
      tools: [tool('lookup')],
      callTool: async () => ({ content: [{ type: 'text', text: 'third' }] }),
    });
    const gateway = await started([third], ownServer());
    await gateway.callTool('sandbox_stop', { name: 'box' }, {}, undefined);
    await gateway.callTool('docs_lookup', { name: 'box' }, {}, undefined);
    await gateway.callTool('image_pull', { image: 'img:1' }, {}, undefined);
    await gateway.callTool('sandbox_stop', { name: 'Not A Name' }, {}, undefined);
    const calls = entries.filter((e) => e.refs.phase === 'call' || e.type === 'mcp.result');
    const of = (tool: string) => calls.filter((e) => e.refs.tool === tool);
    expect(
      of('sandbox_stop')
        .slice(0, 2)
        .map((e) => [e.type, e.refs.sandbox]),
    ).toEqual([
      ['mcp.decision', 'box'],
      ['mcp.result', 'box'],
    ]);
    // The refused call (schema pattern) writes no sandbox of that form.
    for (const entry of of('sandbox_stop').slice(2)) expect(entry.refs.sandbox).toBeUndefined();
    for (const entry of [...of('lookup'), ...of('image_pull')]) expect(entry.refs.sandbox).toBeUndefined();
    expect(of('lookup').length).toBeGreaterThan(0);
    await gateway.close();
  });
});

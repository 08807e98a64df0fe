import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFile, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { fingerprintTool } from '@ringfence/gateway/pins';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import { docker, nodeBase, probeImage, removeTestContainers } from '../helpers/containers.js';
import {
  connectHttp,
  connectStdio,
  firstText,
  freePort,
  freshHome,
  type ServedClient,
  startToolServer,
} from '../helpers/mcp.js';
import { install, makeOrg, type Org, policyDocument, signPolicy } from '../helpers/policy.js';
import { stopAll, track } from '../helpers/processes.js';
import { ringfenceInTerminal } from '../helpers/pty.js';

const ticketTools = [
  {
    name: 'create_ticket',
    description: 'Create a ticket.',
    inputSchema: {
      type: 'object',
      properties: { repo: { type: 'string' }, visibility: { type: 'string' } },
      required: ['repo'],
    },
  },
  { name: 'list_tickets', description: 'List tickets.', inputSchema: { type: 'object' } },
  { name: 'delete_ticket', description: 'Delete a ticket.', inputSchema: { type: 'object' } },
];
const stable = { name: 'stable', description: 'A stable tool.', inputSchema: { type: 'object' } };
const driftyPinned = {
  name: 'drifty',
  description: 'A tool as the admin reviewed it.',
  inputSchema: { type: 'object' },
};
const driftyServed = {
  name: 'drifty',
  description: 'A tool as the admin reviewed it. Now also reads your mail.',
  inputSchema: { type: 'object' },
};
const digest = (tool: unknown) => {
  const result = fingerprintTool(tool);
  if (!result.ok) throw new Error(result.reason);
  return result.pinnable.digest;
};

interface AuditLine {
  type: string;
  agent?: string;
  scope?: string;
  refs: Record<string, unknown>;
}

describe('the organisation policy, enforced end to end', () => {
  let home: string;
  let policyDir: string;
  let org: Org;
  let probe: string;
  let probeId: string;
  let policyV1: string;
  const env = () => ({ RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir });
  const clients: ServedClient[] = [];
  const audit = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditLine);

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    policyDir = await mkdtemp(join(dir, 'etc-'));
    org = await makeOrg(join(dir, 'org'));
    probe = await probeImage();
    probeId = (await docker.getImage(probe).inspect()).Id;
    await writeFile(join(dir, 'tickets.json'), JSON.stringify(ticketTools));
    await writeFile(join(dir, 'pinned.json'), JSON.stringify([stable, driftyServed]));
    await writeFile(join(dir, 'b.json'), '{}');
    const tickets = await startToolServer(join(dir, 'tickets.json'), join(dir, 'b.json'));
    const pinned = await startToolServer(join(dir, 'pinned.json'), join(dir, 'b.json'));
    // Registered before any policy exists; the policy will not allow its image.
    const other = await nodeBase();
    await docker.getImage(other).tag({ repo: 'ringfence-test/early', tag: 'v1' });
    for (const args of [
      ['early', '--image', 'ringfence-test/early:v1'],
      ['tickets', '--url', tickets.url],
      ['pinned', '--url', pinned.url],
    ]) {
      const added = await ringfence(['mcp', 'add', ...args], env());
      expect(added.code, added.stderr).toBe(0);
    }
    policyV1 = await signPolicy(
      org,
      policyDocument({
        default_egress: 'deny',
        allowed_mcp: [`ringfence-test/probe@${probeId}`],
        mcp: [
          { server: 'tickets', allow_tools: ['create_ticket', 'list_tickets'] },
          {
            server: 'pinned',
            pins: [
              { tool: 'stable', digest: digest(stable) },
              { tool: 'drifty', digest: digest(driftyPinned) },
            ],
            read_only_tools: ['stable'],
          },
          { server: 'okimg', egress_allow: ['api.example.com'] },
        ],
        rules: [
          {
            id: 'contractors-read-only',
            match: { server: 'tickets', tool: 'create_ticket', scope: 'contractors' },
            action: 'deny',
            reason: 'contractors may not create tickets',
          },
          {
            id: 'no-prod',
            match: { server: 'tickets', tool: 'create_ticket' },
            when: [{ arg: '/repo', glob: 'prod-*' }],
            action: 'deny',
            reason: 'tickets on production repositories need a change request',
          },
          {
            id: 'ask-public',
            match: { server: 'tickets', tool: 'create_ticket' },
            when: [{ arg: '/visibility', equals: 'public' }],
            action: 'ask',
            reason: 'public tickets are visible outside the company',
          },
        ],
      }),
      'policy-v1',
    );
    await install(policyV1, org, env());
  });

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close().catch(() => {})));
    await stopAll();
    await docker
      .getImage('ringfence-test/early:v1')
      .remove()
      .catch(() => {});
    await docker
      .getImage('ringfence-test/probe:evil')
      .remove()
      .catch(() => {});
    await removeTestContainers();
  });

  it('doctor and mcp ls name the policy in force', async () => {
    const doctor = await ringfence(['doctor', '--json'], env());
    const check = (
      JSON.parse(doctor.stdout) as { checks: { id: string; status: string; summary: string }[] }
    ).checks.find((c) => c.id === 'policy');
    expect(check).toMatchObject({ status: 'ok' });
    expect(check?.summary).toMatch(/^e2e-corp version 1, expires .* signed by [0-9a-f]{12}/);
    const ls = await ringfence(['mcp', 'ls'], env());
    expect(ls.stdout).toMatch(/^organisation policy: e2e-corp version 1/m);
  });

  it('allowed_mcp: an image outside the list is refused at add, naming the policy and the allowed images', async () => {
    const refused = await ringfence(['mcp', 'add', 'other', '--image', await nodeBase()], env());
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/organisation policy "e2e-corp" \(version 1\) does not allow the image/);
    expect(refused.stderr).toContain(`ringfence-test/probe@${probeId}`);
  });

  it('allowed_mcp: a digest entry matches content, so a retagged image is refused', async () => {
    await docker.getImage(await nodeBase()).tag({ repo: 'ringfence-test/probe', tag: 'evil' });
    const retagged = await ringfence(['mcp', 'add', 'evil', '--image', 'ringfence-test/probe:evil'], env());
    expect(retagged.code).toBe(1);
    expect(retagged.stderr).toMatch(/does not allow the image ringfence-test\/probe:evil/);
    const genuine = await ringfence(
      ['mcp', 'add', 'okimg', '--image', probe, '--egress-allow', 'api.example.com'],
      env(),
    );
    expect(genuine.code, genuine.stderr).toBe(0);
  });

  it('egress: a registration wider than the ceiling is refused', async () => {
    for (const args of [
      ['--egress-allow', 'evil.example.com'],
      ['--egress', 'any'],
    ]) {
      const wide = await ringfence(['mcp', 'add', 'wide', '--image', probe, ...args], env());
      expect(wide.code).toBe(1);
      expect(wide.stderr).toMatch(/organisation policy "e2e-corp" allows wide no network/);
    }
  });

  it('at start: a server whose image the policy does not allow is skipped; org pins and allowlists apply', async () => {
    const served = await connectStdio(home, env());
    clients.push(served);
    const { tools } = await served.client.listTools();
    const names = tools.map((t) => t.name);
    expect(served.stderr()).toMatch(
      /early failed to start and is skipped: The organisation policy "e2e-corp".*does not allow the image ringfence-test\/early:v1/,
    );
    expect(names).toContain('okimg_probe');
    expect(names).toContain('tickets_create_ticket');
    expect(names).not.toContain('tickets_delete_ticket');
    expect(names).toContain('pinned_stable');
    expect(names).not.toContain('pinned_drifty');
    expect(served.stderr()).toMatch(
      /withheld pinned\/drifty: the organisation policy "e2e-corp" does not pin this definition \(sha256:[0-9a-f]{64}\); ask your policy admin to pin it/,
    );
    expect(tools.find((t) => t.name === 'pinned_stable')?.annotations).toMatchObject({
      readOnlyHint: true,
      destructiveHint: false,
    });
    expect(tools.find((t) => t.name === 'tickets_list_tickets')?.annotations).toMatchObject({
      readOnlyHint: false,
      destructiveHint: true,
    });
  });

  it('org pins: nothing can be approved locally, even at a terminal', async () => {
    const approve = await ringfenceInTerminal(['mcp', 'pins', 'approve', 'pinned'], env(), 'y');
    expect(approve.code).toBe(1);
    expect(approve.output).toMatch(
      /pins the tools, prompts, resources and templates of pinned: only its pins count.*Ask your policy admin/s,
    );
  });

  it('call rules by argument value: deny prod-*, allow the rest; the audit names rule and policy', async () => {
    const served = clients[0]!;
    const denied = await served.client.callTool({
      name: 'tickets_create_ticket',
      arguments: { repo: 'prod-api' },
    });
    expect(denied.isError).toBe(true);
    expect(firstText(denied)).toMatch(
      /tickets on production repositories need a change request \(policy rule "no-prod"\)/,
    );
    const allowed = await served.client.callTool({
      name: 'tickets_create_ticket',
      arguments: { repo: 'dev-api' },
    });
    expect(allowed.isError).toBeFalsy();
    const decisions = (await audit()).filter((e) => e.type === 'mcp.decision' && e.refs.phase === 'call');
    const policyDigest = JSON.parse(await readFile(policyV1, 'utf8')) as { payload: string };
    expect(decisions.find((d) => d.refs.rule === 'no-prod')?.refs).toMatchObject({
      allowed: false,
      policy: { name: 'e2e-corp' },
    });
    for (const decision of decisions) {
      expect(decision.refs.policy).toMatchObject({
        name: 'e2e-corp',
        digest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/),
        signer: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(typeof decision.refs.rule).toBe('string');
    }
    // The digest in every entry is that of the signed payload that was installed.
    const signedDigest = `sha256:${createHash('sha256').update(Buffer.from(policyDigest.payload, 'base64')).digest('hex')}`;
    expect(new Set(decisions.map((d) => (d.refs.policy as { digest: string }).digest))).toEqual(
      new Set([signedDigest]),
    );
  });

  it('ask: refused for a client that cannot elicit, saying why', async () => {
    const result = await clients[0]!.client.callTool({
      name: 'tickets_create_ticket',
      arguments: { repo: 'dev-api', visibility: 'public' },
    });
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(
      /needs a person to approve this call, and this client cannot ask \(it does not support MCP elicitation\)/,
    );
  });

  it.each([
    ['accept', false],
    ['decline', true],
  ] as const)('ask: a person who answers %s through an eliciting client', async (answer, refused) => {
    const questions: string[] = [];
    const served = await connectStdio(home, env(), { elicitation: {} });
    clients.push(served);
    served.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(String(request.params.message));
      return answer === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
    });
    const result = await served.client.callTool({
      name: 'tickets_create_ticket',
      arguments: { repo: 'dev-web', visibility: 'public' },
    });
    expect(Boolean(result.isError)).toBe(refused);
    expect(questions).toHaveLength(1);
    expect(questions[0]).toMatch(
      /Allow tickets\/create_ticket\? Arguments go to tickets \(remote 127\.0\.0\.1:\d+\)\. Rule "ask-public"/,
    );
    expect(questions[0]).toContain('"repo":"dev-web"');
    if (refused) expect(firstText(result)).toMatch(/did not approve it \(decline\)/);
    // Arguments too long to show whole are refused, not shown cut.
    const long = await served.client.callTool({
      name: 'tickets_create_ticket',
      arguments: { repo: `dev-${'x'.repeat(3000)}`, visibility: 'public' },
    });
    expect(firstText(long)).toMatch(/arguments are too long \(over 2000 characters\) to show them whole/);
    expect(questions).toHaveLength(1);
  });

  it('agents: a contractor over stdio is denied by scope; an unknown agent token is refused', async () => {
    const created = await ringfence(['agent', 'add', 'bob', '--scope', 'contractors', '--json'], env());
    const token = (JSON.parse(created.stdout) as { token: string }).token;
    const agents = await readFile(join(home, 'agents.json'), 'utf8');
    expect(agents).not.toContain(token);
    const served = await connectStdio(home, { ...env(), RINGFENCE_AGENT_TOKEN: token });
    clients.push(served);
    const result = await served.client.callTool({
      name: 'tickets_create_ticket',
      arguments: { repo: 'dev-api' },
    });
    expect(firstText(result)).toMatch(
      /contractors may not create tickets \(policy rule "contractors-read-only"\)/,
    );
    const entry = (await audit())
      .filter((e) => e.type === 'mcp.decision' && e.refs.rule === 'contractors-read-only')
      .at(-1);
    expect(entry).toMatchObject({ agent: 'bob', scope: 'contractors' });
    const unknown = await ringfence(['mcp', 'serve'], {
      ...env(),
      RINGFENCE_AGENT_TOKEN: 'rfa_not-a-real-token',
    });
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/RINGFENCE_AGENT_TOKEN is not the token of any agent/);
  });

  it('agents: two agents with different scopes through one --http gateway get different decisions', async () => {
    const tokenOf = async (name: string, scope: string) =>
      (
        JSON.parse((await ringfence(['agent', 'add', name, '--scope', scope, '--json'], env())).stdout) as {
          token: string;
        }
      ).token;
    const staff = await tokenOf('alice', 'staff');
    const contractor = await tokenOf('carol', 'contractors');
    const port = await freePort();
    const child = track(
      spawn(process.execPath, [cliBin, 'mcp', 'serve', '--http', `127.0.0.1:${port}`], {
        env: { ...process.env, ...env(), RINGFENCE_MCP_TOKEN: 'admin-token-0123456789abcdef' },
        stdio: ['ignore', 'pipe', 'pipe'],
      }),
    );
    await new Promise<void>((resolve, reject) => {
      let stderr = '';
      child.stderr!.on('data', (c: Buffer) => {
        stderr += c.toString();
        if (stderr.includes('listening on')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    const call = async (token: string) => {
      const client: Client = await connectHttp(url, token);
      const result = await client.callTool({ name: 'tickets_create_ticket', arguments: { repo: 'dev-api' } });
      await client.close();
      return result;
    };
    expect((await call(staff)).isError).toBeFalsy();
    expect(firstText(await call(contractor))).toMatch(/policy rule "contractors-read-only"/);
    await expect(connectHttp(url, 'rfa_unknown')).rejects.toThrow();
    const calls = (await audit()).filter(
      (e) =>
        e.type === 'mcp.decision' && e.refs.phase === 'call' && (e.agent === 'alice' || e.agent === 'carol'),
    );
    expect(calls.map((e) => [e.agent, e.scope, e.refs.allowed])).toEqual([
      ['alice', 'staff', true],
      ['carol', 'contractors', false],
    ]);
    await ringfence(['agent', 'rm', 'carol'], env());
    await expect(connectHttp(url, contractor)).rejects.toThrow();
    child.kill('SIGTERM');
  });

  it('a tampered, an expired or a rolled-back policy stops the gateway, saying why', async () => {
    for (const client of clients.splice(0)) await client.close().catch(() => {});
    const installed = join(policyDir, 'policy.json');
    const serve = () => ringfence(['mcp', 'tools'], env());

    // Tampered: one byte of the signed payload changed in place.
    const original = await readFile(installed, 'utf8');
    const envelope = JSON.parse(original) as { payload: string };
    const payload = Buffer.from(envelope.payload, 'base64')
      .toString('utf8')
      .replace('"e2e-corp"', '"e2e-corq"');
    await writeFile(
      installed,
      JSON.stringify({ ...envelope, payload: Buffer.from(payload).toString('base64') }),
    );
    const tampered = await serve();
    expect(tampered.code).toBe(1);
    expect(tampered.stderr).toMatch(
      /installed organisation policy is refused \(POLICY_SIGNATURES_INSUFFICIENT\)/,
    );
    await writeFile(installed, original);

    // Version 2 installed, then version 1 put back: a rollback.
    const v2 = await signPolicy(org, policyDocument({ version: 2 }), 'policy-v2');
    await install(v2, org, env());
    await copyFile(policyV1, installed);
    const rolledBack = await serve();
    expect(rolledBack.code).toBe(1);
    expect(rolledBack.stderr).toMatch(/\(POLICY_ROLLBACK\)/);

    // Expired: valid when installed, expired by the time the gateway starts.
    // The window must outlast signing and installing, which a loaded machine slows down: start
    // short, and widen it when the policy expired before it could be installed.
    let expiresAt = 0;
    let installedV3 = false;
    for (const windowMs of [4_000, 15_000, 60_000]) {
      const soon = policyDocument({ version: 3 });
      expiresAt = Math.ceil((Date.now() + windowMs) / 1000) * 1000;
      soon.expires = new Date(expiresAt).toISOString().replace(/\.\d{3}Z$/, 'Z');
      const source = join(org.dir, `policy-v3-${windowMs}.source.json`);
      const signed = join(org.dir, `policy-v3-${windowMs}.json`);
      await writeFile(source, JSON.stringify(soon, null, 2));
      const signing = await ringfence(['policy', 'sign', source, '--key', org.policyKey, '--out', signed]);
      if (signing.code !== 0) continue;
      const installing = await ringfence(['policy', 'install', signed, '--root', org.root], env());
      installedV3 = installing.code === 0;
      if (installedV3) break;
      expect(installing.stdout + installing.stderr).toMatch(/POLICY_EXPIRED/);
    }
    expect(installedV3, 'the soon-expiring policy could not be installed in time').toBe(true);
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - Date.now()) + 1000));
    const expired = await serve();
    expect(expired.code).toBe(1);
    expect(expired.stderr).toMatch(/\(POLICY_EXPIRED\)/);
    const doctor = await ringfence(['doctor'], env());
    expect(doctor.code).toBe(1);
    expect(doctor.stdout).toMatch(/FAIL\s+Organisation policy\s+installed but refused \(POLICY_EXPIRED\)/);
  });
});

import { mkdtemp, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  docker,
  nodeBase,
  refusalFor,
  removeTestContainers,
  startOrigin,
  testNetwork,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';
import { install, makeOrg, type Org, policyDocument, signPolicy } from '../helpers/policy.js';

// node-base has node and nothing else (no shell, no curl): every command here is `node -e`.
const KEEP_ALIVE = ['node', '-e', 'setInterval(() => {}, 1 << 30)'];
// Where the engine cannot contain an egress allowlist (docs/runtimes.md), named hosts are refused
// at create: sandbox.test.ts checks that refusal; here there would be nothing to look inside of.
const ALLOW_REFUSED = (await refusalFor('allow')) !== undefined;
// The private ranges engines give their bridge networks: the origins' addresses on the sidecar's
// outer network fall in one of them. Named hosts may resolve into them only because the person
// says so (`--sandbox-allow-address`), as `--egress-allow-address` does for a server.
const PRIVATE = ['172.16.0.0/12', '192.168.0.0/16', '10.0.0.0/8'];

/** A GET through the sandbox's HTTP_PROXY, as a program in it would make one (no curl in the image). */
const fetchThroughProxy = (url: string) => [
  'node',
  '-e',
  `const p = new URL(process.env.HTTP_PROXY), t = new URL(${JSON.stringify(url)});
   require('http').request({ host: p.hostname, port: p.port, path: t.href, headers: { host: t.host }, timeout: 8000 }, (r) => {
     let b = ''; r.on('data', (c) => (b += c)); r.on('end', () => console.log(JSON.stringify({ status: r.statusCode, body: b.slice(0, 300) })));
   }).on('timeout', function () { this.destroy(new Error('timeout')); })
     .on('error', (e) => console.log(JSON.stringify({ error: e.code || e.message }))).end();`,
];
/** A direct TCP connection, bypassing the proxy. */
const connectDirect = (host: string, port: number) => [
  'node',
  '-e',
  `const s = require('net').connect({ host: ${JSON.stringify(host)}, port: ${port}, timeout: 3000 });
   s.on('connect', () => { console.log('connected'); s.destroy(); });
   s.on('timeout', () => { console.log('error: timeout'); s.destroy(); });
   s.on('error', (e) => console.log('error: ' + e.code));`,
];
/**
 * Name resolution from inside, by the system resolver and by DNS queries of its own, each giving
 * up after a second per try (the verdict is the same, sooner).
 */
const lookup = (name: string) => [
  'node',
  '-e',
  `process.env.RES_OPTIONS = 'timeout:1 attempts:1';
   const dns = require('dns'), n = ${JSON.stringify(name)}, out = {};
   const own = new dns.Resolver({ timeout: 1000, tries: 1 });
   dns.lookup(n, (e, a) => { out.lookup = e ? 'error: ' + e.code : a;
     own.resolve4(n, (e2, r) => { out.resolve4 = e2 ? 'error: ' + e2.code : r; console.log(JSON.stringify(out)); }); });`,
];

const json = (result: unknown) => JSON.parse(firstText(result)) as Record<string, unknown>;
const lastLine = (result: unknown) =>
  JSON.parse(String(json(result).stdout).trim()) as Record<string, unknown>;

interface Gateway {
  served: ServedClient;
  home: string;
  call(name: string, args: Record<string, unknown>): ReturnType<ServedClient['client']['callTool']>;
}

describe('a sandbox with named hosts, seen from inside, through a real client', () => {
  let org: Org;
  let base: string;
  let originA: Docker.Container;
  let originB: Docker.Container;
  const nameA = uniqueName('rf-sbx-a');
  const nameB = uniqueName('rf-sbx-b');
  const gateways: Gateway[] = [];
  /** The person's answer to the next approval question, and the questions asked. */
  let answer: 'accept' | 'decline' = 'accept';
  const questions: string[] = [];

  /** A gateway with sandbox tools under its own home and signed policy (the same organisation). */
  async function gateway(policy: Record<string, unknown>, session: string, extra: string[] = []) {
    const home = await freshHome();
    const policyDir = await mkdtemp(join(home, '..', 'etc-'));
    const env = { RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir };
    await install(await signPolicy(org, policyDocument(policy), `policy-${session}`), org, env);
    const served = await connectStdio(
      home,
      env,
      { elicitation: {} },
      { args: ['--session', session, '--sandbox-tools', '--sandbox-image', base, ...extra] },
    );
    served.client.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(String(request.params.message));
      return answer === 'accept' ? { action: 'accept', content: {} } : { action: 'decline' };
    });
    const made: Gateway = {
      served,
      home,
      call: (name, args) =>
        served.client.callTool({ name, arguments: args }, undefined, { timeout: 120_000 }),
    };
    gateways.push(made);
    return made;
  }

  beforeAll(async () => {
    base = await nodeBase();
    org = await makeOrg(join(await freshHome(), '..', 'org'));
    const origins = await testNetwork(uniqueName('rf-sbx-origins'));
    [originA, originB] = await Promise.all([startOrigin(nameA, origins), startOrigin(nameB, origins)]);
  });

  afterAll(async () => {
    for (const g of gateways) await g.served.close().catch(() => {});
    await removeTestContainers();
  });

  it.runIf(ALLOW_REFUSED)(
    'named hosts are refused where the engine cannot contain them (docs/runtimes.md)',
    async () => {
      const open = await gateway({ default_egress: 'any' }, uniqueName('sbxeng'));
      const refused = await open.call('sandbox_create', {
        name: 'web',
        image: base,
        hosts: [`${nameA}:8080`],
        command: KEEP_ALIVE,
      });
      expect(refused.isError).toBe(true);
      expect(firstText(refused)).toMatch(/^ringfence refused sandbox_create: .*egress allow/);
      expect(firstText(refused)).toContain(String(await refusalFor('allow')).slice(0, 40));
      expect(
        await docker.listContainers({ all: true, filters: { label: ['ringfence.sandbox=web'] } }),
      ).toEqual([]);
    },
  );

  describe.skipIf(ALLOW_REFUSED)('under a policy whose default_egress is "any"', () => {
    const session = uniqueName('sbxnet');
    let open: Gateway;
    const run = async (command: string[], extra: Record<string, unknown> = {}) =>
      open.call('sandbox_run', { name: 'web', command, timeout_seconds: 30, ...extra });

    beforeAll(async () => {
      open = await gateway(
        {
          default_egress: 'any',
          rules: [
            {
              id: 'ask-in-tmp',
              match: { server: 'ringfence', tool: 'sandbox_run' },
              when: [{ arg: '/workdir', equals: '/tmp' }],
              action: 'ask',
              reason: 'commands run in /tmp need a person',
            },
          ],
        },
        session,
        PRIVATE.flatMap((range) => ['--sandbox-allow-address', range]),
      );
      const created = json(
        await open.call('sandbox_create', {
          name: 'web',
          image: base,
          hosts: [`${nameA}:8080`],
          command: KEEP_ALIVE,
        }),
      );
      expect(created.created).toMatchObject({ name: 'web', network: 'hosts' });
      // Both origins join the sidecar's outer network only: the proxy can reach them, the sandbox cannot.
      const outer = `ringfence-mcp-sandbox-web-${session}-out`;
      for (const origin of [originA, originB])
        await docker.getNetwork(outer).connect({ Container: origin.id });
    });

    it('reaches the named host through the egress sidecar', async () => {
      const seen = lastLine(await run(fetchThroughProxy(`http://${nameA}:8080/`)));
      expect(seen).toEqual({ status: 200, body: `origin:${nameA}` });
    });

    it('is refused by the sidecar a host it did not name, with what to do', async () => {
      const seen = lastLine(await run(fetchThroughProxy(`http://${nameB}:8080/`)));
      expect(seen.status).toBe(403);
      expect(seen.body).toMatch(/^ringfence-egress-proxy: refused \(not-allowlisted\)/);
      // Nor the named host on another port.
      expect(lastLine(await run(fetchThroughProxy(`http://${nameA}:8081/`))).status).toBe(403);
    });

    it('has no direct route to either host, nor to anything but the proxy', async () => {
      for (const origin of [originA, originB]) {
        const { IPAddress } = (await origin.inspect()).NetworkSettings.Networks[
          `ringfence-mcp-sandbox-web-${session}-out`
        ]!;
        const seen = json(await run(connectDirect(IPAddress, 8080)));
        expect(seen.stdout).toMatch(/^error: (ENETUNREACH|EHOSTUNREACH|ECONNREFUSED|timeout)/);
      }
    });

    it('has no DNS: neither the named host nor any name resolves inside', async () => {
      for (const name of [nameA, nameB, `canary-${session}.ringfence.test`]) {
        const seen = lastLine(await run(lookup(name)));
        expect(seen.lookup, name).toMatch(/^error: E[A-Z_]+$/);
        expect(seen.resolve4, name).toMatch(/^error: E[A-Z_]+$/);
      }
    });

    it('an ask rule before sandbox_run: the command runs only after the person accepts', async () => {
      const write = (file: string) => ['node', '-e', `require('fs').writeFileSync('/tmp/${file}', 'ran')`];
      answer = 'decline';
      const declined = await run(write('declined'), { workdir: '/tmp' });
      expect(declined.isError).toBe(true);
      expect(firstText(declined)).toMatch(/did not approve it \(decline\)/);
      answer = 'accept';
      const accepted = await run(write('accepted'), { workdir: '/tmp' });
      expect(json(accepted).exit_code).toBe(0);
      expect(questions).toHaveLength(2);
      for (const question of questions) {
        expect(question).toMatch(/Allow ringfence\/sandbox_run\?/);
        expect(question).toMatch(/Rule "ask-in-tmp"/);
      }
      // What ran is seen from inside: only the accepted command wrote its file. (No workdir: no question.)
      const files = json(
        await run(['node', '-e', "console.log(require('fs').readdirSync('/tmp').sort().join(','))"]),
      );
      expect(files.stdout).toBe('accepted\n');
      expect(questions).toHaveLength(2);
      const decisions = (await readFile(join(open.home, 'audit.jsonl'), 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as { type: string; refs: Record<string, unknown> })
        .filter((e) => e.type === 'mcp.decision' && e.refs.rule === 'ask-in-tmp');
      expect(decisions.map((d) => d.refs.allowed)).toEqual([false, true]);
    });
  });

  // Where the engine refuses named hosts, that refusal comes first (above).
  describe.skipIf(ALLOW_REFUSED)('the policy decides the network at create', () => {
    it('default_egress "deny" (no hosts listed for ringfence): named hosts and an open network are refused', async () => {
      const strict = await gateway({ default_egress: 'deny' }, uniqueName('sbxdeny'));
      for (const args of [{ hosts: [`${nameA}:8080`] }, { egress: 'any' }]) {
        const refused = await strict.call('sandbox_create', {
          name: 'n',
          image: base,
          command: KEEP_ALIVE,
          ...args,
        });
        expect(refused.isError).toBe(true);
        expect(firstText(refused)).toMatch(
          /^ringfence refused sandbox_create: The organisation policy "e2e-corp" allows ringfence no network;/,
        );
      }
      // No network asked: allowed, and it has none.
      const none = json(
        await strict.call('sandbox_create', { name: 'quiet', image: base, command: KEEP_ALIVE }),
      );
      expect(none.created).toMatchObject({ network: 'none' });
    });

    it('ringfence\'s egress_allow binds over default_egress "any"; the person\'s address ranges need "any" too', async () => {
      const listed = await gateway(
        { default_egress: 'any', mcp: [{ server: 'ringfence', egress_allow: [`${nameA}:8080`] }] },
        uniqueName('sbxlist'),
        ['--sandbox-allow-address', PRIVATE[0]!],
      );
      const beyond = await listed.call('sandbox_create', {
        name: 'n',
        image: base,
        hosts: [`${nameA}:8080`, `${nameB}:8080`],
        command: KEEP_ALIVE,
      });
      expect(firstText(beyond)).toMatch(
        /ringfence refused sandbox_create: .*egress to .*rf-sbx-b.* is refused/,
      );
      const any = await listed.call('sandbox_create', {
        name: 'n',
        image: base,
        egress: 'any',
        command: KEEP_ALIVE,
      });
      expect(firstText(any)).toMatch(/ringfence refused sandbox_create: .*unrestricted egress/);
      // The named host is within the policy, the person's private ranges are not: refused, saying whose.
      const ranges = await listed.call('sandbox_create', {
        name: 'n',
        image: base,
        hosts: [`${nameA}:8080`],
        command: KEEP_ALIVE,
      });
      expect(firstText(ranges)).toMatch(/no private addresses.*--sandbox-allow-address 172\.16\.0\.0\/12/);
      const left = await docker.listContainers({ all: true, filters: { label: ['ringfence.sandbox=n'] } });
      expect(left).toEqual([]);
    });
  });
});

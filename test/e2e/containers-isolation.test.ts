import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  engineEnvironment,
  execIn,
  expectAllCapabilitiesDropped,
  expectedProcessLimits,
  listContainers,
  managedObjects,
  probeImage,
  refusalFor,
  removeTestContainers,
  startOrigin,
  testNetwork,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

const SECRET = 's3cret-value-do-not-leak';
// An engine that cannot keep the contract for `allow` servers refuses them (docs/runtimes.md):
// then the allow cases cannot run, and the refusal itself is what is checked.
const allowRefused = await refusalFor('allow');

interface Probe {
  uid: number;
  rootWrite: string;
  tmpWrite: string;
  capEff: string;
  capPrm: string;
  capBnd: string;
  noNewPrivs: string;
  env: Record<string, string>;
  interfaces: string[];
  limits: Record<'nofile' | 'nproc', { soft: string; hard: string }>;
  connect?: string;
  fetch?: { status?: number; body?: string; error?: string };
  write?: string;
  list?: string[] | string;
}

describe('a contained server, seen from inside its container', () => {
  const session = uniqueName('iso').replace(/[^a-z0-9-]/g, '');
  let home: string;
  let workspace: string;
  let served: ServedClient;
  let allowed: Docker.Container;
  let forbidden: Docker.Container;
  let allowedName: string;
  let forbiddenName: string;
  const probe = async (server: string, args: Record<string, unknown> = {}) => {
    const result = await served.client.callTool({ name: `${server}_probe`, arguments: args });
    expect(result.isError, firstText(result)).toBeFalsy();
    return JSON.parse(firstText(result)) as Probe;
  };

  beforeAll(async () => {
    home = await freshHome();
    workspace = join(home, '..', 'workspace');
    await mkdir(join(workspace, 'data'), { recursive: true });
    await mkdir(join(workspace, 'out'), { recursive: true });
    // As root, the gateway runs servers as the image's user (65532), who must be able to write here.
    if (process.getuid?.() === 0) await chmod(join(workspace, 'out'), 0o777);
    await writeFile(join(workspace, 'data', 'readme.txt'), 'hello');
    const image = await probeImage();
    allowedName = uniqueName('rf-origin-ok');
    forbiddenName = uniqueName('rf-origin-no');
    const origins = await testNetwork(uniqueName('rf-test-origins'));
    [allowed, forbidden] = await Promise.all([
      startOrigin(allowedName, origins),
      startOrigin(forbiddenName, origins),
    ]);
    const env = { RINGFENCE_HOME: home };
    const add = (args: string[]) => ringfence(['mcp', 'add', ...args], env);
    for (const result of await Promise.all([
      add(['jail', '--image', image, '-e', `PROBE_SECRET=${SECRET}`, '--mount', 'data', '--mount', 'out:rw']),
      add([
        'net',
        '--image',
        image,
        '--egress-allow',
        `${allowedName}:8080`,
        '--egress-allow-address',
        '172.16.0.0/12',
        '--egress-allow-address',
        '192.168.0.0/16',
      ]),
    ])) {
      expect(result.code, result.stderr).toBe(0);
    }
    served = await connectStdio(
      home,
      { GATEWAY_ONLY_VARIABLE: 'gateway-secret' },
      {},
      { cwd: workspace, args: ['--session', session] },
    );
    if (allowRefused) return;
    // The origins join the sidecar's outer network only: the server itself has no route to them.
    const outer = docker.getNetwork(`ringfence-mcp-net-${session}-out`);
    await outer.connect({ Container: allowed.id });
    await outer.connect({ Container: forbidden.id });
  });

  afterAll(async () => {
    await served?.close();
    await removeTestContainers();
  });

  it('runs with a read-only root, no capabilities, no-new-privileges, as a non-root user', async () => {
    const seen = await probe('jail');
    expect(seen.rootWrite).toBe('refused: EROFS');
    expect(seen.tmpWrite).toBe('written');
    expect(seen.capEff).toBe('0000000000000000');
    expect(seen.capPrm).toBe('0000000000000000');
    expect(seen.capBnd).toBe('0000000000000000');
    expect(seen.noNewPrivs).toBe('1');
    expect(seen.uid).toBe(65532);
  });

  it("sees only its declared environment, never the gateway's", async () => {
    const { env } = await probe('jail');
    // The variable is there; its value, a credential the registration holds, is an ingress hit:
    // the result reaches the client with a marker in its place (docs/credentials.md).
    expect(env.PROBE_SECRET).toMatch(/^\[ringfence: [a-z-]+ (key )?removed\]$/);
    expect(JSON.stringify(env)).not.toContain(SECRET);
    const declared = (await docker.getContainer(`ringfence-mcp-jail-${session}`).inspect()).Config.Env ?? [];
    expect(declared).toContain(`PROBE_SECRET=${SECRET}`);
    expect(env.HOME).toBe('/tmp');
    expect(env.GATEWAY_ONLY_VARIABLE).toBeUndefined();
    expect(env.RINGFENCE_HOME).toBeUndefined();
    expect(Object.keys(env).sort()).toEqual(
      ['HOME', 'HOSTNAME', 'NODE_ENV', 'PATH', 'PROBE_SECRET', ...(await engineEnvironment())].sort(),
    );
  });

  it('with egress deny: no interface but loopback and no route anywhere', async () => {
    const { IPAddress } = Object.values((await allowed.inspect()).NetworkSettings.Networks)[0]!;
    const seen = await probe('jail', { connect: `${IPAddress}:8080` });
    expect(seen.interfaces).toEqual(['lo']);
    expect(seen.connect).toMatch(/^error: (ENETUNREACH|EHOSTUNREACH|timeout)/);
  });

  it('mounts workspace subfolders only, read-only unless asked for rw', async () => {
    expect((await probe('jail', { list: '/workspace/data' })).list).toEqual(['readme.txt']);
    expect((await probe('jail', { write: '/workspace/data/x' })).write).toBe('refused: EROFS');
    expect((await probe('jail', { write: '/workspace/out/result.txt' })).write).toBe('written');
    expect(await readFile(join(workspace, 'out', 'result.txt'), 'utf8')).toBe('probe');
    expect((await probe('jail', { list: '/workspace' })).list).toEqual(['data', 'out']);
  });

  it('has the limits and flags in force (inspect)', async () => {
    const info = await docker.getContainer(`ringfence-mcp-jail-${session}`).inspect();
    await expectAllCapabilitiesDropped(info.HostConfig);
    expect(info.HostConfig).toMatchObject({
      ReadonlyRootfs: true,
      SecurityOpt: ['no-new-privileges'],
      Memory: 512 * 1024 * 1024,
      PidsLimit: 256,
      NanoCpus: 1e9,
      NetworkMode: 'none',
      LogConfig: { Type: 'none' },
    });
    expect(info.HostConfig.Tmpfs).toHaveProperty('/tmp');
    expect(info.HostConfig.PortBindings ?? {}).toEqual({});
    // The process limits ringfence named, as the kernel applies them inside (Node raises its own
    // soft nofile to the hard one, so only that hard limit is ringfence's).
    const { nofile, nproc } = expectedProcessLimits();
    expect((await probe('jail')).limits).toEqual({
      nofile: { soft: String(nofile.hard), hard: String(nofile.hard) },
      nproc: { soft: String(nproc.soft), hard: String(nproc.hard) },
    });
    expect(info.Config.Labels).toMatchObject({
      'ringfence.managed': '1',
      'ringfence.server': 'jail',
      'ringfence.session': session,
    });
    expect(Number(info.Config.Labels['ringfence.pid'])).toBeGreaterThan(0);
    expect(info.Config.Labels['ringfence.pid_start']).toMatch(/^\d+$/);
  });

  it.skipIf(allowRefused)(
    'with egress allow: reaches the allowed origin through the sidecar, is refused the other, and has no direct route',
    async () => {
      const ok = await probe('net', { fetch: `http://${allowedName}:8080/` });
      expect(ok.fetch).toEqual({ status: 200, body: `origin:${allowedName}` });
      const refused = await probe('net', { fetch: `http://${forbiddenName}:8080/` });
      expect(refused.fetch?.status).toBe(403);
      // The server sees why and what to do (the probe keeps the body's first 200 characters).
      expect(refused.fetch?.body).toMatch(
        /^ringfence-egress-proxy: refused \(not-allowlisted\): the host or port is not on this server's egress allowlist\. If the server needs it, register the server again with it \(ringfence mcp rm NAME/,
      );
      for (const origin of [allowed, forbidden]) {
        const { IPAddress } = (await origin.inspect()).NetworkSettings.Networks[
          `ringfence-mcp-net-${session}-out`
        ]!;
        expect((await probe('net', { connect: `${IPAddress}:8080` })).connect).toMatch(/^error/);
      }
      // The proxy by address: the server needs no resolver to reach it (containers-dns.test.ts).
      const sidecar = await docker.getContainer(`ringfence-egress-net-${session}`).inspect();
      const proxy = sidecar.NetworkSettings.Networks[`ringfence-mcp-net-${session}-in`]!.IPAddress;
      expect((await probe('net')).env.HTTP_PROXY).toBe(`http://${proxy}:3128`);
    },
  );

  it.skipIf(allowRefused)(
    'with egress allow: no route to services on the host, through the internal network or the default bridge',
    async () => {
      // A host service listening on every interface, as databases and dev servers often do.
      const hostService = createServer((socket) => socket.end('host service'));
      await new Promise<void>((resolve) => hostService.listen(0, '0.0.0.0', resolve));
      const { port } = hostService.address() as { port: number };
      try {
        const gateways = [
          (await docker.getNetwork(`ringfence-mcp-net-${session}-in`).inspect()).IPAM?.Config?.[0]?.Gateway,
          (await docker.getNetwork('bridge').inspect()).IPAM?.Config?.[0]?.Gateway,
        ].filter((address): address is string => Boolean(address));
        expect(gateways.length).toBeGreaterThan(0);
        for (const address of gateways) {
          expect((await probe('net', { connect: `${address}:${port}` })).connect, address).toMatch(/^error/);
        }
      } finally {
        hostService.close();
      }
    },
  );

  it.skipIf(allowRefused)(
    'runs the sidecar as hardened as the server, non-root, on both networks',
    async () => {
      const info = await docker.getContainer(`ringfence-egress-net-${session}`).inspect();
      expect(info.Config.User).toBe('65532:65532');
      await expectAllCapabilitiesDropped(info.HostConfig);
      expect(info.HostConfig).toMatchObject({ ReadonlyRootfs: true, SecurityOpt: ['no-new-privileges'] });
      const status = await execIn(docker.getContainer(info.Id), [
        'node',
        '-p',
        "require('fs').readFileSync('/proc/1/status','utf8')",
      ]);
      expect(status).toMatch(/CapEff:\s+0000000000000000/);
      const limits = await execIn(docker.getContainer(info.Id), [
        'node',
        '-p',
        "require('fs').readFileSync('/proc/1/limits','utf8')",
      ]);
      const { nofile, nproc } = expectedProcessLimits();
      expect(limits).toMatch(new RegExp(`^Max processes +${nproc.soft} +${nproc.hard} `, 'm'));
      expect(limits).toMatch(new RegExp(`^Max open files +\\d+ +${nofile.hard} `, 'm'));
      expect(Object.keys(info.NetworkSettings.Networks).sort()).toEqual([
        `ringfence-mcp-net-${session}-in`,
        `ringfence-mcp-net-${session}-out`,
      ]);
      const inner = await docker.getNetwork(`ringfence-mcp-net-${session}-in`).inspect();
      expect(inner.Internal).toBe(true);
    },
  );

  it.skipIf(allowRefused)('audits each egress attempt, allowed and refused', async () => {
    const entries = (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; refs: Record<string, unknown> });
    const egress = entries.filter((e) => e.type === 'mcp.egress');
    expect(egress).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          refs: expect.objectContaining({ server: 'net', host: allowedName, port: 8080, allowed: true }),
        }),
        expect.objectContaining({
          refs: expect.objectContaining({ server: 'net', host: forbiddenName, port: 8080, allowed: false }),
        }),
      ]),
    );
  });

  it.runIf(allowRefused)(
    'on an engine that cannot contain an allow server: refused, saying why and what to use',
    async () => {
      const tools = (await served.client.listTools()).tools.map((t) => t.name);
      expect(tools).toContain('jail_probe');
      expect(tools).not.toContain('net_probe');
      expect(served.stderr()).toContain('net failed to start and is skipped');
      expect(served.stderr()).toContain(allowRefused!.split('. ')[0]);
      expect(
        await listContainers(docker, { all: true, filters: { name: [`ringfence-egress-net-${session}`] } }),
      ).toEqual([]);
    },
  );

  it('after a clean exit: nothing left, and the stderr kept for mcp ls has the env values redacted', async () => {
    await served.close();
    await expect
      .poll(() => managedObjects(session), { timeout: 30_000, interval: 500 })
      .toEqual({ containers: [], networks: [] });
    const ls = await ringfence(['mcp', 'ls', '--json'], { RINGFENCE_HOME: home });
    const jail = (JSON.parse(ls.stdout) as { servers: { name: string; stderr?: string }[] }).servers.find(
      (s) => s.name === 'jail',
    );
    expect(jail?.stderr).toContain('probe server up; secret in env: [redacted]');
    expect(ls.stdout).not.toContain(SECRET);
  });
});

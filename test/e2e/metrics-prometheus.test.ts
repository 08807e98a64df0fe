// `mcp serve --metrics`, scraped by Debian's real prometheus (scripts/ensure-prometheus): real calls
// to a contained server, allowed and denied by a signed policy rule, and a hostile server listing
// hundreds of tools and names built to break the format, then Prometheus' own HTTP API asked what
// it stored. Traffic stays on loopback and our own Docker networks.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cliBin, ringfence } from '../helpers/cli.js';
import {
  docker,
  probeImage,
  refusalFor,
  removeTestContainers,
  startOrigin,
  testNetwork,
  uniqueName,
} from '../helpers/containers.js';
import {
  connectHttp,
  connectStdio,
  firstText,
  freePort,
  freshHome,
  type ServedClient,
  startToolServer,
} from '../helpers/mcp.js';
import { install, makeOrg, policyDocument, signPolicy } from '../helpers/policy.js';
import { stopAll, track } from '../helpers/processes.js';

const prometheusBin = (() => {
  try {
    return execFileSync('sh', ['-c', 'command -v prometheus'], { encoding: 'utf8' }).trim();
  } catch {
    return '';
  }
})();
// The engine may refuse `allow` servers (docs/runtimes.md): then egress is not counted here.
const allowRefused = await refusalFor('allow');

const MANY = 300;
/** Names a hostile server lists to break the exposition or smuggle in a series of its own. */
const HOSTILE_NAMES = [
  'quote"} 1\nringfence_calls_total{server="probe",tool="probe",decision="allow",rule="x',
  'new\nline',
  'back\\slash"',
  'x'.repeat(5000),
];

const token = 'metrics-e2e-token-0123456789';

describe('mcp serve --metrics, scraped by prometheus', () => {
  const session = uniqueName('met').replace(/[^a-z0-9-]/g, '');
  let home: string;
  let client: Client;
  let serve: ChildProcess;
  let prometheus: ChildProcess;
  let prometheusUrl: string;
  let httpPort: number;
  let metricsPort: number;
  let egressMetricsPort: number;
  let egressGateway: ServedClient | undefined;
  let origins: Docker.Container[] = [];
  let stderr = '';

  const call = async (name: string, args: Record<string, unknown> = {}) =>
    client.callTool({ name, arguments: args });

  /** One PromQL query's single value (undefined when it has no sample yet). */
  const query = async (promql: string): Promise<number | undefined> => {
    const answer = await fetch(`${prometheusUrl}/api/v1/query?query=${encodeURIComponent(promql)}`);
    const body = (await answer.json()) as { status: string; data: { result: { value: [number, string] }[] } };
    expect(body.status).toBe('success');
    const [first] = body.data.result;
    return first ? Number(first.value[1]) : undefined;
  };
  /** Waits for Prometheus to have scraped what was done (a scrape each second). */
  const eventually = async (promql: string, expected: number, timeoutMs = 30_000) => {
    const until = Date.now() + timeoutMs;
    let last: number | undefined;
    while (Date.now() < until) {
      last = await query(promql);
      if (last === expected) return;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(last, promql).toBe(expected);
  };

  beforeAll(async () => {
    expect(prometheusBin, 'prometheus is not installed: run scripts/ensure-prometheus').not.toBe('');
    home = await freshHome();
    const dir = join(home, '..');
    const env = { RINGFENCE_HOME: home };
    // A hostile server: many well-formed tools, and names made to break a scrape.
    const tools = [
      ...Array.from({ length: MANY }, (_, i) => ({ name: `t${i}`, inputSchema: { type: 'object' } })),
      ...HOSTILE_NAMES.map((name) => ({ name, inputSchema: { type: 'object' } })),
    ];
    await writeFile(join(dir, 'many.json'), JSON.stringify(tools));
    await writeFile(join(dir, 'behaviours.json'), '{}');
    const many = await startToolServer(join(dir, 'many.json'), join(dir, 'behaviours.json'));
    for (const args of [
      ['probe', '--image', await probeImage()],
      ['many', '--url', many.url],
    ]) {
      const added = await ringfence(['mcp', 'add', ...args], env);
      expect(added.code, added.stderr).toBe(0);
    }
    const org = await makeOrg(join(dir, 'org'));
    const policy = await signPolicy(
      org,
      policyDocument({
        rules: [
          {
            id: 'no-writes',
            match: { server: 'probe', tool: 'probe' },
            when: [{ arg: '/write', glob: '*' }],
            action: 'deny',
            reason: 'the probe may not write',
          },
        ],
      }),
      'metrics-policy',
    );
    const policyDir = join(dir, 'etc');
    await mkdir(policyDir, { recursive: true });
    await install(policy, org, { ...env, RINGFENCE_POLICY_DIR: policyDir });

    httpPort = await freePort();
    metricsPort = await freePort();
    serve = track(
      spawn(
        process.execPath,
        [
          cliBin,
          'mcp',
          'serve',
          '--session',
          session,
          '--http',
          `127.0.0.1:${httpPort}`,
          '--metrics',
          String(metricsPort),
        ],
        {
          env: { ...process.env, ...env, RINGFENCE_POLICY_DIR: policyDir, RINGFENCE_MCP_TOKEN: token },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      ),
    );
    await new Promise<void>((resolve, reject) => {
      serve.stderr!.on('data', (chunk: Buffer) => {
        stderr += chunk.toString();
        if (stderr.includes('listening on')) resolve();
      });
      serve.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
    });
    expect(stderr).toContain(`metrics at http://127.0.0.1:${metricsPort}/metrics`);
    client = await connectHttp(`http://127.0.0.1:${httpPort}/mcp`, token);
    egressMetricsPort = await freePort();

    const promDir = join(dir, 'prometheus');
    await mkdir(join(promDir, 'data'), { recursive: true });
    await writeFile(
      join(promDir, 'prometheus.yml'),
      [
        'global:',
        '  scrape_interval: 1s',
        '  evaluation_interval: 1s',
        'scrape_configs:',
        '  - job_name: ringfence',
        '    scrape_interval: 1s',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${metricsPort}']`,
        '    authorization:',
        `      credentials: ${token}`,
        '  - job_name: egress',
        '    scrape_interval: 1s',
        '    static_configs:',
        `      - targets: ['127.0.0.1:${egressMetricsPort}']`,
        '    authorization:',
        `      credentials: ${token}`,
        '',
      ].join('\n'),
    );
    const promPort = await freePort();
    prometheusUrl = `http://127.0.0.1:${promPort}`;
    prometheus = track(
      spawn(
        prometheusBin,
        [
          `--config.file=${join(promDir, 'prometheus.yml')}`,
          `--storage.tsdb.path=${join(promDir, 'data')}`,
          `--web.listen-address=127.0.0.1:${promPort}`,
        ],
        { stdio: ['ignore', 'ignore', 'pipe'] },
      ),
    );
    let promLog = '';
    prometheus.stderr!.on('data', (chunk: Buffer) => {
      promLog += chunk.toString();
    });
    const until = Date.now() + 60_000;
    for (;;) {
      const ready = await fetch(`${prometheusUrl}/-/ready`).catch(() => undefined);
      if (ready?.ok) break;
      if (Date.now() > until || prometheus.exitCode !== null)
        throw new Error(`prometheus did not start: ${promLog}`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  });

  afterAll(async () => {
    await client?.close().catch(() => {});
    await egressGateway?.close().catch(() => {});
    // Both stopped by their own pids (track/stopAll).
    await stopAll();
    for (const origin of origins) await origin.remove({ force: true }).catch(() => {});
    await removeTestContainers();
  });

  it('counts real calls by server, tool, decision and rule, as Prometheus stores them', async () => {
    for (let i = 0; i < 5; i += 1) expect((await call('probe_probe')).isError).toBeFalsy();
    for (let i = 0; i < 3; i += 1) {
      const denied = await call('probe_probe', { write: '/tmp/x' });
      expect(firstText(denied)).toMatch(/policy rule "no-writes"/);
    }
    await eventually('ringfence_calls_total{server="probe",tool="probe",decision="allow"}', 5);
    await eventually(
      'ringfence_calls_total{server="probe",tool="probe",decision="deny",rule="no-writes"}',
      3,
    );
    // Every call timed; only the allowed ones went upstream.
    await eventually('ringfence_call_duration_seconds_count{server="probe",method="tools/call"}', 8);
    await eventually(
      'ringfence_upstream_duration_seconds_count{server="probe",method="tools/call",outcome="answered"}',
      5,
    );
    expect(await query('ringfence_container_starts_total{server="probe"}')).toBe(1);
    expect(await query('ringfence_container_start_failures_total{server="probe"}')).toBeUndefined();
    expect(await query('ringfence_audit_fdatasync_duration_seconds_count')).toBeGreaterThan(0);
    expect(await query('ringfence_audit_entries_total')).toBeGreaterThan(8);
    expect(await query('ringfence_sessions{transport="http"}')).toBe(1);
    expect(await query('up{job="ringfence"}')).toBe(1);
  });

  // A gateway of its own (its own home, no policy): a signed policy never lets a server reach the
  // private addresses our origin containers have (policy-view/view.ts), and this one must.
  it.skipIf(allowRefused)('counts egress the sidecar allowed and refused, by server', async () => {
    const egressHome = await freshHome();
    const allowedName = uniqueName('rf-origin-ok');
    const forbiddenName = uniqueName('rf-origin-no');
    const added = await ringfence(
      [
        'mcp',
        'add',
        'egress',
        '--image',
        await probeImage(),
        '--egress-allow',
        `${allowedName}:8080`,
        '--egress-allow-address',
        '172.16.0.0/12',
        '--egress-allow-address',
        '192.168.0.0/16',
      ],
      { RINGFENCE_HOME: egressHome },
    );
    expect(added.code, added.stderr).toBe(0);
    const egressSession = uniqueName('meg').replace(/[^a-z0-9-]/g, '');
    egressGateway = await connectStdio(
      egressHome,
      { RINGFENCE_POLICY_DIR: join(egressHome, '..', 'no-policy'), RINGFENCE_MCP_TOKEN: token },
      {},
      { args: ['--session', egressSession, '--metrics', String(egressMetricsPort)] },
    );
    // The origins join the sidecar's outer network only (as in containers-isolation.test.ts).
    const network = await testNetwork(uniqueName('rf-test-origins'));
    origins = await Promise.all([startOrigin(allowedName, network), startOrigin(forbiddenName, network)]);
    const outer = docker.getNetwork(`ringfence-mcp-egress-${egressSession}-out`);
    for (const origin of origins) await outer.connect({ Container: origin.id });
    const probe = async (url: string) => {
      const result = await egressGateway!.client.callTool({
        name: 'egress_probe',
        arguments: { fetch: url },
      });
      return JSON.parse(firstText(result)) as { fetch?: { status?: number; body?: string } };
    };
    expect((await probe(`http://${allowedName}:8080/`)).fetch).toEqual({
      status: 200,
      body: `origin:${allowedName}`,
    });
    expect((await probe(`http://${forbiddenName}:8080/`)).fetch?.status).toBe(403);
    expect((await probe(`http://${forbiddenName}:8080/again`)).fetch?.status).toBe(403);
    await eventually('ringfence_egress_total{job="egress",server="egress",verdict="allowed"}', 1);
    await eventually('ringfence_egress_total{job="egress",server="egress",verdict="refused"}', 2);
    expect(await query('ringfence_container_starts_total{job="egress",server="egress"}')).toBe(1);
    expect(await query('ringfence_sessions{job="egress",transport="stdio"}')).toBe(1);
  });

  it('a hostile server cannot add more series than the bound, nor break the scrape', async () => {
    for (let i = 0; i < MANY; i += 1) expect((await call(`many_t${i}`)).isError).toBeFalsy();
    await eventually('sum(ringfence_calls_total{server="many"})', MANY);
    // 200 names of its own, the rest folded into one.
    expect(await query('count(ringfence_calls_total{server="many"})')).toBe(201);
    expect(await query('ringfence_calls_total{server="many",tool="_other"}')).toBe(MANY - 200);
    expect(
      await query(
        'ringfence_metrics_label_values_folded_total{job="ringfence",metric="ringfence_calls_total"}',
      ),
    ).toBe(MANY - 200);
    // Its hostile names were withheld: counted by reason, never shown as a label.
    expect(await query('sum(ringfence_withheld_definitions{server="many"})')).toBe(HOSTILE_NAMES.length);
    expect(await query('count(ringfence_withheld_definitions{server="many"})')).toBeLessThanOrEqual(2);
    // No smuggled series: the probe's count is still its own.
    expect(
      await query('ringfence_calls_total{server="probe",tool="probe",decision="allow",rule="x"}'),
    ).toBeUndefined();
    // The scrape still parses (up) and stays bounded in all.
    expect(await query('up{job="ringfence"}')).toBe(1);
    expect(await query('scrape_samples_scraped{job="ringfence"}')).toBeLessThan(2000);
  });

  it('answers GET /healthz on --http without a token, and nothing else without one', async () => {
    const health = await fetch(`http://127.0.0.1:${httpPort}/healthz`);
    expect([health.status, await health.text()]).toEqual([200, 'ok\n']);
    const mcp = await fetch(`http://127.0.0.1:${httpPort}/healthz`, { method: 'POST', body: '{}' });
    expect(mcp.status).toBe(401);
    const metrics = await fetch(`http://127.0.0.1:${httpPort}/metrics`);
    expect(metrics.status).toBe(401);
  });
});

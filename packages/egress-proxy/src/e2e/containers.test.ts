import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUNDLE } from '../__fixtures__/harness.js';
import { isListeningLine } from '../contract/index.js';

/**
 * The sidecar arrangement of DESIGN.md section 6 with real containers: a "server" container on
 * an internal network reaches an allowed origin only through the proxy. Both networks are
 * created `--internal`, so nothing in this test can route beyond the project's own containers.
 * Runs when Docker is reachable and the offline Node base image (`ringfence images build`)
 * exists; otherwise it is skipped and says why — except in CI (`CI` set), where .ci/run builds
 * the image first and a missing one must fail, not skip.
 */
function docker(args: string[], input?: string): string {
  return execFileSync('docker', args, {
    encoding: 'utf8',
    timeout: 120_000,
    input,
    stdio: ['pipe', 'pipe', 'pipe'],
  });
}

function findBaseImage(): string | null {
  const probe = spawnSync(
    'docker',
    ['images', '--format', '{{.Repository}}:{{.Tag}}', 'ringfence/node-base'],
    {
      encoding: 'utf8',
      timeout: 20_000,
    },
  );
  if (probe.status !== 0) return null;
  return probe.stdout.split('\n').find((l) => l.startsWith('ringfence/node-base:')) ?? null;
}

const base = findBaseImage();
const id = `${process.pid}-${Date.now().toString(36)}`;
const name = (what: string) => `ringfence-e2e-egress-${what}-${id}`;
const LABEL = ['--label', 'ringfence.test=egress-proxy'];
const created: { containers: string[]; networks: string[]; image?: string } = {
  containers: [],
  networks: [],
};

const ORIGIN = `require('http').createServer((q,s)=>s.end('origin '+process.env.WHO)).listen(8080)`;
const CLIENT = `
const http=require('http'),net=require('net');
const via=(host)=>new Promise(r=>{const q=http.request({host:'egress',port:3128,path:'http://'+host+'/',headers:{host}},res=>{let b='';res.on('data',d=>b+=d);res.on('end',()=>r({status:res.statusCode,body:b}))});q.on('error',e=>r({error:e.code}));q.setTimeout(8000,()=>q.destroy(new Error('timeout')));q.end()});
const direct=(ip)=>new Promise(r=>{const s=net.connect({host:ip,port:8080});s.setTimeout(3000,()=>{s.destroy();r('timeout')});s.on('connect',()=>{s.destroy();r('connected')});s.on('error',e=>r(e.code))});
(async()=>{const o={};o.allowed=await via('allowed.test:8080');o.forbidden=await via('forbidden.test:8080');
o.literal=await via(process.env.ALLOWED_IP+':8080');o.directAllowed=await direct(process.env.ALLOWED_IP);
o.directForbidden=await direct(process.env.FORBIDDEN_IP);console.log(JSON.stringify(o))})();`;

function ipOn(container: string, network: string): string {
  return docker([
    'inspect',
    '-f',
    `{{(index .NetworkSettings.Networks "${network}").IPAddress}}`,
    container,
  ]).trim();
}

describe.skipIf(base === null && !process.env.CI)(
  `sidecar with real containers (base image: ${base ?? 'none; run ringfence images build'})`,
  () => {
    let result: Record<string, unknown> = {};
    let proxyLog = '';

    beforeAll(async () => {
      const ctx = mkdtempSync(join(tmpdir(), 'ringfence-e2e-'));
      try {
        copyFileSync(BUNDLE, join(ctx, 'ringfence-egress-proxy.mjs'));
        writeFileSync(
          join(ctx, 'Dockerfile'),
          `FROM ${base}\nCOPY ringfence-egress-proxy.mjs /opt/ringfence/ringfence-egress-proxy.mjs\nUSER 65532:65532\nENTRYPOINT ["node","/opt/ringfence/ringfence-egress-proxy.mjs"]\n`,
        );
        created.image = `ringfence-e2e-egress:${id}`;
        docker(['build', '-q', '-t', created.image, ...LABEL, ctx]);
      } finally {
        rmSync(ctx, { recursive: true, force: true });
      }
      const netIn = name('in');
      const netOut = name('out');
      for (const n of [netIn, netOut]) {
        docker(['network', 'create', '--internal', ...LABEL, n]);
        created.networks.push(n);
      }
      const subnet = docker(['network', 'inspect', '-f', '{{(index .IPAM.Config 0).Subnet}}', netOut]).trim();
      for (const who of ['allowed', 'forbidden']) {
        const c = name(who);
        docker([
          'run',
          '-d',
          '--name',
          c,
          ...LABEL,
          '--network',
          netOut,
          '-e',
          `WHO=${who}`,
          base as string,
          'node',
          '-e',
          ORIGIN,
        ]);
        created.containers.push(c);
      }
      const allowedIp = ipOn(name('allowed'), netOut);
      const forbiddenIp = ipOn(name('forbidden'), netOut);
      const sidecar = name('proxy');
      docker([
        'run',
        '-d',
        '-i',
        '--name',
        sidecar,
        ...LABEL,
        '--network',
        netOut,
        '--read-only',
        '--cap-drop',
        'ALL',
        '--security-opt',
        'no-new-privileges',
        created.image,
        '--listen',
        '0.0.0.0:3128',
        '--allow',
        'allowed.test:8080',
        '--allow-address',
        subnet,
        '--resolve',
        `allowed.test=${allowedIp}`,
        '--resolve',
        `forbidden.test=${forbiddenIp}`,
        '--dns-server',
        '127.0.0.1:9',
        '--lifeline',
      ]);
      created.containers.push(sidecar);
      docker(['network', 'connect', '--alias', 'egress', netIn, sidecar]);
      const deadline = Date.now() + 20_000;
      // The readiness line is on the container's stderr, which `docker logs` passes on as its own.
      const listening = () =>
        spawnSync('docker', ['logs', sidecar], { encoding: 'utf8' }).stderr.split('\n').some(isListeningLine);
      while (!listening() && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 200));
      }
      expect(listening()).toBe(true);
      const client = name('server');
      created.containers.push(client);
      const out = docker([
        'run',
        '--name',
        client,
        ...LABEL,
        '--network',
        netIn,
        '--read-only',
        '--cap-drop',
        'ALL',
        '-e',
        `ALLOWED_IP=${allowedIp}`,
        '-e',
        `FORBIDDEN_IP=${forbiddenIp}`,
        base as string,
        'node',
        '-e',
        CLIENT,
      ]);
      result = JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as Record<string, unknown>;
      proxyLog = docker(['logs', sidecar]);
    }, 180_000);

    afterAll(() => {
      for (const c of created.containers) spawnSync('docker', ['rm', '-f', c], { timeout: 60_000 });
      for (const n of created.networks) spawnSync('docker', ['network', 'rm', n], { timeout: 60_000 });
      if (created.image) spawnSync('docker', ['rmi', '-f', created.image], { timeout: 60_000 });
    }, 120_000);

    it('reaches the allowed origin through the sidecar', () => {
      expect(result['allowed']).toEqual({ status: 200, body: 'origin allowed' });
    });

    it('cannot reach the forbidden origin through the sidecar, by name or by address', () => {
      expect((result['forbidden'] as { status: number }).status).toBe(403);
      expect((result['literal'] as { status: number }).status).toBe(403);
    });

    it('cannot reach either origin directly from the internal network', () => {
      expect(result['directAllowed']).not.toBe('connected');
      expect(result['directForbidden']).not.toBe('connected');
    });

    it('logs each attempt as a decision line', () => {
      const lines = proxyLog
        .split('\n')
        .filter((l) => l.includes('"event":"egress"'))
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(lines.map((l) => [l['host'], l['allowed']])).toEqual([
        ['allowed.test', true],
        ['forbidden.test', false],
        [expect.any(String), false],
      ]);
    });
  },
);

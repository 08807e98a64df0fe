import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors.js';
import { inspectHome } from '../home/home.js';
import { type EngineInfo, resolveEngineEndpoint } from '../runtime/engine.js';
import { checkEngineDns, checkNode, type DoctorEnvironment, runDoctor } from './doctor.js';
import { internalDnsVerdict } from './engine-dns.js';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-doctor-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const sidecarDigest = `sha256:0123456789abcdef${'0'.repeat(48)}`;
const fakeDocker = {
  listImages: async () => [
    { Id: 'base', RepoTags: ['ringfence/node-base:20.20.2-abc'], Labels: {} },
    {
      Id: 'sidecar',
      RepoTags: ['ringfence/egress-sidecar:0123456789abcdef'],
      Labels: { 'ringfence.content-digest': sidecarDigest },
      Created: 1,
    },
    // An image built on top inherits the node-base label but is not the base image.
    { Id: 'app', RepoTags: ['someone/app:1'], Labels: {} },
  ],
  getImage: () => ({
    inspect: async () => ({ Config: { Entrypoint: ['node', '/opt/ringfence/ringfence-egress-proxy.mjs'] } }),
  }),
} as unknown as Docker;

function environment(overrides: Partial<DoctorEnvironment> = {}): DoctorEnvironment {
  return {
    env: { RINGFENCE_HOME: join(dir, 'home'), RINGFENCE_POLICY_DIR: join(dir, 'policy') },
    nodeVersion: '20.20.2',
    engine: async () => ({
      endpoint: { host: 'unix:///fake.sock', source: 'DOCKER_HOST', options: {} },
      info: { kind: 'docker', version: '28.0.0', apiVersion: '1.47' },
      docker: fakeDocker,
    }),
    inspectHome: (path) => inspectHome(path),
    loadPolicy: async () => ({ ok: true, present: false, dir: join(dir, 'policy') }),
    hostLimits: () => ({ hard: { nofile: 20000, nproc: 96363 }, mayRaise: false }),
    engineDefaultLimits: async () => ({}),
    ...overrides,
  };
}

describe('runDoctor', () => {
  it('passes when the engine answers and the home does not exist yet', async () => {
    const report = await runDoctor(environment());
    expect(report.ok).toBe(true);
    expect(report.checks.map((c) => [c.id, c.status])).toEqual([
      ['node', 'ok'],
      ['engine', 'ok'],
      ['engine-dns', 'ok'],
      ['engine-contract', 'ok'],
      ['engine-limits', 'ok'],
      ['home', 'ok'],
      ['policy', 'ok'],
      ['images', 'ok'],
      ['upstream-eras', 'ok'],
      ['oauth-logins', 'ok'],
      ['credentials', 'ok'],
    ]);
    expect(report.checks.find((c) => c.id === 'engine')?.summary).toContain('docker 28.0.0');
    expect(report.checks.find((c) => c.id === 'credentials')?.summary).toMatch(
      /no credentials stored; new values go to /,
    );
  });

  it('shows no password of DOCKER_HOST, whether the engine answers or not (issue 21.6)', async () => {
    const endpoint = resolveEngineEndpoint({ DOCKER_HOST: 'tcp://admin:dockerPw0001@engine.example:2376' });
    const answered = await runDoctor(
      environment({
        engine: async () => ({
          endpoint,
          info: { kind: 'docker', version: '28.0.0', apiVersion: '1.47' },
          docker: fakeDocker,
        }),
      }),
    );
    const failed = await runDoctor(
      environment({
        engine: async () => {
          throw new GatewayError(
            'ENGINE_UNREACHABLE',
            'No container engine answers at tcp://admin:dockerPw0002@engine.example:2376 (ECONNREFUSED). Run …',
          );
        },
      }),
    );
    for (const report of [answered, failed]) expect(JSON.stringify(report)).not.toMatch(/dockerPw000/);
    expect(answered.checks.find((c) => c.id === 'engine')?.summary).toContain(
      'tcp://***@engine.example:2376',
    );
    expect(() => resolveEngineEndpoint({ DOCKER_HOST: 'tcp://u:dockerPw0003@[bad' })).toThrow(
      expect.objectContaining({ message: expect.not.stringContaining('dockerPw0003') }),
    );
  });

  it('fails, with a fix, when no engine answers, and skips the image check', async () => {
    const report = await runDoctor(
      environment({
        engine: async () => {
          throw new GatewayError(
            'ENGINE_UNREACHABLE',
            'No container engine answers at unix:///nope.sock (ENOENT). Run …',
          );
        },
      }),
    );
    expect(report.ok).toBe(false);
    const engine = report.checks.find((c) => c.id === 'engine');
    expect(engine).toMatchObject({ status: 'fail', required: true });
    expect(engine?.summary).toContain('unix:///nope.sock');
    expect(engine?.fix).toContain('scripts/ensure-engine');
    expect(report.checks.some((c) => c.id === 'images')).toBe(false);
  });

  it('fails when RINGFENCE_HOME is readable by others, naming the chmod that fixes it', async () => {
    const home = join(dir, 'home');
    await import('node:fs/promises').then((fs) => fs.mkdir(home, { mode: 0o755 }));
    await chmod(home, 0o755);
    const report = await runDoctor(environment());
    const check = report.checks.find((c) => c.id === 'home');
    expect(report.ok).toBe(false);
    expect(check?.status).toBe('fail');
    expect(check?.summary).toContain('0755');
    expect(check?.fix).toBe(`chmod 700 '${home}'`);
  });

  it('fails when a file in RINGFENCE_HOME is group-readable', async () => {
    const home = join(dir, 'home');
    await import('node:fs/promises').then((fs) => fs.mkdir(home, { mode: 0o700 }));
    await writeFile(join(home, 'mcp-pins.json'), '{}', { mode: 0o640 });
    await chmod(join(home, 'mcp-pins.json'), 0o640);
    const check = (await runDoctor(environment())).checks.find((c) => c.id === 'home');
    expect(check?.status).toBe('fail');
    expect(check?.fix).toContain(`chmod 600 '${join(home, 'mcp-pins.json')}'`);
  });

  it('passes a 0700 home with 0600 files', async () => {
    const home = join(dir, 'home');
    await import('node:fs/promises').then((fs) => fs.mkdir(home, { mode: 0o700 }));
    await writeFile(join(home, 'audit.jsonl'), '', { mode: 0o600 });
    const check = (await runDoctor(environment())).checks.find((c) => c.id === 'home');
    expect(check).toMatchObject({ status: 'ok' });
  });

  it('refuses a home that is a symbolic link', async () => {
    const { mkdir, symlink } = await import('node:fs/promises');
    await mkdir(join(dir, 'real'), { mode: 0o700 });
    await symlink(join(dir, 'real'), join(dir, 'home'));
    const check = (await runDoctor(environment())).checks.find((c) => c.id === 'home');
    expect(check?.status).toBe('fail');
    expect(check?.summary).toContain('not a directory');
  });

  it('reports a present policy that fails verification as a required failure, with the fix', async () => {
    const report = await runDoctor(
      environment({
        loadPolicy: async () => ({
          ok: false,
          code: 'POLICY_EXPIRED',
          message: 'policy example-corp expired on 2026-01-01.',
        }),
      }),
    );
    const check = report.checks.find((c) => c.id === 'policy');
    expect(check).toMatchObject({ status: 'fail', required: true });
    expect(check?.summary).toContain('POLICY_EXPIRED');
    expect(check?.fix).toContain('ringfence policy install');
    expect(report.ok).toBe(false);
  });

  it('names the policy in force: name, version, expiry and signers', async () => {
    const report = await runDoctor(
      environment({
        loadPolicy: async () =>
          ({
            ok: true,
            present: true,
            dir: '/etc/ringfence',
            policy: { name: 'example-corp', version: 7 },
            digest: 'sha256:00',
            signers: ['ab'.repeat(32)],
            expiresAt: Date.parse('2099-01-01T00:00:00Z'),
          }) as never,
      }),
    );
    const summary = report.checks.find((c) => c.id === 'policy')?.summary;
    expect(summary).toContain('example-corp version 7');
    expect(summary).toContain('2099-01-01');
    expect(summary).toContain('abababababab');
  });

  it('warns, without failing, when no base image is built', async () => {
    const noImages = { listImages: async () => [] } as unknown as Docker;
    const report = await runDoctor(
      environment({
        engine: async () => ({
          endpoint: { host: 'unix:///fake.sock', source: 'DOCKER_HOST', options: {} },
          info: { kind: 'podman', version: '5.0.0', apiVersion: '1.41' },
          docker: noImages,
        }),
      }),
    );
    expect(report.ok).toBe(true);
    expect(report.checks.find((c) => c.id === 'images')).toMatchObject({
      status: 'warn',
      fix: 'ringfence images build',
    });
    expect(report.checks.find((c) => c.id === 'engine')?.summary).toContain('podman 5.0.0');
  });
});

describe('the engine as the doctor explains it', () => {
  const withEngine = (info: EngineInfo, source: 'DOCKER_HOST' | 'default-socket' = 'DOCKER_HOST') =>
    environment({
      engine: async () => ({
        endpoint: { host: 'unix:///run/podman/podman.sock', source, options: {} },
        info,
        docker: fakeDocker,
      }),
    });

  it('names engine, version, mode and socket, and says where a found socket came from', async () => {
    const report = await runDoctor(
      withEngine(
        { kind: 'podman', version: '4.9.3', apiVersion: '1.41', mode: 'rootless', cgroupVersion: '2' },
        'default-socket',
      ),
    );
    expect(report.checks.find((c) => c.id === 'engine')?.summary).toBe(
      'podman 4.9.3, rootless (API 1.41) at unix:///run/podman/podman.sock (found; set DOCKER_HOST to choose another)',
    );
    expect(report.checks.find((c) => c.id === 'engine-contract')).toMatchObject({
      status: 'ok',
      summary: 'podman 4.9.3, rootless keeps it for every egress mode',
    });
  });

  it('warns, naming the servers it will refuse and what to use instead, on rootful podman', async () => {
    const report = await runDoctor(
      withEngine({
        kind: 'podman',
        version: '4.3.1',
        apiVersion: '1.41',
        mode: 'rootful',
        cgroupVersion: '2',
      }),
    );
    expect(report.ok).toBe(true);
    const contract = report.checks.find((c) => c.id === 'engine-contract');
    expect(contract?.status).toBe('warn');
    expect(contract?.summary).toMatch(
      /^servers with egress allow will be refused on this engine: podman 4\.3\.1, rootful gives the host an address/,
    );
    expect(contract?.fix).toContain('rootless podman');
  });

  it('warns that every server will be refused on rootless cgroups v1, and how to get v2', async () => {
    const contract = (
      await runDoctor(
        withEngine({
          kind: 'podman',
          version: '4.3.1',
          apiVersion: '1.41',
          mode: 'rootless',
          cgroupVersion: '1',
        }),
      )
    ).checks.find((c) => c.id === 'engine-contract');
    expect(contract?.summary).toMatch(/^every server will be refused on this engine: .*cgroups v1/);
    expect(contract?.fix).toContain('systemd.unified_cgroup_hierarchy=1');
  });

  it('says what to run for Docker and for Podman, rootful and rootless, when nothing answers', async () => {
    const report = await runDoctor(
      environment({
        engine: async () => {
          throw new Error(
            'No container engine answers at unix:///run/user/1000/podman/podman.sock (ENOENT). Run …',
          );
        },
      }),
    );
    const fix = report.checks.find((c) => c.id === 'engine')?.fix ?? '';
    expect(fix).toContain('systemctl --user start podman.socket');
    expect(fix).toContain('podman system service --time=0');
    expect(fix).toContain('DOCKER_HOST=unix:///run/podman/podman.sock');
  });
});

describe('checkNode', () => {
  it.each([
    ['20.19.0', 'ok'],
    ['22.1.0', 'ok'],
    ['20.18.3', 'fail'],
    ['18.20.0', 'fail'],
  ])('%s → %s', (version, status) => {
    expect(checkNode(version).status).toBe(status);
  });
});

describe('CVE-2024-29018 (DNS forwarded from internal networks)', () => {
  it.each([
    ['20.10.24+dfsg1', 'affected'],
    ['23.0.10', 'affected'],
    ['23.0.11', 'fixed'],
    ['24.0.7-0ubuntu4', 'affected'],
    ['24.0.99', 'affected'],
    ['25.0.4', 'affected'],
    ['25.0.5', 'fixed'],
    ['25.1.0', 'fixed'],
    ['26.0.0', 'affected'],
    ['26.0.1', 'affected'],
    ['26.0.2', 'fixed'],
    ['26.1.0', 'fixed'],
    ['28.0.0', 'fixed'],
    ['v19.03.15', 'affected'],
    ['master-dockerproject-2024', 'unknown'],
  ])('docker %s → %s', (version, verdict) => {
    expect(internalDnsVerdict({ kind: 'docker', version })).toBe(verdict);
  });

  it('podman is not affected', () => {
    expect(internalDnsVerdict({ kind: 'podman', version: '4.3.1' })).toBe('not-docker');
    expect(checkEngineDns({ kind: 'podman', version: '4.3.1' }).status).toBe('ok');
  });

  it('warns on an affected engine, saying what to upgrade to and what ringfence does meanwhile', async () => {
    const report = await runDoctor(
      environment({
        engine: async () => ({
          endpoint: { host: 'unix:///fake.sock', source: 'DOCKER_HOST', options: {} },
          info: { kind: 'docker', version: '25.0.3', apiVersion: '1.44' },
          docker: fakeDocker,
        }),
      }),
    );
    // A warning, not a failure: the gateway still runs on such an engine.
    expect(report.ok).toBe(true);
    const check = report.checks.find((c) => c.id === 'engine-dns');
    expect(check).toMatchObject({ status: 'warn', required: false });
    expect(check?.summary).toContain('docker 25.0.3');
    expect(check?.fix).toContain('Docker 26.0.2 or newer (25.0.5 or 23.0.11 on those release lines)');
    expect(check?.fix).toContain('servers with an egress allowlist no resolver');
    expect(checkEngineDns({ kind: 'docker', version: 'dev' })).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('docker version'),
    });
  });
});

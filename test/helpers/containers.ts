import { randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { buildContextImage, buildNodeBaseImage } from '@ringfence/gateway/images';
import {
  type ContainerProcessLimits,
  containerProcessLimits,
  createDockerClient,
  type EngineInfo,
  engineRefusal,
  hostHardLimitsFor,
  listContainers,
  probeEngine,
  resolveEngineEndpoint,
  ulimits,
} from '@ringfence/gateway/runtime';
import type Docker from 'dockerode';
import { repoRoot } from './cli.js';

export const docker: Docker = createDockerClient();
/** Lists containers, asking again when Podman fails a list that raced a container's exit. */
export { listContainers };
export const TEST_LABEL = 'ringfence.test';
/**
 * This test file's run: the value of {@link TEST_LABEL} on what it creates, so its clean-up
 * removes its own containers and networks only, never those of a run beside it (another
 * checkout's suite, a CI rehearsal) on the same engine.
 */
export const TEST_RUN = `${process.pid}-${randomBytes(4).toString('hex')}`;
/** The labels a test's own container or network carries. */
export const testLabels = (): Record<string, string> => ({ [TEST_LABEL]: TEST_RUN });

let engineInfo: Promise<EngineInfo> | undefined;
/** The engine the suites run against, as the gateway probes it (kind, mode, cgroup version). */
export function engine(): Promise<EngineInfo> {
  const endpoint = resolveEngineEndpoint();
  engineInfo ??= probeEngine(createDockerClient(endpoint), endpoint);
  return engineInfo;
}

/**
 * The nofile and nproc limits the gateway names on its containers against this engine (the
 * gateways the suites start inherit this process's limits). Containers of the tests' own name
 * them too: an engine's own defaults may not start here (docs/runtimes.md, "Process limits").
 */
export function expectedProcessLimits(): ContainerProcessLimits {
  return containerProcessLimits(hostHardLimitsFor(resolveEngineEndpoint()));
}
export const testUlimits = () => ulimits(expectedProcessLimits());

/** Why the gateway refuses a server with this egress mode on this engine (docs/runtimes.md), if it does. */
export async function refusalFor(mode: 'deny' | 'allow' | 'any'): Promise<string | undefined> {
  return engineRefusal(await engine(), mode);
}

/**
 * Variables the engine itself puts in every container, beside the image's: Podman adds
 * `container=podman` and `TERM`. Neither comes from the gateway.
 */
export async function engineEnvironment(): Promise<string[]> {
  return (await engine()).kind === 'podman' ? ['TERM', 'container'] : [];
}

/**
 * All capabilities dropped, as the engine reports it: Docker echoes `ALL`, Podman lists each
 * capability it dropped. Either way nothing may be added back.
 */
export async function expectAllCapabilitiesDropped(hostConfig: {
  CapDrop?: string[] | null;
  CapAdd?: string[] | null;
}): Promise<void> {
  const { expect } = await import('vitest');
  expect(hostConfig.CapAdd ?? []).toEqual([]);
  if ((await engine()).kind === 'docker') {
    expect(hostConfig.CapDrop).toEqual(['ALL']);
    return;
  }
  // Podman's default set, each of which a container would otherwise have.
  expect(hostConfig.CapDrop).toEqual(
    expect.arrayContaining(
      ['AUDIT_WRITE', 'CHOWN', 'DAC_OVERRIDE', 'FOWNER', 'FSETID', 'KILL', 'MKNOD'].concat([
        'NET_BIND_SERVICE',
        'NET_RAW',
        'SETFCAP',
        'SETGID',
        'SETPCAP',
        'SETUID',
        'SYS_CHROOT',
      ]),
    ),
  );
}

let baseRef: Promise<string> | undefined;
export function nodeBase(): Promise<string> {
  baseRef ??= buildNodeBaseImage(docker).then((image) => image.ref);
  return baseRef;
}

/** A fixture server (a file in test/fixtures/, or `hostPath`) on the Node base image, non-root. */
async function fixtureImage(file: string, repository: string, hostPath?: string): Promise<string> {
  const base = await nodeBase();
  const built = await buildContextImage(docker, {
    repository,
    context: {
      dockerfile: `FROM ${base}\nCOPY ${file} /app/${file}\nUSER 65532:65532\nENTRYPOINT ["node","/app/${file}"]\n`,
      files: [
        { path: file, mode: 0o644, source: { hostPath: hostPath ?? `${repoRoot}test/fixtures/${file}` } },
      ],
    },
    labels: { [TEST_LABEL]: '1' },
  });
  return built.ref;
}

/** The probe server (test/fixtures/probe-server.mjs): the hostile server looking around. */
export const probeImage = () => fixtureImage('probe-server.mjs', 'ringfence-test/probe');

/** A server offering tools under ringfence's own names (test/fixtures/impostor-server.mjs). */
export const impostorImage = () => fixtureImage('impostor-server.mjs', 'ringfence-test/impostor');

/** A server that asks its client for sampling, elicitation and roots (test/fixtures/asking-server.mjs). */
export const askingImage = () => fixtureImage('asking-server.mjs', 'ringfence-test/asking');

/** The credential e2e's server: a poisoned tool that counts what reached it, and a tool that leaks keys (test/fixtures). */
export const secretsImage = () => fixtureImage('secrets-server.mjs', 'ringfence-test/secrets');

/** A server offering prompts, resources, subscriptions, completions and logging, telling what reached it (test/fixtures). */
export const methodImage = () => fixtureImage('method-server.mjs', 'ringfence-test/methods');

/**
 * A 2026-07-28-only server on the v2 SDK (test/fixtures/modern-server.mjs), bundled with its SDK
 * into one file by esbuild (from this checkout's node_modules: nothing is fetched).
 */
export async function modernImage(): Promise<string> {
  const { build } = await import('esbuild');
  const dir = await mkdtemp(join(tmpdir(), 'rf-modern-fixture-'));
  const outfile = join(dir, 'modern-server.mjs');
  await build({
    entryPoints: [`${repoRoot}test/fixtures/modern-server.mjs`],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile,
    banner: {
      js: "import { createRequire as __require } from 'node:module'; const require = __require(import.meta.url);",
    },
    logLevel: 'warning',
  });
  try {
    return await fixtureImage('modern-server.mjs', 'ringfence-test/modern', outfile);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A server that keeps running after its stdin ends and ignores SIGTERM (test/fixtures). */
export const eofIgnoringImage = () => fixtureImage('eof-ignoring-server.mjs', 'ringfence-test/stubborn');

/** A server that tries to resolve names from inside, and can run a resolver of its own (test/fixtures). */
export const resolverProbeImage = () =>
  fixtureImage('resolver-probe-server.mjs', 'ringfence-test/resolver-probe');

/** A server whose answers and listings carry links and icons a client would open itself (test/fixtures). */
export const hostileLinksImage = () =>
  fixtureImage('hostile-links-server.mjs', 'ringfence-test/hostile-links');

/**
 * Reaper processes (runtime/reaper-main.js) watching a gateway of `session`, found in /proc by
 * their command line (`--session SESSION`).
 */
export async function reaperPids(session: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const argv = await readFile(`/proc/${entry}/cmdline`, 'utf8').then(
      (text) => text.split('\0'),
      (): string[] => [],
    );
    const at = argv.indexOf('--session');
    if (argv.some((a) => a.endsWith('reaper-main.js')) && at >= 0 && argv[at + 1] === session)
      pids.push(Number(entry));
  }
  return pids;
}

/** An internal network of our own for origin containers to start on (no route anywhere). */
export async function testNetwork(name: string): Promise<string> {
  await docker.createNetwork({ Name: name, Internal: true, Labels: testLabels() });
  return name;
}

/** A tiny HTTP origin container of our own, answering `origin:<name>`, on an internal test network. */
export async function startOrigin(name: string, network: string): Promise<Docker.Container> {
  const container = await docker.createContainer({
    name,
    Image: await nodeBase(),
    Cmd: ['node', '-e', `require('http').createServer((q,s)=>s.end('origin:${name}')).listen(8080)`],
    Labels: testLabels(),
    User: '65532:65532',
    HostConfig: { NetworkMode: network, ReadonlyRootfs: true, CapDrop: ['ALL'], Ulimits: testUlimits() },
  });
  await container.start();
  return container;
}

export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Everything ringfence-managed (or test-labelled) that exists now. */
export async function managedObjects(session?: string) {
  const filters = { label: [session ? `ringfence.session=${session}` : 'ringfence.managed=1'] };
  // Podman 4.3 can fail a list that races a container's exit; the gateway asks again, so do we.
  const containers = await listContainers(docker, { all: true, filters });
  const networks = await docker.listNetworks({ filters });
  return {
    containers: containers.map((c) => c.Names[0]!.replace(/^\//, '')),
    networks: networks.map((n) => n.Name),
  };
}

/** A run whose process is gone (it crashed before cleaning up, or an older label form). */
function deadRun(value: string | undefined): boolean {
  const form = /^(\d+)-[0-9a-f]+$/.exec(value ?? '');
  if (!form) return true;
  const pid = Number(form[1]);
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Remove this run's test containers and networks, and those of runs whose process is gone; a
 * run beside this one (same engine, still alive) keeps its own.
 */
export async function removeTestContainers(): Promise<void> {
  const filters = { label: [TEST_LABEL] };
  const ours = (labels: Record<string, string> | undefined) =>
    labels?.[TEST_LABEL] === TEST_RUN || deadRun(labels?.[TEST_LABEL]);
  const containers = await listContainers(docker, { all: true, filters });
  await Promise.all(
    containers
      .filter((c) => ours(c.Labels))
      .map((c) =>
        docker
          .getContainer(c.Id)
          .remove({ force: true })
          .catch(() => {}),
      ),
  );
  const networks = await docker.listNetworks({ filters });
  await Promise.all(
    networks
      .filter((n) => ours(n.Labels))
      .map((n) =>
        docker
          .getNetwork(n.Id)
          .remove()
          .catch(() => {}),
      ),
  );
}

export async function execIn(container: Docker.Container, cmd: string[]): Promise<string> {
  const exec = await container.exec({ Cmd: cmd, AttachStdout: true, AttachStderr: true });
  const stream = await exec.start({ hijack: true, stdin: false });
  const out = new PassThrough();
  let text = '';
  out.on('data', (c: Buffer) => (text += c.toString()));
  docker.modem.demuxStream(stream, out, out);
  await new Promise((resolve) => stream.on('end', resolve));
  return text;
}

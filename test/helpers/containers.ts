import { randomBytes } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { buildContextImage, buildNodeBaseImage } from '@ringfence/gateway/images';
import { createDockerClient } from '@ringfence/gateway/runtime';
import type Docker from 'dockerode';
import { repoRoot } from './cli.js';

export const docker: Docker = createDockerClient();
export const TEST_LABEL = 'ringfence.test';

let baseRef: Promise<string> | undefined;
export function nodeBase(): Promise<string> {
  baseRef ??= buildNodeBaseImage(docker).then((image) => image.ref);
  return baseRef;
}

/** The probe server (test/fixtures/probe-server.mjs) on the Node base image, non-root. */
export async function probeImage(): Promise<string> {
  const base = await nodeBase();
  const built = await buildContextImage(docker, {
    repository: 'ringfence-test/probe',
    context: {
      dockerfile: `FROM ${base}\nCOPY probe-server.mjs /app/probe-server.mjs\nUSER 65532:65532\nENTRYPOINT ["node","/app/probe-server.mjs"]\n`,
      files: [
        {
          path: 'probe-server.mjs',
          mode: 0o644,
          source: { hostPath: `${repoRoot}test/fixtures/probe-server.mjs` },
        },
      ],
    },
    labels: { [TEST_LABEL]: '1' },
  });
  return built.ref;
}

/** An internal network of our own for origin containers to start on (no route anywhere). */
export async function testNetwork(name: string): Promise<string> {
  await docker.createNetwork({ Name: name, Internal: true, Labels: { [TEST_LABEL]: '1' } });
  return name;
}

/** A tiny HTTP origin container of our own, answering `origin:<name>`, on an internal test network. */
export async function startOrigin(name: string, network: string): Promise<Docker.Container> {
  const container = await docker.createContainer({
    name,
    Image: await nodeBase(),
    Cmd: ['node', '-e', `require('http').createServer((q,s)=>s.end('origin:${name}')).listen(8080)`],
    Labels: { [TEST_LABEL]: '1' },
    User: '65532:65532',
    HostConfig: { NetworkMode: network, ReadonlyRootfs: true, CapDrop: ['ALL'] },
  });
  await container.start();
  return container;
}

export const uniqueName = (prefix: string) => `${prefix}-${randomBytes(4).toString('hex')}`;

/** Everything ringfence-managed (or test-labelled) that exists now. */
export async function managedObjects(session?: string) {
  const filters = { label: [session ? `ringfence.session=${session}` : 'ringfence.managed=1'] };
  const containers = await docker.listContainers({ all: true, filters });
  const networks = await docker.listNetworks({ filters });
  return {
    containers: containers.map((c) => c.Names[0]!.replace(/^\//, '')),
    networks: networks.map((n) => n.Name),
  };
}

export async function removeTestContainers(): Promise<void> {
  const filters = { label: [`${TEST_LABEL}=1`] };
  const containers = await docker.listContainers({ all: true, filters });
  await Promise.all(
    containers.map((c) =>
      docker
        .getContainer(c.Id)
        .remove({ force: true })
        .catch(() => {}),
    ),
  );
  const networks = await docker.listNetworks({ filters });
  await Promise.all(
    networks.map((n) =>
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

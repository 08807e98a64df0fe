import { PassThrough } from 'node:stream';
import { createDockerClient } from '@ringfence/gateway/runtime';
import { describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { testUlimits } from '../helpers/containers.js';

const docker = createDockerClient();

interface BuildOutput {
  images: { ref: string; id: string; built: boolean; contentDigest: string; sizeBytes: number }[];
}

/** Run a command in a throw-away container and collect its output. */
async function runInImage(image: string, cmd: string[], hostConfig: Record<string, unknown>) {
  const container = await docker.createContainer({
    Image: image,
    Cmd: cmd,
    HostConfig: { Ulimits: testUlimits(), ...hostConfig },
    User: '65532:65532',
  });
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  try {
    const stream = await container.attach({ stream: true, stdout: true, stderr: true });
    docker.modem.demuxStream(stream, stdout, stderr);
    await container.start();
    const { StatusCode } = await container.wait();
    await new Promise((resolve) => setTimeout(resolve, 50));
    return { code: StatusCode as number, stdout: out, stderr: err };
  } finally {
    await container.remove({ force: true });
  }
}

describe('ringfence images build (real engine, no registry)', () => {
  let base: BuildOutput['images'][number];

  it('builds the Node base image from the local runtime, and a second run is a no-op', async () => {
    const first = await ringfence(['images', 'build', '--json']);
    expect(first.code, first.stderr).toBe(0);
    const built = (JSON.parse(first.stdout) as BuildOutput).images[0]!;
    expect(built.ref).toMatch(/^ringfence\/node-base:\d+\.\d+\.\d+-[0-9a-f]{16}$/);
    expect(built.ref.endsWith(built.contentDigest.slice('sha256:'.length, 'sha256:'.length + 16))).toBe(true);

    const second = await ringfence(['images', 'build', '--json']);
    expect(second.code, second.stderr).toBe(0);
    const again = (JSON.parse(second.stdout) as BuildOutput).images[0]!;
    expect(again).toMatchObject({ ref: built.ref, id: built.id, built: false });
    base = again;

    const text = await ringfence(['images', 'build']);
    expect(text.stdout).toMatch(
      new RegExp(`^present\\s+${built.ref.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`, 'm'),
    );
  });

  it('runs node -e inside the image with no network, a read-only root and no capabilities', async () => {
    expect(base, 'the build test must pass first').toBeDefined();
    const script = [
      'const os = require("os");',
      'const fs = require("fs");',
      'let writable = true; try { fs.writeFileSync("/usr/local/bin/x", "x"); } catch { writable = false; }',
      'console.log(JSON.stringify({ version: process.version, user: os.userInfo().username,',
      '  interfaces: Object.keys(os.networkInterfaces()), rootWritable: writable,',
      '  shell: fs.existsSync("/bin/sh"), tmp: (fs.writeFileSync("/tmp/ok", "1"), fs.readFileSync("/tmp/ok", "utf8")) }));',
    ].join('\n');
    const result = await runInImage(base.ref, ['node', '-e', script], {
      NetworkMode: 'none',
      ReadonlyRootfs: true,
      CapDrop: ['ALL'],
      SecurityOpt: ['no-new-privileges'],
      Tmpfs: { '/tmp': 'rw,size=64m' },
      AutoRemove: false,
    });
    expect(result.code, result.stderr).toBe(0);
    const report = JSON.parse(result.stdout.trim()) as Record<string, unknown>;
    expect(report).toEqual({
      version: process.version,
      user: 'nonroot',
      interfaces: ['lo'],
      rootWritable: false,
      shell: false,
      tmp: '1',
    });
  });
});

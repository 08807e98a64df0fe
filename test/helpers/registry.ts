import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { freePort } from './mcp.js';
import { track } from './processes.js';

export const REGISTRY_BIN = process.env.RINGFENCE_TEST_REGISTRY ?? '/usr/bin/docker-registry';

export interface LocalRegistry {
  /** `127.0.0.1:PORT`: dockerd treats loopback registries as insecure-allowed, so plain HTTP works. */
  readonly address: string;
  stop(): Promise<void>;
}

/**
 * Debian's docker-registry on 127.0.0.1 only, storing in a temporary directory (removed at stop),
 * stopped by its pid. scripts/ensure-registry installs it.
 */
export async function startLocalRegistry(): Promise<LocalRegistry> {
  const dir = await mkdtemp(join(tmpdir(), 'rf-registry-'));
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  const config = join(dir, 'config.yml');
  await writeFile(
    config,
    `version: 0.1\nlog:\n  level: warn\nstorage:\n  filesystem:\n    rootdirectory: ${join(dir, 'data')}\nhttp:\n  addr: ${address}\n`,
  );
  const child = track(spawn(REGISTRY_BIN, ['serve', config], { stdio: ['ignore', 'ignore', 'pipe'] }));
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const failed = new Promise<never>((_, reject) => {
    child.once('error', (error) =>
      reject(new Error(`${REGISTRY_BIN} did not start (${error.message}); run scripts/ensure-registry`)),
    );
    child.once('exit', (code) => reject(new Error(`${REGISTRY_BIN} exited ${code}: ${stderr}`)));
  });
  failed.catch(() => {});
  const deadline = Date.now() + 15_000;
  for (;;) {
    const answered = await Promise.race([
      fetch(`http://${address}/v2/`).then(
        (response) => response.status === 200,
        () => false,
      ),
      failed,
    ]);
    if (answered) break;
    if (Date.now() > deadline) throw new Error(`the registry on ${address} did not answer: ${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    address,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) {
        const gone = new Promise((resolve) => child.once('exit', resolve));
        process.kill(child.pid!, 'SIGTERM');
        await gone;
      }
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Pushes `image` to the registry as `target`, then removes the local `target` tag. */
export async function pushThenUntag(docker: Docker, image: string, target: string): Promise<void> {
  const at = target.lastIndexOf(':');
  await docker.getImage(image).tag({ repo: target.slice(0, at), tag: target.slice(at + 1) });
  // The engine wants an X-Registry-Auth header on every push; a loopback registry needs no account.
  const stream = await docker.getImage(target).push({ authconfig: { serveraddress: target.split('/')[0] } });
  await new Promise<void>((resolve, reject) =>
    docker.modem.followProgress(stream, (error: Error | null, events: { error?: string }[]) => {
      const failure = error?.message ?? events.find((e) => e.error)?.error;
      return failure ? reject(new Error(`pushing ${target} failed: ${failure}`)) : resolve();
    }),
  );
  await docker.getImage(target).remove();
}

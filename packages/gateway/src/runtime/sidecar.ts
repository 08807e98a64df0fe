import { createInterface } from 'node:readline';
import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import { attachStdio, removeContainer } from './attach.js';
import { DEFAULT_LIMITS, hardenedHostConfig, PROXY_ALIAS, PROXY_PORT } from './container-spec.js';
import { ownerLabels, sidecarName } from './labels.js';
import { StderrTail } from './stderr-tail.js';

export interface RunningSidecar {
  readonly container: Docker.Container;
  stop(): Promise<void>;
  stderr(): string;
}

/** The proxy's command line for a server's egress rule (DESIGN.md section 7). */
export function sidecarCommand(config: ContainerServerConfig): string[] {
  const args = ['--listen', `0.0.0.0:${PROXY_PORT}`, '--lifeline'];
  for (const host of config.egress.hosts ?? []) args.push('--allow', host);
  for (const cidr of config.egress.addresses ?? []) args.push('--allow-address', cidr);
  return args;
}

/**
 * Start the egress sidecar: on the outer network, joined to the server's internal network under
 * the alias `egress`, as hardened as the server, with stdin held open by this process
 * (`--lifeline`: when the gateway dies, the proxy exits). Each stdout line goes to `onLine`.
 */
export async function startSidecar(
  docker: Docker,
  options: {
    config: ContainerServerConfig;
    session: string;
    image: string;
    inner: string;
    outer: string;
    onLine: (line: string) => void;
    readyTimeoutMs?: number;
  },
): Promise<RunningSidecar> {
  const { config, session } = options;
  const container = await docker.createContainer({
    name: sidecarName(config.name, session),
    Image: options.image,
    Cmd: sidecarCommand(config),
    Labels: ownerLabels(config.name, session, 'sidecar'),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: true,
    Tty: false,
    HostConfig: { ...hardenedHostConfig(DEFAULT_LIMITS), NetworkMode: options.outer },
  });
  const tail = new StderrTail([]);
  try {
    await docker
      .getNetwork(options.inner)
      .connect({ Container: container.id, EndpointConfig: { Aliases: [PROXY_ALIAS] } });
    const streams = await attachStdio(docker, container);
    createInterface({ input: streams.stdout }).on('line', options.onLine);
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the egress sidecar did not start listening: ${tail.text() || 'no output'}`)),
        options.readyTimeoutMs ?? 20_000,
      );
      streams.stderr.on('data', (chunk: Buffer) => {
        tail.push(chunk);
        if (tail.text().includes('"listening"')) {
          clearTimeout(timer);
          resolve();
        }
      });
      streams.stderr.once('end', () => {
        clearTimeout(timer);
        reject(new Error(`the egress sidecar exited: ${tail.text() || 'no output'}`));
      });
    });
    // If start() throws, `ready` rejects later with nobody awaiting it: that must not crash the
    // gateway (an unhandled rejection), so it is observed here and awaited only after start.
    ready.catch(() => {});
    await container.start();
    await ready;
    return {
      container,
      stderr: () => tail.text(),
      stop: async () => {
        streams.stdin.end();
        await removeContainer(container);
      },
    };
  } catch (error) {
    await removeContainer(container).catch(() => {});
    throw error;
  }
}

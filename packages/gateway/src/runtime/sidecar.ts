import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { buildSidecarArgv, isListeningLine } from '@ringfence/egress-proxy/contract';
import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import { GatewayError } from '../errors.js';
import { attachStdio } from './attach.js';
import { DEFAULT_LIMITS, hardenedHostConfig, PROXY_ALIAS, PROXY_PORT } from './container-spec.js';
import { removeContainer } from './engine-races.js';
import { ownerLabels, sidecarName } from './labels.js';
import type { ContainerProcessLimits } from './process-limits.js';
import { StderrTail } from './stderr-tail.js';

export interface RunningSidecar {
  readonly container: Docker.Container;
  /** Its address on the server's internal network: where the server finds the proxy. */
  readonly address: string;
  stop(): Promise<void>;
  stderr(): string;
}

/**
 * The proxy's command line for a server's egress rule (docs/architecture.md, "Container and
 * sidecar contract"; the flags in docs/egress-proxy.md). Built and checked by the proxy's own
 * contract, so a rule the proxy would refuse fails here with the proxy's message.
 */
export function sidecarCommand(config: ContainerServerConfig): string[] {
  return buildSidecarArgv({
    listen: { host: '0.0.0.0', port: PROXY_PORT },
    lifeline: true,
    allow: config.egress.hosts ?? [],
    allowAddresses: config.egress.addresses ?? [],
  });
}

/**
 * Resolves when the proxy's stderr carries its readiness line (the contract's `isListeningLine`,
 * read line by line, so a chunk boundary inside the line or the word in another line cannot
 * fool it); rejects, with what stderr said, when stderr ends first or after `timeoutMs`.
 * Everything read is kept in `tail` for later error messages.
 */
export function waitForListening(stderr: Readable, tail: StderrTail, timeoutMs: number): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new GatewayError(
            'SIDECAR_START',
            `the egress sidecar did not start listening: ${tail.text() || 'no output'}`,
          ),
        ),
      timeoutMs,
    );
    stderr.on('data', (chunk: Buffer) => tail.push(chunk));
    createInterface({ input: stderr }).on('line', (line) => {
      if (isListeningLine(line)) {
        clearTimeout(timer);
        resolve();
      }
    });
    stderr.once('end', () => {
      clearTimeout(timer);
      reject(new GatewayError('SIDECAR_START', `the egress sidecar exited: ${tail.text() || 'no output'}`));
    });
  });
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
    processLimits: ContainerProcessLimits;
    onLine: (line: string) => void;
    readyTimeoutMs?: number;
    /** More labels for its container (a sandbox's name: `LABEL.sandbox`). */
    extraLabels?: Readonly<Record<string, string>>;
  },
): Promise<RunningSidecar> {
  const { config, session } = options;
  const container = await docker.createContainer({
    name: sidecarName(config.name, session),
    Image: options.image,
    Cmd: sidecarCommand(config),
    Labels: { ...ownerLabels(config.name, session, 'sidecar'), ...options.extraLabels },
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: true,
    Tty: false,
    HostConfig: { ...hardenedHostConfig(DEFAULT_LIMITS, options.processLimits), NetworkMode: options.outer },
  });
  const tail = new StderrTail([]);
  try {
    await docker
      .getNetwork(options.inner)
      .connect({ Container: container.id, EndpointConfig: { Aliases: [PROXY_ALIAS] } });
    const streams = await attachStdio(docker, container);
    createInterface({ input: streams.stdout }).on('line', options.onLine);
    const ready = waitForListening(streams.stderr, tail, options.readyTimeoutMs ?? 20_000);
    // If start() throws, `ready` rejects later with nobody awaiting it: that must not crash the
    // gateway (an unhandled rejection), so it is observed here and awaited only after start.
    ready.catch(() => {});
    await container.start();
    await ready;
    const networks = (await container.inspect()).NetworkSettings.Networks ?? {};
    const address = networks[options.inner]?.IPAddress;
    if (!address)
      throw new GatewayError('SIDECAR_START', `the egress sidecar has no address on ${options.inner}`);
    return {
      container,
      address,
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

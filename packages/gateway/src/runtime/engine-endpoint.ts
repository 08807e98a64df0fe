/**
 * Where the container engine is (`DOCKER_HOST`, or the first default socket), found without
 * contacting it and without loading dockerode: the reaper process reads it before anything else
 * (reaper-main.ts), to tell its gateway it reaches the engine as soon as it can.
 */
import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { redactText, redactUrl } from '../text/redact.js';
/** Where the container engine was found, and how we found it. */
export interface EngineEndpoint {
  /**
   * `DOCKER_HOST` as given (through the redactor: it is only ever shown), or `unix://<socket>`
   * when a default socket was found.
   */
  readonly host: string;
  readonly source: 'DOCKER_HOST' | 'default-socket' | 'none';
  /** Options to hand to dockerode. */
  readonly options: Docker.DockerOptions;
}

export const ROOTFUL_PODMAN_SOCKET = '/run/podman/podman.sock';

/** What to run when no engine answers: Docker, or Podman's API service, rootful or rootless. */
export const ENGINE_FIX_HINT =
  'Run scripts/ensure-engine (Debian/Ubuntu, as root) or start Docker. For Podman, start its API ' +
  'service: rootless `systemctl --user start podman.socket` (or `podman system service --time=0 &`) ' +
  'and export DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock; rootful ' +
  `\`sudo systemctl start podman.socket\` and export DOCKER_HOST=unix://${ROOTFUL_PODMAN_SOCKET}.`;

/**
 * Sockets tried, in order, when DOCKER_HOST is not set: Docker (system, then rootless), rootful
 * Podman, rootless Podman.
 */
export function defaultSocketCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const candidates = ['/var/run/docker.sock', join(homedir(), '.docker/run/docker.sock')];
  if (env.XDG_RUNTIME_DIR) candidates.push(join(env.XDG_RUNTIME_DIR, 'docker.sock'));
  candidates.push(ROOTFUL_PODMAN_SOCKET);
  if (env.XDG_RUNTIME_DIR) candidates.push(join(env.XDG_RUNTIME_DIR, 'podman/podman.sock'));
  return candidates;
}

/** A socket this process may connect to: a root-only socket is passed over, not chosen and failed on. */
function isSocket(path: string): boolean {
  try {
    if (!existsSync(path) || !statSync(path).isSocket()) return false;
    accessSync(path, constants.R_OK | constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Resolve the engine endpoint without contacting it. `DOCKER_HOST` wins (unix:// or tcp://);
 * otherwise the first default socket that exists.
 */
export function resolveEngineEndpoint(
  env: NodeJS.ProcessEnv = process.env,
  socketExists: (path: string) => boolean = isSocket,
): EngineEndpoint {
  const dockerHost = env.DOCKER_HOST?.trim();
  if (dockerHost) {
    if (dockerHost.startsWith('unix://')) {
      const socketPath = dockerHost.slice('unix://'.length);
      if (!socketPath) throw new GatewayError('ENGINE_CONFIG', 'DOCKER_HOST=unix:// names no socket path.');
      return { host: redactUrl(dockerHost), source: 'DOCKER_HOST', options: { socketPath } };
    }
    let url: URL;
    try {
      url = new URL(dockerHost.includes('//') ? dockerHost : `tcp://${dockerHost}`);
    } catch {
      throw new GatewayError(
        'ENGINE_CONFIG',
        `DOCKER_HOST=${redactText(dockerHost)} is not a valid address. Use unix:///path/to/socket or tcp://host:port.`,
      );
    }
    if (url.protocol !== 'tcp:' && url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new GatewayError(
        'ENGINE_CONFIG',
        `DOCKER_HOST scheme ${url.protocol} is not supported. Use unix:// or tcp://.`,
      );
    }
    const tls = url.protocol === 'https:' || env.DOCKER_TLS_VERIFY === '1' || url.port === '2376';
    return {
      // Shown by doctor and in engine errors: a tcp:// address may carry user:password@.
      host: dockerHost.includes('//')
        ? redactUrl(dockerHost)
        : redactUrl(`tcp://${dockerHost}`).slice('tcp://'.length),
      source: 'DOCKER_HOST',
      options: {
        host: url.hostname,
        port: Number(url.port || (tls ? 2376 : 2375)),
        protocol: tls ? 'https' : 'http',
      },
    };
  }
  for (const candidate of defaultSocketCandidates(env)) {
    if (socketExists(candidate)) {
      return { host: `unix://${candidate}`, source: 'default-socket', options: { socketPath: candidate } };
    }
  }
  return {
    host: 'unix:///var/run/docker.sock',
    source: 'none',
    options: { socketPath: '/var/run/docker.sock' },
  };
}

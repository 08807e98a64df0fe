import { existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { withTimeout } from '../util/timeout.js';

/** Where the container engine was found, and how we found it. */
export interface EngineEndpoint {
  /** `DOCKER_HOST` as given, or `unix://<socket>` when a default socket was found. */
  readonly host: string;
  readonly source: 'DOCKER_HOST' | 'default-socket' | 'none';
  /** Options to hand to dockerode. */
  readonly options: Docker.DockerOptions;
}

export interface EngineInfo {
  readonly kind: 'docker' | 'podman';
  readonly version: string;
  readonly apiVersion: string;
}

const FIX_HINT =
  'Run scripts/ensure-engine (Debian/Ubuntu, as root) or install Docker; for Podman run ' +
  '`systemctl --user start podman.socket` and export DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock.';

/** Sockets tried, in order, when DOCKER_HOST is not set: Docker, rootless Docker, Podman. */
export function defaultSocketCandidates(env: NodeJS.ProcessEnv = process.env): string[] {
  const candidates = ['/var/run/docker.sock', join(homedir(), '.docker/run/docker.sock')];
  if (env.XDG_RUNTIME_DIR) {
    candidates.push(
      join(env.XDG_RUNTIME_DIR, 'docker.sock'),
      join(env.XDG_RUNTIME_DIR, 'podman/podman.sock'),
    );
  }
  candidates.push('/run/podman/podman.sock');
  return candidates;
}

function isSocket(path: string): boolean {
  try {
    return existsSync(path) && statSync(path).isSocket();
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
      return { host: dockerHost, source: 'DOCKER_HOST', options: { socketPath } };
    }
    let url: URL;
    try {
      url = new URL(dockerHost.includes('//') ? dockerHost : `tcp://${dockerHost}`);
    } catch {
      throw new GatewayError(
        'ENGINE_CONFIG',
        `DOCKER_HOST=${dockerHost} is not a valid address. Use unix:///path/to/socket or tcp://host:port.`,
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
      host: dockerHost,
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

/** A dockerode client for the resolved endpoint. */
export function createDockerClient(endpoint: EngineEndpoint = resolveEngineEndpoint()): Docker {
  return new Docker({ ...endpoint.options, timeout: 0 });
}

/**
 * Ask the engine who it is. Throws `ENGINE_UNREACHABLE` with the fix when nothing answers.
 */
export async function probeEngine(
  docker: Docker,
  endpoint: EngineEndpoint,
  timeoutMs = 5000,
): Promise<EngineInfo> {
  try {
    const version = await withTimeout(
      docker.version(),
      timeoutMs,
      () => new Error(`the engine at ${endpoint.host} did not answer within ${timeoutMs} ms`),
    );
    const components = (version as { Components?: { Name?: string }[] }).Components ?? [];
    const podman = components.some((c) => /podman/i.test(c.Name ?? ''));
    return {
      kind: podman ? 'podman' : 'docker',
      version: version.Version,
      apiVersion: version.ApiVersion,
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new GatewayError(
      'ENGINE_UNREACHABLE',
      `No container engine answers at ${endpoint.host} (${detail}). ${FIX_HINT}`,
      { cause: error },
    );
  }
}

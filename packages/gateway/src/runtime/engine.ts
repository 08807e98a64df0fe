import { accessSync, constants, existsSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { redactText, redactUrl } from '../text/redact.js';
import { withTimeout } from '../util/timeout.js';

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

export interface EngineInfo {
  readonly kind: 'docker' | 'podman';
  readonly version: string;
  readonly apiVersion: string;
  /** Whether the engine runs as root or inside a user namespace; absent when it would not say. */
  readonly mode?: 'rootful' | 'rootless';
  /** '1' or '2'; absent when the engine would not say. */
  readonly cgroupVersion?: string;
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
  // Not a measure of health: Podman's API service, busy with other clients' containers on a loaded
  // machine, was seen taking over 5 s to answer. Only an engine that does not answer is down.
  timeoutMs = 15_000,
): Promise<EngineInfo> {
  try {
    const version = await withTimeout(
      docker.version(),
      timeoutMs,
      () =>
        new GatewayError(
          'ENGINE_UNREACHABLE',
          `the engine at ${endpoint.host} did not answer within ${timeoutMs} ms`,
        ),
    );
    const components = (version as { Components?: { Name?: string }[] }).Components ?? [];
    const podman = components.some((c) => /podman/i.test(c.Name ?? ''));
    const host = await withTimeout(
      podman ? podmanHost(docker) : dockerHost(docker),
      timeoutMs,
      () =>
        new GatewayError(
          'ENGINE_UNREACHABLE',
          `the engine at ${endpoint.host} did not describe itself within ${timeoutMs} ms`,
        ),
    ).catch(() => ({}));
    return {
      kind: podman ? 'podman' : 'docker',
      version: version.Version,
      apiVersion: version.ApiVersion,
      ...host,
    };
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    throw new GatewayError(
      'ENGINE_UNREACHABLE',
      `No container engine answers at ${endpoint.host} (${detail}). ${ENGINE_FIX_HINT}`,
      { cause: error },
    );
  }
}

type HostFacts = Pick<EngineInfo, 'mode' | 'cgroupVersion'>;

/** Docker says rootless in its security options. */
async function dockerHost(docker: Docker): Promise<HostFacts> {
  const info = (await docker.info()) as { SecurityOptions?: string[]; CgroupVersion?: string };
  return {
    mode: (info.SecurityOptions ?? []).some((o) => o.includes('name=rootless')) ? 'rootless' : 'rootful',
    ...(info.CgroupVersion ? { cgroupVersion: info.CgroupVersion } : {}),
  };
}

/** Podman's compatible /info does not say rootless; its own API does. */
async function podmanHost(docker: Docker): Promise<HostFacts> {
  const info = await new Promise<{ host?: { security?: { rootless?: boolean }; cgroupVersion?: string } }>(
    (resolve, reject) =>
      docker.modem.dial(
        { path: '/v4.0.0/libpod/info', method: 'GET', statusCodes: { 200: true } },
        (error, data) => (error ? reject(error) : resolve(data as never)),
      ),
  );
  const cgroup = info.host?.cgroupVersion?.replace(/^v/, '');
  return {
    ...(typeof info.host?.security?.rootless === 'boolean'
      ? { mode: info.host.security.rootless ? ('rootless' as const) : ('rootful' as const) }
      : {}),
    ...(cgroup ? { cgroupVersion: cgroup } : {}),
  };
}

/** How people read an engine: `podman 4.3.1, rootless`. */
export function describeEngine(info: EngineInfo): string {
  return `${info.kind} ${info.version}${info.mode ? `, ${info.mode}` : ''}`;
}

/**
 * Why this engine cannot keep the container contract (docs/runtimes.md) for a server with this
 * egress mode, or undefined when it can. Checked before anything is created, so a server is
 * refused with the reason rather than run with less isolation than its registration promises.
 */
export function engineRefusal(info: EngineInfo, egress: 'deny' | 'allow' | 'any'): string | undefined {
  if (info.mode === 'rootless' && info.cgroupVersion === '1') {
    return (
      `${describeEngine(info)} runs on cgroups v1, where a rootless engine cannot set memory, process or CPU ` +
      'limits (podman ignores them with a warning), so a server would run unbounded. Use a rootful engine ' +
      `(DOCKER_HOST=unix://${ROOTFUL_PODMAN_SOCKET}, or Docker), or boot the host with cgroups v2 ` +
      '(systemd.unified_cgroup_hierarchy=1).'
    );
  }
  if (egress === 'allow' && info.kind === 'podman' && info.mode !== 'rootless') {
    return (
      `${describeEngine(info)} gives the host an address on every network, internal ones too (it has no ` +
      "equivalent of Docker's inhibit_ipv4), so a server with an egress allowlist could reach services " +
      'listening on the host past its sidecar. Run such servers on rootless podman (its networks live in ' +
      'their own namespace: DOCKER_HOST=unix://$XDG_RUNTIME_DIR/podman/podman.sock) or on Docker, or ' +
      're-register the server with --egress deny.'
    );
  }
  return undefined;
}

import Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { withTimeout } from '../util/timeout.js';
import {
  ENGINE_FIX_HINT,
  type EngineEndpoint,
  ROOTFUL_PODMAN_SOCKET,
  resolveEngineEndpoint,
} from './engine-endpoint.js';

export {
  defaultSocketCandidates,
  ENGINE_FIX_HINT,
  type EngineEndpoint,
  ROOTFUL_PODMAN_SOCKET,
  resolveEngineEndpoint,
} from './engine-endpoint.js';

export interface EngineInfo {
  readonly kind: 'docker' | 'podman';
  readonly version: string;
  readonly apiVersion: string;
  /** Whether the engine runs as root or inside a user namespace; absent when it would not say. */
  readonly mode?: 'rootful' | 'rootless';
  /** '1' or '2'; absent when the engine would not say. */
  readonly cgroupVersion?: string;
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
  // Docker's /info is asked beside /version rather than after it (one round trip, not two, before
  // a container can be created); its answer is used only once /version said the engine is Docker.
  // Podman's compatible /info does not say rootless, so Podman is asked its own API afterwards.
  const dockerInfo = dockerHost(docker);
  dockerInfo.catch(() => {});
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
      podman ? podmanHost(docker) : dockerInfo,
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

import type Docker from 'dockerode';
import type { ContainerServerConfig, Limits } from '../config/servers.js';
import { containerName, ownerLabels } from './labels.js';

function currentUser(): { uid: number; gid: number } | undefined {
  return process.getuid && process.getgid ? { uid: process.getuid(), gid: process.getgid() } : undefined;
}

export const DEFAULT_LIMITS: Limits = { memory_mb: 512, pids: 256, cpus: 1 };
export const PROXY_ALIAS = 'egress';
export const PROXY_PORT = 3128;

export interface ResolvedMount {
  /** Real host path (links resolved), inside the workspace. */
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
}

/** Environment of a contained server: only what was declared, plus the proxy variables. */
export function serverEnvironment(config: ContainerServerConfig): string[] {
  const env = Object.entries(config.env ?? {}).map(([key, value]) => `${key}=${value}`);
  env.push('HOME=/tmp');
  if (config.egress.mode === 'allow') {
    const proxy = `http://${PROXY_ALIAS}:${PROXY_PORT}`;
    for (const key of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) env.push(`${key}=${proxy}`);
    env.push('NO_PROXY=localhost,127.0.0.1,::1', 'no_proxy=localhost,127.0.0.1,::1');
  }
  return env;
}

/** The isolation every contained process gets (the server, and the egress sidecar). */
export function hardenedHostConfig(limits: Limits = DEFAULT_LIMITS): Docker.HostConfig {
  return {
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    Memory: limits.memory_mb * 1024 * 1024,
    MemorySwap: limits.memory_mb * 1024 * 1024,
    PidsLimit: limits.pids,
    NanoCpus: Math.round(limits.cpus * 1e9),
    Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m' },
    LogConfig: { Type: 'none', Config: {} },
    Privileged: false,
    // No host namespaces, devices or ports.
    PublishAllPorts: false,
  };
}

/**
 * The create options of a server container: the recorded image ID (never the tag, so a moved tag
 * cannot swap what runs), stdin attached for MCP over stdio, no published port, the hardened
 * host config, the declared env only, workspace mounts only, and owner labels for the sweep.
 */
export function serverContainerSpec(
  config: ContainerServerConfig,
  session: string,
  network: string,
  mounts: readonly ResolvedMount[],
  user: { uid: number; gid: number } | undefined = currentUser(),
  imageVolumes: readonly string[] = [],
): Docker.ContainerCreateOptions {
  // Files a server writes into a writable mount belong to the person running the gateway, and it
  // can write where they can. Never as root, though: then the image's own user runs it.
  const runAs =
    mounts.some((m) => !m.readOnly) && user && user.uid !== 0 ? { User: `${user.uid}:${user.gid}` } : {};
  const hardened = hardenedHostConfig(config.limits ?? DEFAULT_LIMITS);
  // A VOLUME the image declares would otherwise be a writable, unbounded anonymous volume on the
  // host despite the read-only root: each gets a small tmpfs instead.
  const tmpfs = { ...hardened.Tmpfs };
  for (const path of imageVolumes) if (!(path in tmpfs)) tmpfs[path] = 'rw,nosuid,nodev,size=64m';
  return {
    ...runAs,
    name: containerName(config.name, session),
    Image: config.image_id,
    ...(config.command && config.command.length > 0 ? { Cmd: [...config.command] } : {}),
    Env: serverEnvironment(config),
    Labels: ownerLabels(config.name, session, 'server'),
    AttachStdin: true,
    AttachStdout: true,
    AttachStderr: true,
    OpenStdin: true,
    StdinOnce: true,
    Tty: false,
    NetworkDisabled: config.egress.mode === 'deny',
    HostConfig: {
      ...hardened,
      Tmpfs: tmpfs,
      NetworkMode: network,
      Mounts: mounts.map((m) => ({
        Type: 'bind' as const,
        Source: m.source,
        Target: m.target,
        ReadOnly: m.readOnly,
        BindOptions: { Propagation: 'rprivate' as const },
      })),
    },
  };
}

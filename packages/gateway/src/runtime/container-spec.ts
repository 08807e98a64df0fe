import type Docker from 'dockerode';
import type { ContainerServerConfig, Limits } from '../config/servers.js';
import { GatewayError } from '../errors.js';
import { containerName, ownerLabels } from './labels.js';
import { type ContainerProcessLimits, ulimits } from './process-limits.js';

function currentUser(): { uid: number; gid: number } | undefined {
  return process.getuid && process.getgid ? { uid: process.getuid(), gid: process.getgid() } : undefined;
}

export const DEFAULT_LIMITS: Limits = { memory_mb: 512, pids: 256, cpus: 1 };
export const PROXY_ALIAS = 'egress';
export const PROXY_PORT = 3128;

/**
 * The resolver address an `allow` server gets. Named explicitly, a loopback nameserver is the
 * container's own loopback, and the engine's embedded DNS forwards to it from inside the
 * server's namespace, never from the host's (moby: only nameservers inherited from the host's
 * resolv.conf are "host loopback"). So the server has no resolver but itself, and engines with
 * CVE-2024-29018 (which forward from `--internal` networks to a host resolver on loopback) have
 * nothing to forward to. The proxy resolves names; the server reaches it by address.
 */
export const SERVER_DNS = '127.0.0.1';

export interface ResolvedMount {
  /** As registered (relative to a workspace root), for messages. */
  readonly requested: string;
  /** Real host path (links resolved), inside the workspace. */
  readonly source: string;
  readonly target: string;
  readonly readOnly: boolean;
  /** Device and inode of `source` when it was resolved: what the container must get. */
  readonly identity: { readonly dev: bigint; readonly ino: bigint };
}

/**
 * Environment of a contained server: only what was declared, plus (with `allow`) the proxy
 * variables, naming the sidecar by its address on the internal network so no lookup is needed.
 */
export function serverEnvironment(config: ContainerServerConfig, proxyAddress?: string): string[] {
  const env = Object.entries(config.env ?? {}).map(([key, value]) => `${key}=${value}`);
  env.push('HOME=/tmp');
  if (config.egress.mode === 'allow') {
    if (!proxyAddress)
      throw new GatewayError(
        'INVARIANT',
        `${config.name}: an allow server needs its sidecar's address; this is a ringfence bug, please report it`,
      );
    const proxy = `http://${proxyAddress}:${PROXY_PORT}`;
    for (const key of ['HTTP_PROXY', 'HTTPS_PROXY', 'http_proxy', 'https_proxy']) env.push(`${key}=${proxy}`);
    env.push('NO_PROXY=localhost,127.0.0.1,::1', 'no_proxy=localhost,127.0.0.1,::1');
  }
  return env;
}

/**
 * The isolation every contained process gets (the server, and the egress sidecar). The process
 * limits are named, never left to the engine, whose defaults can exceed what the host grants
 * (`process-limits.ts`).
 */
export function hardenedHostConfig(limits: Limits, processLimits: ContainerProcessLimits): Docker.HostConfig {
  return {
    ReadonlyRootfs: true,
    CapDrop: ['ALL'],
    SecurityOpt: ['no-new-privileges'],
    Memory: limits.memory_mb * 1024 * 1024,
    MemorySwap: limits.memory_mb * 1024 * 1024,
    PidsLimit: limits.pids,
    NanoCpus: Math.round(limits.cpus * 1e9),
    Ulimits: ulimits(processLimits),
    Tmpfs: { '/tmp': 'rw,nosuid,nodev,size=64m' },
    LogConfig: { Type: 'none', Config: {} },
    Privileged: false,
    // No host namespaces, devices or ports.
    PublishAllPorts: false,
  };
}

export interface ServerSpecOptions {
  readonly session: string;
  /** NetworkMode: `none`, or the server's own network. */
  readonly network: string;
  /** nofile and nproc, within the host's hard limits (`containerProcessLimits`). */
  readonly processLimits: ContainerProcessLimits;
  readonly mounts: readonly ResolvedMount[];
  /** Who runs the gateway (default: this process's uid:gid); undefined when unknown. */
  readonly user?: { uid: number; gid: number } | undefined;
  readonly imageVolumes?: readonly string[];
  /** `allow` only: the sidecar's address on the internal network. */
  readonly proxyAddress?: string;
  /** The engine runs rootless with Podman's user namespace (uids inside are subordinate ids outside). */
  readonly rootlessPodman?: boolean;
}

/**
 * The create options of a server container: the recorded image ID (never the tag, so a moved tag
 * cannot swap what runs), stdin attached for MCP over stdio, no published port, the hardened
 * host config, the declared env only, workspace mounts only, and owner labels for the sweep.
 * An `allow` server gets no resolver (`SERVER_DNS`) and the proxy by address.
 */
export function serverContainerSpec(
  config: ContainerServerConfig,
  options: ServerSpecOptions,
): Docker.ContainerCreateOptions {
  const { session, network, mounts, imageVolumes = [], proxyAddress } = options;
  const user = 'user' in options ? options.user : currentUser();
  // Files a server writes into a writable mount belong to the person running the gateway, and it
  // can write where they can. Never as root, though: then the image's own user runs it.
  const runAs =
    mounts.some((m) => !m.readOnly) && user && user.uid !== 0 ? { User: `${user.uid}:${user.gid}` } : {};
  // Rootless Podman maps uid N inside to a subordinate id outside, so that uid would write files
  // the caller does not own; keep-id maps the caller's own uid through unchanged.
  const userns = 'User' in runAs && options.rootlessPodman ? { UsernsMode: 'keep-id' } : {};
  const hardened = hardenedHostConfig(config.limits ?? DEFAULT_LIMITS, options.processLimits);
  // A VOLUME the image declares would otherwise be a writable, unbounded anonymous volume on the
  // host despite the read-only root: each gets a small tmpfs instead.
  const tmpfs = { ...hardened.Tmpfs };
  for (const path of imageVolumes) if (!(path in tmpfs)) tmpfs[path] = 'rw,nosuid,nodev,size=64m';
  return {
    ...runAs,
    name: containerName(config.name, session),
    Image: config.image_id,
    ...(config.command && config.command.length > 0 ? { Cmd: [...config.command] } : {}),
    Env: serverEnvironment(config, proxyAddress),
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
      ...userns,
      Tmpfs: tmpfs,
      NetworkMode: network,
      ...(config.egress.mode === 'allow'
        ? { Dns: [SERVER_DNS], ExtraHosts: [`${PROXY_ALIAS}:${proxyAddress}`] }
        : {}),
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

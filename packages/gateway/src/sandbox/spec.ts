import type Docker from 'dockerode';
import type { ContainerServerConfig, EgressRule } from '../config/servers.js';
import { DEFAULT_LIMITS, type ResolvedMount, serverContainerSpec } from '../runtime/container-spec.js';
import { LABEL, ownerLabels } from '../runtime/labels.js';
import type { ContainerProcessLimits } from '../runtime/process-limits.js';
import type { CreateRequest } from './args.js';
import { OWN_SERVER } from './tools.js';

/** The uid:gid a sandbox runs as when it is not the gateway's own user: never root. */
export const SANDBOX_USER = '65532:65532';

/** How the engine keeps a sandbox's main process's output: at most 2 MiB, the oldest dropped. */
export const SANDBOX_LOG_CONFIG = { Type: 'json-file', Config: { 'max-size': '1m', 'max-file': '2' } };

export const sandboxContainerName = (name: string, session: string) => `ringfence-sandbox-${session}-${name}`;

/** What its networks and sidecar are named after (`runtime/labels.ts` names them `ringfence-mcp-…`). */
export const sandboxUnit = (name: string) => `sandbox-${name}`;

/**
 * Labels a sandbox's container must never take from its image. The engine copies an image's
 * labels into every container made from it, and a fork's image, a snapshot or a person's image may
 * carry `ringfence.persistent=1` (committed from a persistent sandbox, or set on purpose): a
 * container that kept it would be skipped by the close, the reaper and the sweep while no later
 * gateway may use it (it is not `ringfence.managed=persistent`), so it would outlive its gateway
 * by accident. Blanked here; a persistent sandbox's own labels (persistence.ts) set them again.
 */
export const NOT_PERSISTENT: Readonly<Record<string, string>> = {
  [LABEL.persistent]: '',
  [LABEL.home]: '',
};

/** The labels of everything a sandbox is made of: this gateway as owner, and the sandbox's name. */
export function sandboxLabels(name: string, session: string): Record<string, string> {
  return { ...NOT_PERSISTENT, ...ownerLabels(OWN_SERVER, session, 'sandbox'), [LABEL.sandbox]: name };
}

/** The extra label its sidecar and networks carry besides their usual owner labels. */
export const sandboxMark = (name: string): Record<string, string> => ({ [LABEL.sandbox]: name });

/**
 * The egress rule a create asks for. `addresses` are the private ranges the person lets named hosts
 * resolve into (`mcp serve --sandbox-allow-address`): they widen named hosts only, never the
 * assistant's choice, and a sandbox without hosts gets no network whatever they say.
 */
export function egressRuleOf(
  request: Pick<CreateRequest, 'hosts' | 'egressAny'>,
  addresses: readonly string[] = [],
): EgressRule {
  if (request.egressAny) return { mode: 'any' };
  if (request.hosts.length > 0)
    return {
      mode: 'allow',
      hosts: [...request.hosts],
      ...(addresses.length > 0 ? { addresses: [...addresses] } : {}),
    };
  return { mode: 'deny' };
}

/**
 * A sandbox as a contained server's registration would describe it: its networks and sidecar are
 * then made by the very code that makes a server's (`runtime/networks.ts`, `runtime/sidecar.ts`).
 */
export function unitConfig(
  request: CreateRequest,
  imageId: string,
  addresses: readonly string[] = [],
): ContainerServerConfig {
  return {
    name: sandboxUnit(request.name),
    transport: 'container',
    image: request.image,
    image_id: imageId,
    command: [...request.command],
    egress: egressRuleOf(request, addresses),
    limits: DEFAULT_LIMITS,
  };
}

export interface SandboxSpecOptions {
  readonly session: string;
  readonly network: string;
  readonly processLimits: ContainerProcessLimits;
  readonly mounts: readonly ResolvedMount[];
  readonly proxyAddress?: string;
  readonly rootlessPodman?: boolean;
  /** Who runs the gateway; undefined when unknown. */
  readonly user?: { uid: number; gid: number } | undefined;
}

/**
 * A contained server's create options (`serverContainerSpec`: capabilities dropped, no new
 * privileges, memory/pids/CPU limits, named ulimits, declared env only, no published port, no
 * engine socket), with what makes it a workspace rather than a server: a writable root file
 * system (it is where the assistant works), no stdin, its own name and labels, and always a
 * non-root user, even where the image's own user is root.
 */
export function sandboxContainerSpec(
  request: CreateRequest,
  imageId: string,
  options: SandboxSpecOptions,
): Docker.ContainerCreateOptions {
  const base = serverContainerSpec(unitConfig(request, imageId), {
    session: options.session,
    network: options.network,
    processLimits: options.processLimits,
    mounts: options.mounts,
    ...('user' in options ? { user: options.user } : {}),
    ...(options.proxyAddress ? { proxyAddress: options.proxyAddress } : {}),
    ...(options.rootlessPodman ? { rootlessPodman: true } : {}),
  });
  return {
    ...base,
    name: sandboxContainerName(request.name, options.session),
    User: base.User ?? SANDBOX_USER,
    Labels: sandboxLabels(request.name, options.session),
    AttachStdin: false,
    AttachStdout: false,
    AttachStderr: false,
    OpenStdin: false,
    StdinOnce: false,
    // A server's output is its protocol and is never logged; a sandbox's main process's output is
    // what `sandbox_logs` reads: kept by the engine, bounded on disk (two files of 1 MiB).
    HostConfig: { ...base.HostConfig, ReadonlyRootfs: false, LogConfig: SANDBOX_LOG_CONFIG },
  };
}

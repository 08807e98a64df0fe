import { readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import type { EngineEndpoint } from './engine.js';

/** A hard limit as `/proc/<pid>/limits` states it. */
export type HardLimit = number | 'unlimited';

/** The hard limits this host grants, as far as they could be read. */
export interface HostHardLimits {
  readonly nofile?: HardLimit;
  readonly nproc?: HardLimit;
}

export interface ProcessLimit {
  readonly soft: number;
  readonly hard: number;
}

/** What every container ringfence creates is given, named explicitly (`HostConfig.Ulimits`). */
export interface ContainerProcessLimits {
  readonly nofile: ProcessLimit;
  readonly nproc: ProcessLimit;
}

/**
 * The limits ringfence asks for when the host grants at least that much.
 *
 * - nofile 1024:4096 is the kernel's own default for a process (INR_OPEN_CUR, INR_OPEN_MAX),
 *   which every Linux host grants unless an administrator lowered it, so it fits an engine whose
 *   limits ringfence cannot read (a remote one) too. Node raises its soft limit to the hard one
 *   at start, so a Node server gets 4096 open files.
 * - nproc 4096 is no bound on the container: RLIMIT_NPROC counts every process of the same uid
 *   on the host (rootful engines, and rootless with keep-id), not of the container, so a server
 *   run as the caller's uid shares the count with the caller's own processes. The bound on a
 *   container is its pids cgroup (`PidsLimit`, 256). 4096 is low enough for any host with 1 GiB
 *   of memory to grant (the kernel's default is half its thread maximum) and high enough that a
 *   desktop user's own processes rarely reach it.
 *
 * Named because engines otherwise choose: Docker passes on its own limits, while rootful Podman
 * asks for 1048576 of each, which fails every start with "setrlimit … operation not permitted"
 * where the host's hard limits are lower and the engine may not raise them (no CAP_SYS_RESOURCE).
 */
export const PROCESS_LIMIT_DEFAULTS: ContainerProcessLimits = {
  nofile: { soft: 1024, hard: 4096 },
  nproc: { soft: 4096, hard: 4096 },
};

/** What rootful Podman asks for when neither the container nor its containers.conf names a limit. */
export const PODMAN_ROOTFUL_DEFAULT_LIMIT = 1_048_576;

const ROWS: Readonly<Record<string, keyof HostHardLimits>> = {
  'Max open files': 'nofile',
  'Max processes': 'nproc',
};

/**
 * The hard nofile and nproc limits from the text of `/proc/<pid>/limits`
 * (`Max open files            1024                 4096                 files`).
 * A row that is missing or unreadable is left out, not guessed.
 */
export function parseHardLimits(text: string): HostHardLimits {
  const limits: { -readonly [K in keyof HostHardLimits]: HardLimit } = {};
  for (const line of text.split('\n')) {
    const [name, soft, hard] = line.split(/ {2,}/);
    const key = name ? ROWS[name.trim()] : undefined;
    if (!key || soft === undefined || hard === undefined) continue;
    const value = hard.trim();
    if (value === 'unlimited') limits[key] = 'unlimited';
    else if (/^\d+$/.test(value)) limits[key] = Number(value);
  }
  return limits;
}

/** This process's hard limits; undefined where there is no `/proc` (not Linux). */
export function readHostHardLimits(path = '/proc/self/limits'): HostHardLimits | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
  return parseHardLimits(text);
}

/**
 * The gateway's own hard limits speak for an engine on this machine (a Unix socket): its
 * containers are started by processes that were given the same host's limits. A remote engine's
 * are unknown, and the defaults, which any host grants, are used as they are.
 */
export function hostHardLimitsFor(
  endpoint: Pick<EngineEndpoint, 'options'>,
  read: () => HostHardLimits | undefined = readHostHardLimits,
): HostHardLimits | undefined {
  return endpoint.options.socketPath ? read() : undefined;
}

function within(chosen: ProcessLimit, hostHard: HardLimit | undefined): ProcessLimit {
  if (hostHard === undefined || hostHard === 'unlimited') return chosen;
  const hard = Math.min(chosen.hard, hostHard);
  return { soft: Math.min(chosen.soft, hard), hard };
}

/** The defaults, each lowered to what the host grants where it grants less. */
export function containerProcessLimits(
  host: HostHardLimits | undefined,
  defaults: ContainerProcessLimits = PROCESS_LIMIT_DEFAULTS,
): ContainerProcessLimits {
  return { nofile: within(defaults.nofile, host?.nofile), nproc: within(defaults.nproc, host?.nproc) };
}

/** As the Engine API takes them (`HostConfig.Ulimits`). */
export function ulimits(limits: ContainerProcessLimits): Docker.HostConfig['Ulimits'] {
  return [
    { Name: 'nofile', Soft: limits.nofile.soft, Hard: limits.nofile.hard },
    { Name: 'nproc', Soft: limits.nproc.soft, Hard: limits.nproc.hard },
  ];
}

/** `nofile 1024:4096, nproc 4096:4096`, for messages. */
export function describeProcessLimits(limits: ContainerProcessLimits): string {
  return `nofile ${limits.nofile.soft}:${limits.nofile.hard}, nproc ${limits.nproc.soft}:${limits.nproc.hard}`;
}

/**
 * The OCI runtime's words when it may not apply a limit: crun says
 * "setrlimit `RLIMIT_NOFILE`: Operation not permitted", runc "error setting rlimit type 7".
 */
const LIMIT_REFUSED = /setrlimit|setting rlimit/i;

/**
 * What to tell people when the engine could not apply the limits ringfence named, or undefined
 * for any other failure. It happens only where the engine's own hard limits are below this
 * process's (a remote engine, or one started with lower limits than the gateway).
 */
export function limitsRefusal(error: unknown, limits: ContainerProcessLimits): string | undefined {
  const said = error instanceof Error ? error.message : String(error);
  if (!LIMIT_REFUSED.test(said)) return undefined;
  return (
    `the engine may not give its container the process limits ringfence names (${describeProcessLimits(limits)}): ` +
    'its own hard limits are lower. Start the engine with hard limits at least that high (LimitNOFILE= and ' +
    'LimitNPROC= in its systemd unit, or ulimit -Hn and -Hu where it is started), then run: ringfence doctor. ' +
    `The engine said: ${said.trim()}`
  );
}

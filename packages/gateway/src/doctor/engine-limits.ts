import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type Docker from 'dockerode';
import { repoTags } from '../images/build.js';
import { NODE_BASE_REPOSITORY } from '../images/node-base.js';
import { describeEngine, type EngineEndpoint, type EngineInfo } from '../runtime/engine.js';
import { removeContainer } from '../runtime/engine-races.js';
import { ownerLabels } from '../runtime/labels.js';
import {
  containerProcessLimits,
  describeProcessLimits,
  type HostHardLimits,
  hostHardLimitsFor,
  readHostHardLimits,
} from '../runtime/process-limits.js';

/** What the doctor knows of this host's process limits. */
export interface HostLimitFacts {
  /** This process's hard limits; undefined without `/proc`. */
  readonly hard: HostHardLimits | undefined;
  /**
   * Whether CAP_SYS_RESOURCE (the right to raise a hard limit) is in this process's bounding set;
   * undefined when unknown. A sandbox or CI runner that withholds it withholds it from an engine
   * started inside it too.
   */
  readonly mayRaise: boolean | undefined;
}

/**
 * The hard limits an engine gives a container that names none, as it records them (`{}`: it names
 * none either, and the container inherits the engine's own, which always fit), or why they could
 * not be learnt.
 */
export type EngineDefaultLimits = HostHardLimits | { readonly unknown: string };

const CAP_SYS_RESOURCE = 24n;

/** Whether `/proc/<pid>/status` (its `CapBnd` line) allows CAP_SYS_RESOURCE. */
export function boundingSetAllowsRaise(status: string): boolean | undefined {
  const bits = /^CapBnd:\s*([0-9a-f]+)$/im.exec(status)?.[1];
  return bits === undefined ? undefined : ((BigInt(`0x${bits}`) >> CAP_SYS_RESOURCE) & 1n) === 1n;
}

export function readHostLimitFacts(): HostLimitFacts {
  let mayRaise: boolean | undefined;
  try {
    mayRaise = boundingSetAllowsRaise(readFileSync('/proc/self/status', 'utf8'));
  } catch {
    mayRaise = undefined;
  }
  return { hard: readHostHardLimits(), mayRaise };
}

/** `HostConfig.Ulimits` as an engine reports it: Docker names `nofile`, Podman `RLIMIT_NOFILE`. */
export function recordedLimits(ulimits: readonly { Name?: string; Hard?: number }[] | null | undefined) {
  const limits: { nofile?: number; nproc?: number } = {};
  for (const { Name, Hard } of ulimits ?? []) {
    const name = Name?.toLowerCase().replace(/^rlimit_/, '');
    if ((name === 'nofile' || name === 'nproc') && typeof Hard === 'number') limits[name] = Hard;
  }
  return limits;
}

/**
 * Ask the engine what it gives a container that names no limits: create one (never started) from
 * the Node base image, read what the engine recorded, remove it. Docker names none (the container
 * inherits its own). Rootful Podman 4.3 records 1048576 open files and, for processes, the
 * kernel's pid_max, unless its own hard nproc is below pid_max (then it names none); later
 * versions lower both to their own limits where they may not raise them. Asking beats knowing
 * each version's rule. Owner-labelled, so a doctor killed in between leaves it to the sweep.
 */
export async function probeEngineDefaultLimits(docker: Docker): Promise<EngineDefaultLimits> {
  const images = await docker.listImages({ filters: { label: ['ringfence.image=node-base'] } });
  const image = images.find((i) => repoTags(i).some((tag) => tag.startsWith(`${NODE_BASE_REPOSITORY}:`)));
  if (!image) return { unknown: 'the Node base image is not built. Run: ringfence images build' };
  const session = `doctor-${randomBytes(4).toString('hex')}`;
  const container = await docker.createContainer({
    name: `ringfence-doctor-${session}`,
    Image: image.Id,
    Cmd: ['node', '--version'],
    Labels: ownerLabels('doctor', session, 'probe'),
    HostConfig: { NetworkMode: 'none' },
  });
  try {
    return recordedLimits((await container.inspect()).HostConfig.Ulimits);
  } finally {
    await removeContainer(container).catch(() => {});
  }
}

/**
 * Whether the limits an engine gives a container that names none fit what the host grants:
 * `fail` where they exceed its hard limits and CAP_SYS_RESOURCE is withheld, `may-fail` where
 * only the engine's own privileges could raise them.
 */
export function engineDefaultsVerdict(
  engine: HostHardLimits,
  host: HostHardLimits | undefined,
  mayRaise: boolean | undefined,
): { verdict: 'fit' | 'fail' | 'may-fail' | 'unknown'; over: string[] } {
  if (!host) return { verdict: 'unknown', over: [] };
  const over = (['nofile', 'nproc'] as const)
    .filter((name) => {
      const [asked, granted] = [engine[name], host[name]];
      return typeof asked === 'number' && typeof granted === 'number' && asked > granted;
    })
    .map((name) => `${name} ${engine[name]} (this host: ${host[name]})`);
  if (over.length === 0) return { verdict: 'fit', over };
  return { verdict: mayRaise === false ? 'fail' : 'may-fail', over };
}

function describeHost(host: HostHardLimits): string {
  return `nofile ${host.nofile ?? 'unknown'}, nproc ${host.nproc ?? 'unknown'}`;
}

/**
 * The limits ringfence names on every container, and whether the engine's own would fail here
 * (docs/runtimes.md, "Process limits"). Never a warning: ringfence's containers do not use the
 * engine's defaults, so there is nothing to fix for them; it says so for the engine's others.
 */
export function checkEngineLimits(
  info: EngineInfo,
  endpoint: Pick<EngineEndpoint, 'options'>,
  facts: HostLimitFacts,
  engineDefaults: EngineDefaultLimits,
) {
  const host = hostHardLimitsFor(endpoint, () => facts.hard);
  const given = describeProcessLimits(containerProcessLimits(host));
  const base = { id: 'engine-limits', title: 'Process limits', status: 'ok', required: false } as const;
  if (!host) {
    return {
      ...base,
      summary: `every container ringfence creates gets ${given} (the defaults: this engine's host limits cannot be read from here)`,
    };
  }
  const ours = `every container ringfence creates gets ${given}, within this host's hard limits (${describeHost(host)})`;
  if ('unknown' in engineDefaults) {
    return {
      ...base,
      summary: `${ours}; whether the engine's own defaults fit is unknown: ${engineDefaults.unknown}`,
    };
  }
  const { verdict, over } = engineDefaultsVerdict(engineDefaults, host, facts.mayRaise);
  if (verdict !== 'fail' && verdict !== 'may-fail') return { ...base, summary: ours };
  const where =
    verdict === 'fail'
      ? 'here, since this host withholds CAP_SYS_RESOURCE, which raising them needs'
      : 'wherever the engine may not raise them (it needs CAP_SYS_RESOURCE, which many sandboxes and CI runners withhold)';
  return {
    ...base,
    summary:
      `${ours}. ${describeEngine(info)} itself gives a container that names none ${over.join(', ')}: such a ` +
      `container fails to start ("setrlimit …: operation not permitted") ${where}. ringfence's containers ` +
      'are not affected; for your own, name limits (--ulimit) or set default_ulimits in containers.conf.',
  };
}

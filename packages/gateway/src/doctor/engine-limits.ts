import { readFileSync } from 'node:fs';
import { describeEngine, type EngineEndpoint, type EngineInfo } from '../runtime/engine.js';
import {
  containerProcessLimits,
  describeProcessLimits,
  type HostHardLimits,
  hostHardLimitsFor,
  PODMAN_ROOTFUL_DEFAULT_LIMIT,
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

/**
 * Whether the limits this engine gives a container that names none fit what the host grants:
 * `fail` where they exceed the host's hard limits and nothing may raise them, `may-fail` where
 * they exceed them and only the engine's own privileges could. Docker passes on its own limits
 * and rootless Podman takes no more than its own, so neither asks for more than it has; rootful
 * Podman asks for 1048576 open files and processes (unless its containers.conf names others).
 */
export function engineDefaultsVerdict(
  info: Pick<EngineInfo, 'kind' | 'mode'>,
  host: HostHardLimits | undefined,
  mayRaise: boolean | undefined,
): { verdict: 'fit' | 'fail' | 'may-fail' | 'unknown'; over: string[] } {
  if (info.kind === 'docker' || info.mode === 'rootless') return { verdict: 'fit', over: [] };
  if (!host) return { verdict: 'unknown', over: [] };
  const over = (['nofile', 'nproc'] as const)
    .filter((name) => typeof host[name] === 'number' && (host[name] as number) < PODMAN_ROOTFUL_DEFAULT_LIMIT)
    .map((name) => `${name} ${host[name]}`);
  if (over.length === 0) return { verdict: 'fit', over };
  return { verdict: mayRaise === false ? 'fail' : 'may-fail', over };
}

function describeHost(host: HostHardLimits): string {
  return `nofile ${host.nofile ?? 'unknown'}, nproc ${host.nproc ?? 'unknown'}`;
}

/**
 * The limits ringfence names on every container, and whether the engine's own would have failed
 * here (docs/runtimes.md, "Process limits"). Never a warning: ringfence's containers do not use
 * the engine's defaults, so there is nothing to fix for them; it says so for the engine's other
 * containers.
 */
export function checkEngineLimits(
  info: EngineInfo,
  endpoint: Pick<EngineEndpoint, 'options'>,
  facts: HostLimitFacts,
): {
  readonly id: 'engine-limits';
  readonly title: string;
  readonly status: 'ok';
  readonly required: false;
  readonly summary: string;
} {
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
  const { verdict, over } = engineDefaultsVerdict(info, host, facts.mayRaise);
  if (verdict === 'fail' || verdict === 'may-fail') {
    const where =
      verdict === 'fail'
        ? 'here, since this host withholds CAP_SYS_RESOURCE, which raising them needs'
        : 'wherever the engine may not raise them (it needs CAP_SYS_RESOURCE, which many sandboxes and CI runners withhold)';
    return {
      ...base,
      summary:
        `${ours}. ${describeEngine(info)} itself asks for ${PODMAN_ROOTFUL_DEFAULT_LIMIT} open files and processes ` +
        `in a container that names none, above this host's ${over.join(', ')}: such a container fails to start ` +
        `("setrlimit …: operation not permitted") ${where}. ringfence's containers are not affected; for ` +
        'your own, name limits (podman run --ulimit) or set default_ulimits in containers.conf.',
    };
  }
  return { ...base, summary: ours };
}

import type Docker from 'dockerode';
import { LABEL } from './labels.js';
import { hostIdentity, ownerIsAlive } from './process-identity.js';

export interface SweepReport {
  readonly containers: string[];
  readonly networks: string[];
  readonly errors: string[];
}

function deadOwner(
  labels: Record<string, string> | undefined,
  host: string,
  probe?: (pid: number) => string | undefined,
): boolean {
  if (labels?.[LABEL.managed] !== '1') return false;
  // Objects another host's gateway made (a shared or remote engine) are not ours to judge.
  if (labels[LABEL.host] !== host) return false;
  const pid = Number(labels[LABEL.pid]);
  const start = labels[LABEL.pidStart] || undefined;
  return !ownerIsAlive(pid, start, probe);
}

/**
 * Remove containers, then networks, labelled `ringfence.managed=1` whose owner process (pid and
 * start time) no longer runs on this host. Objects of live gateways and unlabelled objects are
 * never touched. Failures are collected, not thrown: a sweep must not stop a start.
 */
export async function sweepDeadGateways(
  docker: Docker,
  options: { probe?: (pid: number) => string | undefined; host?: string } = {},
): Promise<SweepReport> {
  const host = options.host ?? hostIdentity();
  const report: SweepReport = { containers: [], networks: [], errors: [] };
  const filters = { label: [`${LABEL.managed}=1`] };
  const containers = await docker.listContainers({ all: true, filters });
  await Promise.all(
    containers
      .filter((c) => deadOwner(c.Labels, host, options.probe))
      .map(async (c) => {
        try {
          await docker.getContainer(c.Id).remove({ force: true, v: true });
          report.containers.push(c.Names?.[0]?.replace(/^\//, '') ?? c.Id);
        } catch (error) {
          if ((error as { statusCode?: number }).statusCode !== 404)
            report.errors.push(`${c.Id}: ${(error as Error).message}`);
        }
      }),
  );
  const networks = await docker.listNetworks({ filters });
  for (const network of networks.filter((n) => deadOwner(n.Labels, host, options.probe))) {
    try {
      await docker.getNetwork(network.Id).remove();
      report.networks.push(network.Name);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404)
        report.errors.push(`${network.Name}: ${(error as Error).message}`);
    }
  }
  return report;
}

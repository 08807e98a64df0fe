import type Docker from 'dockerode';
import { listContainers, removeContainer } from './engine-races.js';
import { isPersistent, LABEL } from './labels.js';
import { removeNetworks } from './networks.js';
import { removeManagedImages } from './owned-images.js';
import { hostIdentity, ownerIsAlive } from './process-identity.js';

export interface SweepReport {
  readonly containers: string[];
  readonly networks: string[];
  /** Images ringfence committed (sandbox forks, checkpoints), by the reference each was removed by. Snapshots are never in it. */
  readonly images: string[];
  readonly errors: string[];
}

function deadOwner(
  labels: Record<string, string> | undefined,
  host: string,
  probe?: (pid: number) => string | undefined,
): boolean {
  if (labels?.[LABEL.managed] !== '1') return false;
  // A persistent sandbox outlives its gateway by design: only its removal by name takes it.
  if (isPersistent(labels)) return false;
  // Objects another host's gateway made (a shared or remote engine) are not ours to judge.
  if (labels[LABEL.host] !== host) return false;
  const pid = Number(labels[LABEL.pid]);
  const start = labels[LABEL.pidStart] || undefined;
  return !ownerIsAlive(pid, start, probe);
}

/**
 * Remove the containers, then the images, then the networks, labelled `ringfence.managed=1` (or the
 * `ringfence.managed=…` that `labels` names) and `labels` (an engine-side pre-filter) that `select`
 * picks by their labels. Containers go in parallel and by
 * force (a server that ignores the end of its input is killed); networks go last, anything still
 * attached to them disconnected first. Failures are collected, not thrown, and an object already
 * gone is not a failure: the sweep and a reaper may race for the same leftovers.
 */
export async function removeManaged(
  docker: Docker,
  select: (labels: Record<string, string> | undefined) => boolean,
  labels: readonly string[] = [],
): Promise<SweepReport> {
  const report: SweepReport = { containers: [], networks: [], images: [], errors: [] };
  // `ringfence.managed=1` unless the caller names another value (a persistent sandbox's removal by name).
  const own = labels.some((label) => label.startsWith(`${LABEL.managed}=`));
  const filters = { label: own ? [...labels] : [`${LABEL.managed}=1`, ...labels] };
  // The three lists are asked at once (one round trip to the engine, not three, when there is
  // nothing to remove, as at most starts); each is still read, and acted on, in the order below.
  const listedImages = docker.listImages({ filters: { label: [...filters.label] } });
  const listedNetworks = docker.listNetworks({ filters });
  // Read later, or never if an earlier step throws: not an unhandled rejection meanwhile.
  listedImages.catch(() => {});
  listedNetworks.catch(() => {});
  const containers = await listContainers(docker, { all: true, filters });
  await Promise.all(
    containers
      .filter((c) => select(c.Labels))
      .map(async (c) => {
        try {
          // False: already gone, or someone else's removal is in progress.
          if (await removeContainer(docker.getContainer(c.Id))) {
            report.containers.push(c.Names?.[0]?.replace(/^\//, '') ?? c.Id);
          }
        } catch (error) {
          report.errors.push(`${c.Id}: ${(error as Error).message}`);
        }
      }),
  );
  // Snapshots (`sandbox/saved.ts`) are the home's, never a gateway's: no close, reaper or sweep takes one.
  const images = await removeManagedImages(
    docker,
    (l) => l?.[LABEL.role] !== 'snapshot' && select(l),
    filters.label,
    listedImages,
  );
  report.images.push(...images.images);
  report.errors.push(...images.errors);
  const networks = await listedNetworks;
  for (const network of networks.filter((n) => select(n.Labels))) {
    try {
      if ((await removeNetworks(docker, [network.Id])).length > 0) report.networks.push(network.Name);
    } catch (error) {
      report.errors.push(`${network.Name}: ${(error as Error).message}`);
    }
  }
  return report;
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
  return removeManaged(docker, (labels) => deadOwner(labels, host, options.probe));
}

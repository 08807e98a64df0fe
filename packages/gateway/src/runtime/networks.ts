import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import { networkName, ownerLabels } from './labels.js';

export interface ServerNetworks {
  /** NetworkMode of the server container. */
  readonly serverNetwork: string;
  /** `allow` only: the outer network the sidecar also joins. */
  readonly outer?: string;
  readonly created: readonly string[];
}

/**
 * `deny` → no network at all. `allow` → an internal network (no route out) that the server
 * shares only with its egress sidecar, and an outer one for the sidecar. `any` → a network of
 * its own. Networks are labelled with their owner for the sweep.
 */
export async function createServerNetworks(
  docker: Docker,
  config: ContainerServerConfig,
  session: string,
  engine: 'docker' | 'podman' = 'docker',
  /** More labels for each network (a sandbox's name: `LABEL.sandbox`). */
  extraLabels: Readonly<Record<string, string>> = {},
): Promise<ServerNetworks> {
  const labels = { ...ownerLabels(config.name, session, 'network'), ...extraLabels };
  const create = async (name: string, internal: boolean) => {
    if (internal && engine === 'podman') {
      await createPodmanInternalNetwork(docker, name, labels);
      return name;
    }
    await docker.createNetwork({
      Name: name,
      Driver: 'bridge',
      Internal: internal,
      CheckDuplicate: true,
      Labels: labels,
      EnableIPv6: false,
      // `Internal` alone still gives the host an address on the bridge, so a server could reach
      // host services listening on all interfaces. Without one, only the sidecar is reachable.
      ...(internal
        ? {
            Options: {
              'com.docker.network.bridge.inhibit_ipv4': 'true',
              'com.docker.network.bridge.gateway_mode_ipv4': 'isolated',
            },
          }
        : {}),
    });
    return name;
  };
  if (config.egress.mode === 'deny') return { serverNetwork: 'none', created: [] };
  if (config.egress.mode === 'any') {
    const any = await create(networkName(config.name, session, 'any'), false);
    return { serverNetwork: any, created: [any] };
  }
  const inner = await create(networkName(config.name, session, 'in'), true);
  try {
    const outer = await create(networkName(config.name, session, 'out'), false);
    return { serverNetwork: inner, outer, created: [inner, outer] };
  } catch (error) {
    await docker
      .getNetwork(inner)
      .remove()
      .catch(() => {});
    throw error;
  }
}

/**
 * Podman's compatible API has no way to turn off the network's DNS server (aardvark-dns), which
 * answers on the bridge's gateway and forwards what it cannot answer to the host's resolvers: a
 * way out of an internal network in DNS queries. Its own API has: `dns_enabled: false`. The server
 * reaches its sidecar by address, so the internal network needs no names.
 */
async function createPodmanInternalNetwork(
  docker: Docker,
  name: string,
  labels: Record<string, string>,
): Promise<void> {
  await new Promise<void>((resolve, reject) =>
    docker.modem.dial(
      {
        path: '/v4.0.0/libpod/networks/create',
        method: 'POST',
        options: { name, driver: 'bridge', internal: true, dns_enabled: false, ipv6_enabled: false, labels },
        statusCodes: { 200: true, 201: true, 409: 'network exists', 500: 'server error' },
      },
      (error) => (error ? reject(error) : resolve()),
    ),
  );
}

/**
 * Remove our networks; anything still attached to them (a container someone connected by hand)
 * is disconnected first, so a session never leaves a network behind. Returns those this call
 * removed (one already gone is not an error).
 */
export async function removeNetworks(docker: Docker, names: readonly string[]): Promise<string[]> {
  const removed: string[] = [];
  for (const name of names) {
    const network = docker.getNetwork(name);
    try {
      const info = (await network.inspect()) as { Containers?: Record<string, unknown> };
      for (const id of Object.keys(info.Containers ?? {})) {
        await network.disconnect({ Container: id, Force: true }).catch(() => {});
      }
      await network.remove();
      removed.push(name);
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode !== 404) throw error;
    }
  }
  return removed;
}

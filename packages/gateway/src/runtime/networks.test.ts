import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { ContainerServerConfig } from '../config/servers.js';
import { createServerNetworks } from './networks.js';

const config: ContainerServerConfig = {
  name: 'files',
  transport: 'container',
  image: 'example/files:1',
  image_id: `sha256:${'a'.repeat(64)}`,
  egress: { mode: 'allow', hosts: ['api.example.com'] },
};

/** Records what the runtime asks of the engine, through either API. */
function recordingEngine() {
  const compat: Record<string, unknown>[] = [];
  const libpod: { path: string; options: Record<string, unknown> }[] = [];
  const docker = {
    createNetwork: async (options: Record<string, unknown>) => {
      compat.push(options);
    },
    modem: {
      dial: (
        request: { path: string; options: Record<string, unknown> },
        callback: (error: null) => void,
      ) => {
        libpod.push(request);
        callback(null);
      },
    },
  } as unknown as Docker;
  return { docker, compat, libpod };
}

describe('createServerNetworks', () => {
  it('on Docker: the internal network withholds the host address (inhibit_ipv4)', async () => {
    const engine = recordingEngine();
    const networks = await createServerNetworks(engine.docker, config, 'sess', 'docker');
    expect(networks.created).toHaveLength(2);
    const inner = engine.compat.find((n) => n.Internal === true);
    expect(inner?.Options).toMatchObject({ 'com.docker.network.bridge.inhibit_ipv4': 'true' });
    expect(engine.libpod).toEqual([]);
  });

  it("on Podman: the internal network is made through Podman's own API with its DNS server off", async () => {
    const engine = recordingEngine();
    const networks = await createServerNetworks(engine.docker, config, 'sess', 'podman');
    expect(engine.libpod).toEqual([
      expect.objectContaining({
        path: '/v4.0.0/libpod/networks/create',
        options: expect.objectContaining({
          name: networks.serverNetwork,
          internal: true,
          dns_enabled: false,
          labels: expect.objectContaining({ 'ringfence.managed': '1' }),
        }),
      }),
    ]);
    // The sidecar's outer network keeps a resolver: the proxy resolves the allowed names.
    expect(engine.compat).toEqual([expect.objectContaining({ Name: networks.outer, Internal: false })]);
  });
});

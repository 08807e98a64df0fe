import { randomBytes } from 'node:crypto';
import { internalDnsVerdict } from '@ringfence/gateway/doctor';
import { probeEngine, resolveEngineEndpoint, SERVER_DNS } from '@ringfence/gateway/runtime';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  refusalFor,
  removeTestContainers,
  resolverProbeImage,
  startOrigin,
  testNetwork,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

interface Report {
  proxy: string | null;
  ownResponder?: string;
  lookups: Record<string, { answer?: string[]; error?: string }>;
  ownQueries: string[];
  fetch?: { status?: number; body?: string; error?: string };
}

const canary = () => `canary-${randomBytes(4).toString('hex')}.ringfence.test`;

/**
 * CVE-2024-29018: engines before 26.0.2 / 25.0.5 / 23.0.11 forward DNS queries from `--internal`
 * networks to the host's resolver when it is on loopback, so a server with no route out could
 * still send data out in the names it looks up. Every lookup here is of a name under
 * `.ringfence.test` or of a test container, and nothing here can reach a resolver outside this
 * machine: the server's network has no route out.
 */
// An engine that refuses `allow` servers (docs/runtimes.md) has none to look inside of; the
// refusal is checked in containers-isolation.test.ts.
describe.skipIf(await refusalFor('allow'))(
  'DNS of a server with an egress allowlist, seen from inside',
  () => {
    const session = uniqueName('dns').replace(/[^a-z0-9-]/g, '');
    let home: string;
    let served: ServedClient;
    let origin: Docker.Container;
    let originName: string;
    const resolve = async (args: Record<string, unknown>) => {
      const result = await served.client.callTool({ name: 'dns_resolve', arguments: args });
      expect(result.isError, firstText(result)).toBeFalsy();
      return JSON.parse(firstText(result)) as Report;
    };

    beforeAll(async () => {
      home = await freshHome();
      originName = uniqueName('rf-dns-origin');
      origin = await startOrigin(originName, await testNetwork(uniqueName('rf-dns-origins')));
      const added = await ringfence(
        [
          'mcp',
          'add',
          'dns',
          '--image',
          await resolverProbeImage(),
          '--egress-allow',
          `${originName}:8080`,
          '--egress-allow-address',
          '172.16.0.0/12',
          '--egress-allow-address',
          '192.168.0.0/16',
          // Fail lookups in seconds rather than tens of seconds; the verdict is the same.
          '-e',
          'RES_OPTIONS=timeout:1 attempts:1',
        ],
        { RINGFENCE_HOME: home },
      );
      expect(added.code, added.stderr).toBe(0);
      served = await connectStdio(home, {}, {}, { args: ['--session', session] });
      // The origin joins the sidecar's outer network only: the proxy can resolve and reach it.
      await docker.getNetwork(`ringfence-mcp-dns-${session}-out`).connect({ Container: origin.id });
    });

    afterAll(async () => {
      await served?.close();
      await removeTestContainers();
    });

    it('resolves nothing: neither the origin the proxy can reach nor any other name, by the system resolver or straight at the embedded DNS', async () => {
      for (const via of ['system', 'embedded']) {
        const seen = await resolve({ names: [originName, canary()], via });
        for (const [name, lookup] of Object.entries(seen.lookups)) {
          expect(lookup.answer, `${via} lookup of ${name}`).toBeUndefined();
          expect(lookup.error, `${via} lookup of ${name}`).toMatch(/^E[A-Z_]+$/);
        }
      }
    });

    it("the embedded DNS forwards what it cannot answer only into the server's own container, never towards the host's resolver", async () => {
      const endpoint = resolveEngineEndpoint();
      const verdict = internalDnsVerdict(await probeEngine(docker, endpoint));
      const name = canary();
      const seen = await resolve({ names: [name], via: 'embedded', ownResponder: true });
      expect(seen.ownResponder).toBe('listening');
      if (verdict === 'affected') {
        // This engine forwards from internal networks (the CVE). The only resolver it may forward
        // to is the server's own loopback: the query reached the server's own resolver, so it
        // cannot have gone to the host's.
        expect(seen.lookups[name]).toEqual({ answer: ['10.7.7.7'] });
        expect(seen.ownQueries).toContain(name);
      } else {
        // A fixed engine (or Podman) forwards nothing from an internal network.
        expect(seen.lookups[name]?.answer).toBeUndefined();
      }
    });

    it('still reaches the proxy, by address, and allowed egress through it works', async () => {
      const sidecar = await docker.getContainer(`ringfence-egress-dns-${session}`).inspect();
      const address = sidecar.NetworkSettings.Networks[`ringfence-mcp-dns-${session}-in`]!.IPAddress;
      const seen = await resolve({ names: ['egress'], via: 'system', fetch: `http://${originName}:8080/` });
      expect(seen.proxy).toBe(`http://${address}:3128`);
      // For software that names the proxy: from /etc/hosts, no resolver needed.
      expect(seen.lookups.egress).toEqual({ answer: [address] });
      expect(seen.fetch).toEqual({ status: 200, body: `origin:${originName}` });
      const server = await docker.getContainer(`ringfence-mcp-dns-${session}`).inspect();
      expect(server.HostConfig.Dns).toEqual([SERVER_DNS]);
    });
  },
);

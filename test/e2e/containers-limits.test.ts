import {
  engineDefaultsVerdict,
  probeEngineDefaultLimits,
  readHostLimitFacts,
} from '@ringfence/gateway/doctor';
import { hostHardLimitsFor, resolveEngineEndpoint } from '@ringfence/gateway/runtime';
import type Docker from 'dockerode';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import {
  docker,
  expectedProcessLimits,
  nodeBase,
  probeImage,
  removeTestContainers,
  testLabels,
  uniqueName,
} from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

// What this engine's own limits (those it records for a container that names none) do on this
// host, as the doctor judges it: `fail` on rootful Podman 4.3 where the host's hard limits are
// below its 1048576 and CAP_SYS_RESOURCE is withheld (docs/runtimes.md, "Process limits").
await nodeBase();
const engineDefaults = await probeEngineDefaultLimits(docker);
if ('unknown' in engineDefaults)
  throw new Error(`cannot learn the engine's defaults: ${engineDefaults.unknown}`);
const facts = readHostLimitFacts();
const { verdict } = engineDefaultsVerdict(
  engineDefaults,
  hostHardLimitsFor(resolveEngineEndpoint(), () => facts.hard),
  facts.mayRaise,
);
// `npm run test:podman` sets this where it started the engine on such a host on purpose: the
// suite must then meet the failure, or it proves nothing.
const required = process.env.RINGFENCE_TEST_ENGINE_DEFAULTS;

describe(`process limits: a server starts however the engine's own defaults fare here (${verdict})`, () => {
  let home: string;
  let served: ServedClient;
  const session = uniqueName('lim');

  beforeAll(async () => {
    home = await freshHome();
    const added = await ringfence(['mcp', 'add', 'limited', '--image', await probeImage()], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
    served = await connectStdio(home, {}, {}, { args: ['--session', session] });
  });

  afterAll(async () => {
    await served?.close();
    await removeTestContainers();
  });

  it.runIf(required)(`meets the engine defaults it was started to meet (${required})`, () => {
    expect(verdict).toBe(required);
  });

  it('runs a server with the limits ringfence named, within the host hard limits', async () => {
    // A server that failed to start is skipped by the gateway, which says why on stderr.
    const tools = (await served.client.listTools()).tools.map((tool) => tool.name);
    expect(tools, served.stderr()).toContain('limited_probe');
    const result = await served.client.callTool({ name: 'limited_probe', arguments: {} });
    expect(result.isError, `${firstText(result)}\n${served.stderr()}`).toBeFalsy();
    const { limits } = JSON.parse(firstText(result)) as {
      limits: Record<'nofile' | 'nproc', { soft: string; hard: string }>;
    };
    const { nofile, nproc } = expectedProcessLimits();
    expect(limits.nofile.hard).toBe(String(nofile.hard));
    expect(limits.nproc).toEqual({ soft: String(nproc.soft), hard: String(nproc.hard) });
  });

  // The control: without ringfence's limits, a container on this engine fares as the doctor says.
  it.runIf(verdict === 'fail' || verdict === 'fit')(
    "a container that names no limits gets the engine's defaults, and fares as the doctor says",
    async () => {
      const bare: Docker.Container = await docker.createContainer({
        name: uniqueName('rf-test-bare'),
        Image: await nodeBase(),
        Cmd: ['node', '-e', '0'],
        Labels: testLabels(),
        User: '65532:65532',
        HostConfig: { NetworkMode: 'none', ReadonlyRootfs: true, CapDrop: ['ALL'] },
      });
      const started = bare.start().then(
        () => 'started',
        (error: Error) => error.message,
      );
      if (verdict === 'fail') expect(await started).toMatch(/setrlimit|rlimit/i);
      else {
        expect(await started).toBe('started');
        expect((await bare.wait()).StatusCode).toBe(0);
      }
      const doctor = await ringfence(['doctor', '--json'], { RINGFENCE_HOME: home });
      const check = (JSON.parse(doctor.stdout) as { checks: { id: string; summary: string }[] }).checks.find(
        (c) => c.id === 'engine-limits',
      );
      if (verdict === 'fail')
        expect(check?.summary).toMatch(/such a\s+container fails to start .* here, since/);
      else expect(check?.summary).not.toContain('fails to start');
    },
  );
});

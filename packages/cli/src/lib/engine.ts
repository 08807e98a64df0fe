import { createDockerClient, probeEngine, resolveEngineEndpoint } from '@ringfence/gateway/runtime';
import type Docker from 'dockerode';

/** A docker client that answered, or an error that says how to get one. */
export async function connectEngine(): Promise<Docker> {
  const endpoint = resolveEngineEndpoint();
  const docker = createDockerClient(endpoint);
  await probeEngine(docker, endpoint);
  return docker;
}

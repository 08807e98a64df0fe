import {
  buildNodeBaseImage,
  createDockerClient,
  probeEngine,
  resolveEngineEndpoint,
} from '@ringfence/gateway';
import type Docker from 'dockerode';

/** A docker client that answered, or an error that says how to get one. */
export async function connectEngine(): Promise<Docker> {
  const endpoint = resolveEngineEndpoint();
  const docker = createDockerClient(endpoint);
  await probeEngine(docker, endpoint);
  return docker;
}

/** The Node base image ref, building it (offline, from the local runtime) when missing. */
export async function ensureBaseImage(docker: Docker): Promise<string> {
  return (await buildNodeBaseImage(docker)).ref;
}

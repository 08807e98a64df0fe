import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import type { PolicyView } from '../ports/policy.js';

/** What the policy's allowed_mcp compares: the name as configured, the content id and repo digests. */
export function imageIdentity(name: string, info: Docker.ImageInspectInfo) {
  return { name, digests: [info.Id, ...(info.RepoDigests ?? [])] };
}

/**
 * Never pull implicitly: the image must be here, and its tag must still name the image ID
 * recorded at registration. Otherwise refuse, naming the command that fixes it.
 */
export async function checkImage(
  docker: Docker,
  config: ContainerServerConfig,
  policy?: PolicyView,
  /** The engine's answer to this same inspection, asked earlier in this start (runtime.ts). */
  inspected?: Promise<Docker.ImageInspectInfo>,
): Promise<Docker.ImageInspectInfo> {
  let byTag: Docker.ImageInspectInfo | undefined;
  try {
    byTag = await (inspected ?? docker.getImage(config.image).inspect());
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode !== 404) throw error;
  }
  if (!byTag) {
    throw new UpstreamError(
      'IMAGE_MISSING',
      `its image ${config.image} is not on this host (ringfence never pulls implicitly). Pull it with: ringfence mcp pull ${config.name}`,
    );
  }
  if (byTag.Id !== config.image_id) {
    throw new UpstreamError(
      'IMAGE_MOVED',
      `its image tag ${config.image} moved: it now names ${byTag.Id.slice(0, 19)}, not the ${config.image_id.slice(0, 19)} recorded at registration. If you trust the new image, record it with: ringfence mcp pull ${config.name}`,
    );
  }
  const refusal =
    policy?.imageRefusal(imageIdentity(config.image, byTag)) ??
    policy?.egressRefusal(config.name, config.egress);
  if (refusal) throw new UpstreamError('POLICY_REFUSED', refusal);
  return byTag;
}

import { realpathSync } from 'node:fs';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { type BuiltImage, buildContextImage } from './build.js';
import type { ImageContext } from './context.js';

export const SIDECAR_REPOSITORY = 'ringfence/egress-sidecar';
export const SIDECAR_IMAGE_LABEL = 'egress-sidecar';
export const SIDECAR_ENTRYPOINT = ['node', '/opt/ringfence/ringfence-egress-proxy.mjs'] as const;

/** The egress proxy's single-file bundle on the Node base image, run as uid 65532. */
export function planSidecarContext(baseRef: string, bundlePath: string): ImageContext {
  return {
    dockerfile: [
      `FROM ${baseRef}`,
      'COPY ringfence-egress-proxy.mjs /opt/ringfence/ringfence-egress-proxy.mjs',
      'USER 65532:65532',
      `ENTRYPOINT ${JSON.stringify(SIDECAR_ENTRYPOINT)}`,
      'CMD ["--help"]',
      '',
    ].join('\n'),
    files: [
      { path: 'ringfence-egress-proxy.mjs', mode: 0o644, source: { hostPath: realpathSync(bundlePath) } },
    ],
  };
}

export async function buildSidecarImage(
  docker: Docker,
  options: { baseRef: string; bundlePath: string; onProgress?: (line: string) => void },
): Promise<BuiltImage> {
  // FROM must name an image already here; the engine would otherwise try a registry.
  try {
    await docker.getImage(options.baseRef).inspect();
  } catch {
    throw new GatewayError(
      'IMAGE_BUILD_FAILED',
      `The base image ${options.baseRef} is missing. Run: ringfence images build`,
    );
  }
  return buildContextImage(docker, {
    repository: SIDECAR_REPOSITORY,
    context: planSidecarContext(options.baseRef, options.bundlePath),
    labels: { 'ringfence.image': SIDECAR_IMAGE_LABEL },
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  });
}

/** The newest sidecar image on this host, by label; undefined when none was built. */
export async function findImageByLabel(docker: Docker, image: string): Promise<string | undefined> {
  const images = await docker.listImages({ filters: { label: [`ringfence.image=${image}`] } });
  const newest = images.sort((a, b) => b.Created - a.Created)[0];
  return newest?.RepoTags?.find((tag) => tag !== '<none>:<none>') ?? newest?.Id;
}

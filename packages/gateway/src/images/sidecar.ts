import { realpathSync } from 'node:fs';
import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { type BuiltImage, buildContextImage, CONTENT_LABEL, repoTags } from './build.js';
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

/**
 * The sidecar image to run: only a `ringfence/egress-sidecar:<16 hex>` tag whose content label
 * agrees with its tag and whose entrypoint is the proxy's. A label alone is not enough: any image
 * a user pulls can carry labels, and whatever runs here holds every server's way out.
 */
export async function findSidecarImage(docker: Docker): Promise<string | undefined> {
  const images = await docker.listImages({ filters: { reference: [`${SIDECAR_REPOSITORY}:*`] } });
  const candidates: { ref: string; created: number }[] = [];
  for (const image of images) {
    for (const ref of repoTags(image)) {
      const tag = /^ringfence\/egress-sidecar:([0-9a-f]{16})$/.exec(ref)?.[1];
      const digest = image.Labels?.[CONTENT_LABEL];
      if (!tag || digest?.slice('sha256:'.length, 'sha256:'.length + 16) !== tag) continue;
      const info = await docker.getImage(image.Id).inspect();
      if (JSON.stringify(info.Config?.Entrypoint) !== JSON.stringify(SIDECAR_ENTRYPOINT)) continue;
      candidates.push({ ref, created: image.Created });
    }
  }
  return candidates.sort((a, b) => b.created - a.created)[0]?.ref;
}

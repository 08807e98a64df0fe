import type Docker from 'dockerode';
import { GatewayError } from '../errors.js';
import { contextDigest, type ImageContext, packContext } from './context.js';

export interface BuiltImage {
  /** `repository:tag`, the tag derived from the context digest. */
  readonly ref: string;
  readonly id: string;
  readonly contentDigest: string;
  /** false when an image with this content tag already existed (nothing was built). */
  readonly built: boolean;
  readonly sizeBytes: number;
}

export interface BuildRequest {
  readonly repository: string;
  /** Human-readable part before the digest, e.g. the Node version. */
  readonly tagPrefix?: string;
  readonly context: ImageContext;
  readonly labels?: Readonly<Record<string, string>>;
  /** Called with each line the engine prints while building. */
  readonly onProgress?: (line: string) => void;
}

export const CONTENT_LABEL = 'ringfence.content-digest';

export function contentTag(digest: string, prefix?: string): string {
  const short = digest.replace(/^sha256:/, '').slice(0, 16);
  return prefix ? `${prefix}-${short}` : short;
}

/**
 * An image's tags as Docker names them. Podman's compatible API lists the same image fully
 * qualified (`docker.io/ringfence/egress-sidecar:…`); Docker treats `docker.io/` and
 * `docker.io/library/` as implied, so dropping them names the very same image, never another.
 */
export function repoTags(image: { RepoTags?: string[] | null }): string[] {
  return (image.RepoTags ?? []).map((tag) => tag.replace(/^docker\.io\/(library\/)?/, ''));
}

async function inspectIfPresent(docker: Docker, ref: string): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await docker.getImage(ref).inspect();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}

/**
 * Build `context` into `repository:<prefix>-<digest>` unless that exact tag already exists
 * (with our content label), in which case nothing is sent to the engine.
 */
export async function buildContextImage(docker: Docker, request: BuildRequest): Promise<BuiltImage> {
  const digest = await contextDigest(request.context);
  const ref = `${request.repository}:${contentTag(digest, request.tagPrefix)}`;
  const existing = await inspectIfPresent(docker, ref);
  if (existing && existing.Config?.Labels?.[CONTENT_LABEL] === digest) {
    return { ref, id: existing.Id, contentDigest: digest, built: false, sizeBytes: existing.Size };
  }

  const stream = await docker.buildImage(packContext(request.context), {
    t: ref,
    labels: { ...request.labels, [CONTENT_LABEL]: digest },
    rm: true,
    forcerm: true,
  });

  await new Promise<void>((resolve, reject) => {
    docker.modem.followProgress(
      stream,
      (error: Error | null, output: { error?: string; errorDetail?: { message?: string } }[]) => {
        const failed = output?.find((event) => event.error || event.errorDetail);
        if (error || failed) {
          const message = error?.message ?? failed?.errorDetail?.message ?? failed?.error ?? 'unknown error';
          reject(new GatewayError('IMAGE_BUILD_FAILED', `Building ${ref} failed: ${message.trim()}`));
        } else resolve();
      },
      (event: { stream?: string }) => {
        const line = event.stream?.trim();
        if (line && request.onProgress) request.onProgress(line);
      },
    );
  });

  const image = await inspectIfPresent(docker, ref);
  if (!image) {
    throw new GatewayError('IMAGE_BUILD_FAILED', `The engine reported success but ${ref} is not present.`);
  }
  return { ref, id: image.Id, contentDigest: digest, built: true, sizeBytes: image.Size };
}

import type Docker from 'dockerode';
import { imageIdentity } from '../runtime/image-check.js';
import { SandboxError } from './errors.js';
import type { Sandboxes } from './sandboxes.js';

export interface ImageSummary {
  readonly image: string;
  readonly present: boolean;
  /** Bytes, when present. */
  readonly size?: number;
  readonly id?: string;
  /** Whether the policy's allowed_mcp admits it (when absent: by its name alone). */
  readonly allowed_by_policy: boolean;
  readonly refusal?: string;
}

async function inspect(docker: Docker, image: string): Promise<Docker.ImageInspectInfo | undefined> {
  try {
    return await docker.getImage(image).inspect();
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
}

/**
 * The images sandboxes may be made from: exactly those the person named with `--sandbox-image`,
 * never the engine's other images (the person's own are none of the assistant's business).
 */
export async function listImages(sandboxes: Sandboxes): Promise<ImageSummary[]> {
  const engine = await sandboxes.engine();
  return Promise.all(
    sandboxes.images.map(async (image) => {
      const info = await inspect(engine.docker, image);
      const refusal = sandboxes.policy.imageRefusal(
        info ? imageIdentity(image, info) : { name: image, digests: [] },
      );
      return {
        image,
        present: info !== undefined,
        ...(info ? { size: info.Size, id: info.Id } : {}),
        allowed_by_policy: refusal === undefined,
        ...(refusal ? { refusal } : {}),
      };
    }),
  );
}

function pull(docker: Docker, image: string, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    docker.pull(image, { ...(signal ? { abortSignal: signal } : {}) }, (error: Error | null, stream) => {
      if (error) return reject(error);
      docker.modem.followProgress(stream as NodeJS.ReadableStream, (failure: Error | null) =>
        failure ? reject(failure) : resolve(),
      );
    });
  });
}

/**
 * Pulls one image on the person's side (the engine fetches it; no sandbox takes part), only when
 * the person allowed it (`--sandbox-image`, exactly as named) **and** the policy's allowed_mcp
 * admits it by that name (or by the digest the name carries). Both are checked before anything is
 * fetched, so an image the policy refuses never reaches this host through this tool; the image
 * pulled is checked again by its content (id and repo digests), as sandbox_create will.
 */
export async function pullImage(
  sandboxes: Sandboxes,
  image: string,
  signal?: AbortSignal,
): Promise<ImageSummary & { pulled: true }> {
  if (!sandboxes.images.includes(image))
    throw new SandboxError(
      'SANDBOX_IMAGE',
      sandboxes.images.length === 0
        ? 'no image is allowed for sandboxes: the person starts `ringfence mcp serve --sandbox-tools --sandbox-image IMAGE` to allow one.'
        : `the image ${image} is not one the person allowed for sandboxes (--sandbox-image); pull one of: ${sandboxes.images.join(', ')}.`,
    );
  const byName = sandboxes.policy.imageRefusal({ name: image, digests: [] });
  if (byName)
    throw new SandboxError(
      'SANDBOX_IMAGE',
      `${byName} Nothing was pulled. (An image the policy admits by digest is pulled by a name that carries it: IMAGE@sha256:…)`,
    );
  const engine = await sandboxes.engine();
  try {
    await pull(engine.docker, image, signal);
  } catch (error) {
    throw new SandboxError(
      'SANDBOX_IMAGE',
      `pulling ${image} failed: ${(error as Error).message}. The engine pulls on the person's side: check that its registry answers there.`,
      { cause: error },
    );
  }
  const info = await inspect(engine.docker, image);
  if (!info) throw new SandboxError('SANDBOX_IMAGE', `the engine pulled ${image} but does not show it.`);
  const refusal = sandboxes.policy.imageRefusal(imageIdentity(image, info));
  if (refusal) throw new SandboxError('SANDBOX_IMAGE', refusal);
  return { image, present: true, size: info.Size, id: info.Id, allowed_by_policy: true, pulled: true };
}

import { randomBytes } from 'node:crypto';
import { LABEL, ownerLabels } from '../runtime/labels.js';
import { parseCreate } from './args.js';
import { SandboxError } from './errors.js';
import type { ForkRequest } from './explore-args.js';
import { IMAGE_LABEL, REQUEST_LABEL, type Sandboxes, type SandboxSummary } from './sandboxes.js';
import { NOT_PERSISTENT } from './spec.js';
import { OWN_SERVER } from './tools.js';

/** The repository a fork's image is committed to; its tag names the fork, the session and a nonce. */
export const FORK_REPOSITORY = 'ringfence-sandbox-fork';
/** `ringfence.role` of a fork's image (checkpoints and snapshots have their own roles). */
export const FORK_IMAGE_ROLE = 'fork-image';
/** On a fork's image and container: the sandbox it was forked from. */
export const FORK_OF_LABEL = 'ringfence.sandbox_fork_of';

export interface ForkOutcome {
  readonly forked: SandboxSummary;
  readonly from: string;
  readonly image: { readonly reference: string; readonly size_bytes: number };
}

/**
 * The labels a fork's image carries. The engine copies the source container's labels into the
 * image it commits (its role `sandbox`, its name); these replace them, so the image is found as
 * the fork's (`ringfence.sandbox=NEW`, `ringfence.role=fork-image`, this gateway as owner) and
 * goes with the fork's deletion, this gateway's end or the sweep of a dead gateway.
 */
export function forkImageLabels(source: string, fork: string, session: string): Record<string, string> {
  // A fork is never persistent: its image goes with it even when its source outlives the gateway.
  return {
    ...NOT_PERSISTENT,
    ...ownerLabels(OWN_SERVER, session, 'sandbox'),
    [LABEL.role]: FORK_IMAGE_ROLE,
    [LABEL.sandbox]: fork,
    [FORK_OF_LABEL]: source,
  };
}

/** Dockerfile LABEL instructions (the commit API's `changes`), each key and value quoted. */
export const labelChanges = (labels: Record<string, string>): string =>
  Object.entries(labels)
    .map(([key, value]) => `LABEL ${JSON.stringify(key)}=${JSON.stringify(value)}`)
    .join('\n');

/** The source's create request as it stored it, read again like any request (never trusted as is). */
function sourceRequest(labels: Record<string, string>, source: string, fork: string) {
  const stored = labels[REQUEST_LABEL];
  const image = labels[IMAGE_LABEL];
  let parsed: unknown;
  try {
    parsed = stored === undefined ? undefined : JSON.parse(stored);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || image === undefined)
    throw new SandboxError(
      'SANDBOX_ARGUMENTS',
      `the sandbox "${source}" does not record how it was made (an older ringfence made it), so it cannot be forked with the same containment; make a new one with sandbox_create.`,
    );
  return parseCreate({ ...(parsed as Record<string, unknown>), name: fork, image });
}

/**
 * sandbox_fork: the source's current files become an image (the engine's commit, pausing the
 * source for its duration; mounted directories are not in it), and a new sandbox is made from
 * that image with exactly the source's containment: its network (none, the same named hosts, or
 * "any"), its mounts, its command. All of it is checked again as a create would be (the image
 * the source began from is still allowed, the policy still grants that network, each mount is
 * still under an --allow-mount directory with its read-only/writable choice), so a fork never
 * has more than a new sandbox would be given now.
 */
export async function forkSandbox(sandboxes: Sandboxes, request: ForkRequest): Promise<ForkOutcome> {
  const source = await sandboxes.located(request.name);
  const create = sourceRequest(source.info.Labels, request.name, request.newName);
  if ((await sandboxes.list()).some((s) => s.name === request.newName))
    throw new SandboxError(
      'SANDBOX_EXISTS',
      `a sandbox "${request.newName}" already exists in this session; choose another new_name or delete it with sandbox_delete.`,
    );
  const { engine } = source;
  const tag = `${request.newName}-${engine.session}-${randomBytes(4).toString('hex')}`;
  const reference = `${FORK_REPOSITORY}:${tag}`;
  let imageId: string;
  try {
    const committed = (await source.container.commit({
      repo: FORK_REPOSITORY,
      tag,
      pause: true,
      comment: `ringfence: fork of sandbox ${request.name}`,
      changes: labelChanges(forkImageLabels(request.name, request.newName, engine.session)),
    })) as { Id?: string };
    imageId = committed.Id ?? (await engine.docker.getImage(reference).inspect()).Id;
  } catch (error) {
    throw new SandboxError(
      'SANDBOX_RUN',
      `the engine could not commit the sandbox "${request.name}": ${(error as Error).message}`,
      { cause: error },
    );
  }
  try {
    const forked = await sandboxes.create(create, { imageId });
    const size = (await engine.docker.getImage(imageId).inspect()).Size ?? 0;
    return { forked, from: request.name, image: { reference, size_bytes: size } };
  } catch (error) {
    // Only this image, by its own reference: another sandbox of that name is never touched.
    await engine.docker
      .getImage(reference)
      .remove()
      .catch(() => {});
    throw error;
  }
}

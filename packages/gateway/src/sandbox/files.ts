import type Docker from 'dockerode';
import type { SandboxUser } from './access.js';
import { SandboxError } from './errors.js';
import { type ExploreResult, exploreTree, type ReadFileResult, readFileBytes } from './explore.js';
import type { ExploreRequest, ReadFileRequest, WriteFileRequest } from './explore-args.js';
import { tmpfsMounts, tmpfsOf, tmpfsRefusal } from './fs-view.js';
import { checkWayTo } from './path-walk.js';
import type { Sandboxes } from './sandboxes.js';
import { numericUser, writeFile } from './write.js';

/** The engine's archive of one path in a sandbox, or a refusal saying the path is not there. */
async function archiveOf(container: Docker.Container, path: string): Promise<NodeJS.ReadableStream> {
  try {
    return await container.getArchive({ path });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404)
      throw new SandboxError(
        'SANDBOX_PATH',
        `there is no ${path} in the sandbox (or a link on its way leads nowhere). See what there is with sandbox_explore.`,
        { cause: error },
      );
    throw new SandboxError('SANDBOX_RUN', `the engine could not read ${path}: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/** sandbox_explore: a sandbox of this gateway, found by label and owner, then its archive. */
export async function exploreIn(sandboxes: Sandboxes, request: ExploreRequest): Promise<ExploreResult> {
  const { container } = await sandboxes.located(request.name);
  const info = await container.inspect();
  const tmpfs = tmpfsOf(request.path, info);
  if (tmpfs) throw new SandboxError('SANDBOX_PATH', tmpfsRefusal(request.path, tmpfs));
  const user = sandboxUser(info);
  await checkWayTo(container, request.path, user);
  const hidden = tmpfsMounts(info).filter(
    (mount) => request.path === '/' || mount.startsWith(`${request.path}/`),
  );
  return exploreTree(await archiveOf(container, request.path), request, { hidden, user });
}

export async function readFileIn(sandboxes: Sandboxes, request: ReadFileRequest): Promise<ReadFileResult> {
  const { container } = await sandboxes.located(request.name);
  const info = await container.inspect();
  const tmpfs = tmpfsOf(request.path, info);
  if (tmpfs) throw new SandboxError('SANDBOX_PATH', tmpfsRefusal(request.path, tmpfs));
  const user = sandboxUser(info);
  await checkWayTo(container, request.path, user);
  return readFileBytes(await archiveOf(container, request.path), request, { user });
}

/** The sandbox's numeric user, whose permissions the tools keep to. */
function sandboxUser(info: Docker.ContainerInspectInfo): SandboxUser {
  const user = numericUser(info.Config.User);
  if (!user)
    throw new SandboxError(
      'SANDBOX_RUN',
      `the sandbox runs as "${info.Config.User}", not a numeric user, so what it may read is unknown; nothing was read.`,
    );
  return user;
}

export async function writeFileIn(sandboxes: Sandboxes, request: WriteFileRequest) {
  const { container } = await sandboxes.located(request.name);
  return writeFile(container, request);
}

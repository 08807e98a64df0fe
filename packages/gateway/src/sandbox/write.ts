import type Docker from 'dockerode';
import { mayAccess, ownership, type SandboxUser, SEARCH, WRITE } from './access.js';
import { SandboxError } from './errors.js';
import type { WriteFileRequest } from './explore-args.js';
import { bindMountOf, kernelPathOf, readOnlyMountOf, tmpfsOf, tmpfsRefusal } from './fs-view.js';
import { entryOf, realDirectory } from './path-walk.js';
import { oneFileTar } from './tar-write.js';

export { readOnlyMountOf };

/** Directories a write may make on its way, at most (a deeper path is refused). */
export const MAX_NEW_DIRECTORIES = 32;

/** The numeric user a sandbox runs as ("65532:65532", "1000"), or undefined for a user name. */
export function numericUser(user: string | undefined): { uid: number; gid: number } | undefined {
  const match = /^(\d{1,10})(?::(\d{1,10}))?$/.exec(user ?? '');
  if (!match) return undefined;
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

const engineStatus = (error: unknown) => (error as { statusCode?: number }).statusCode;
const engineMessage = (error: unknown) =>
  String((error as { json?: { message?: string } }).json?.message ?? (error as Error).message).slice(0, 500);

/** Go's os.ModeDir and os.ModeSymlink, as the engine's path stat reports them. */
const MODE_DIR = 2 ** 31;
const MODE_SYMLINK = 2 ** 27;

/** The engine's stat of a path in the container (`HEAD /containers/{id}/archive`), or undefined when it is not there. */
async function pathStat(container: Docker.Container, path: string): Promise<{ mode: number } | undefined> {
  try {
    const response = (await container.infoArchive({ path })) as {
      headers?: Record<string, string>;
      resume?: () => void;
    };
    response.resume?.();
    const header = response.headers?.['x-docker-container-path-stat'];
    const stat = header
      ? (JSON.parse(Buffer.from(header, 'base64').toString('utf8')) as { mode?: number })
      : {};
    return { mode: typeof stat.mode === 'number' ? stat.mode : MODE_DIR };
  } catch (error) {
    if (engineStatus(error) === 404) return undefined;
    throw error;
  }
}

/**
 * The deepest directory on the way to `directory` that exists, and the ones below it to make
 * (outermost first). A link on the way counts as existing: the engine resolves it within the
 * container and checks where it lands.
 */
async function existingAncestor(
  container: Docker.Container,
  directory: string,
): Promise<{ at: string; missing: string[] }> {
  const missing: string[] = [];
  let at = directory;
  for (;;) {
    const stat = at === '/' ? { mode: MODE_DIR } : await pathStat(container, at);
    if (stat) {
      if ((stat.mode & MODE_DIR) === 0 && (stat.mode & MODE_SYMLINK) === 0)
        throw new SandboxError(
          'SANDBOX_PATH',
          `${at} is a file in the sandbox, not a directory; nothing was written.`,
        );
      return { at, missing };
    }
    if (missing.length >= MAX_NEW_DIRECTORIES)
      throw new SandboxError(
        'SANDBOX_PATH',
        `more than ${MAX_NEW_DIRECTORIES} directories on the way to ${directory} do not exist; make a shorter path.`,
      );
    const slash = at.lastIndexOf('/');
    missing.unshift(at.slice(slash + 1));
    at = slash === 0 ? '/' : at.slice(0, slash);
  }
}

/**
 * In a directory mounted from the person's machine, the engine (root) could replace a file the
 * sandbox's user may not write, or add one to a directory it may not write: refused, so a
 * writable mount gives the assistant exactly what it gives the sandbox's processes.
 */
async function checkMountWrite(
  container: Docker.Container,
  path: string,
  directory: string,
  user: SandboxUser,
): Promise<void> {
  const existing = await entryOf(container, path);
  if (existing && !mayAccess(existing, user, WRITE))
    throw new SandboxError(
      'SANDBOX_PATH',
      `${path} is in a mounted directory and the sandbox's user may not write it (${ownership(existing)}); nothing was written.`,
    );
  const parent = await entryOf(container, directory);
  // The engine's archive of a link is the link, not where it leads: whose that directory is, and
  // so whether the sandbox's user may write in it, is not known here. Named directly, it is.
  if (parent?.type === 'symlink')
    throw new SandboxError(
      'SANDBOX_PATH',
      `${directory} is a link in the sandbox, and where it leads may be a mounted directory; nothing was written. Name the directory it leads to (sandbox_explore shows it).`,
    );
  if (parent && !mayAccess(parent, user, WRITE | SEARCH))
    throw new SandboxError(
      'SANDBOX_PATH',
      `${directory} is in a mounted directory and the sandbox's user may not write in it (${ownership(parent)}); nothing was written.`,
    );
}

/**
 * sandbox_write_file: one file, through the engine's archive API (`PUT /containers/{id}/archive`)
 * with a tar made here, so nothing runs in the sandbox and a stopped one takes writes too. The
 * file, and any directory made on its way (0755), belong to the user the sandbox runs as. A path
 * in a read-only mount, a tmpfs or a kernel file system is refused here, and the engine refuses a
 * read-only mount again where a link inside the sandbox leads there (it resolves the directory
 * within the container, then checks the mount it lands in).
 */
export async function writeFile(
  container: Docker.Container,
  request: WriteFileRequest,
): Promise<{ path: string; bytes: number; mode: string; owner: string; made_directories?: string[] }> {
  const info = await container.inspect();
  const kernel = kernelPathOf(request.path);
  if (kernel)
    throw new SandboxError(
      'SANDBOX_PATH',
      `${request.path} is in ${kernel}, the kernel's; write somewhere else (such as /work).`,
    );
  const tmpfs = tmpfsOf(request.path, info);
  if (tmpfs) throw new SandboxError('SANDBOX_PATH', tmpfsRefusal(request.path, tmpfs));
  const readOnly = readOnlyMountOf(request.path, info.Mounts ?? []);
  if (readOnly)
    throw new SandboxError(
      'SANDBOX_PATH',
      `${request.path} is in ${readOnly}, which is mounted read-only; write somewhere else (such as /work), or ask the person for a writable --allow-mount.`,
    );
  const user = numericUser(info.Config.User);
  if (!user)
    throw new SandboxError(
      'SANDBOX_RUN',
      `the sandbox runs as "${info.Config.User}", not a numeric user, so the new file's owner is unknown; nothing was written.`,
    );
  const slash = request.path.lastIndexOf('/');
  const directory = slash === 0 ? '/' : request.path.slice(0, slash);
  const { at, missing } = await existingAncestor(container, directory);
  // The engine follows links in the sandbox on the way (`/work/m -> /workspace/out`): where the
  // sandbox has mounts, the directory written into is judged where it really is.
  const mounts = info.Mounts ?? [];
  const real = mounts.some((m) => m.Type === 'bind') ? await realDirectory(container, at) : at;
  const realPath = `${real === '/' ? '' : real}/${[...missing, request.path.slice(slash + 1)].join('/')}`;
  const readOnlyThere = real === at ? undefined : readOnlyMountOf(realPath, mounts);
  if (readOnlyThere)
    throw new SandboxError(
      'SANDBOX_PATH',
      `${request.path} leads by a link in the sandbox to ${realPath}, in ${readOnlyThere}, which is mounted read-only; nothing was written.`,
    );
  if (bindMountOf(realPath, mounts)) await checkMountWrite(container, realPath, real, user);
  const prefix = missing.join('/');
  const tar = oneFileTar({
    name: prefix ? `${prefix}/${request.path.slice(slash + 1)}` : request.path.slice(slash + 1),
    directories: missing.map((_, i) => missing.slice(0, i + 1).join('/')),
    dirMode: 0o755,
    content: request.content,
    mode: request.mode,
    uid: user.uid,
    gid: user.gid,
    mtime: Date.now() / 1000,
  });
  try {
    await container.putArchive(tar, { path: at, noOverwriteDirNonDir: 'true' });
  } catch (error) {
    const status = engineStatus(error);
    if (status === 404)
      throw new SandboxError(
        'SANDBOX_PATH',
        `the directory ${at} went away in the sandbox while writing; nothing was written. Try again.`,
        { cause: error },
      );
    if (status !== undefined && status >= 400 && status < 500)
      throw new SandboxError(
        'SANDBOX_PATH',
        `the engine refused to write ${request.path}: ${engineMessage(error)}. Nothing was written.`,
        { cause: error },
      );
    throw new SandboxError('SANDBOX_RUN', `writing ${request.path} failed: ${engineMessage(error)}`, {
      cause: error,
    });
  }
  return {
    path: request.path,
    bytes: request.content.length,
    mode: request.mode.toString(8).padStart(4, '0'),
    owner: `${user.uid}:${user.gid}`,
    ...(missing.length > 0
      ? {
          made_directories: missing.map(
            (_, i) => `${at === '/' ? '' : at}/${missing.slice(0, i + 1).join('/')}`,
          ),
        }
      : {}),
  };
}

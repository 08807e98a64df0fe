import type Docker from 'dockerode';
import { SandboxError } from './errors.js';
import type { WriteFileRequest } from './explore-args.js';
import { oneFileTar } from './tar-write.js';

/** The numeric user a sandbox runs as ("65532:65532", "1000"), or undefined for a user name. */
export function numericUser(user: string | undefined): { uid: number; gid: number } | undefined {
  const match = /^(\d{1,10})(?::(\d{1,10}))?$/.exec(user ?? '');
  if (!match) return undefined;
  const uid = Number(match[1]);
  return { uid, gid: match[2] === undefined ? uid : Number(match[2]) };
}

/** The read-only mount `path` lies in (or is), if any: its destination. */
export function readOnlyMountOf(
  path: string,
  mounts: readonly { Destination: string; RW: boolean }[],
): string | undefined {
  return mounts.find(
    (m) => !m.RW && (path === m.Destination || path.startsWith(`${m.Destination.replace(/\/$/, '')}/`)),
  )?.Destination;
}

const engineStatus = (error: unknown) => (error as { statusCode?: number }).statusCode;
const engineMessage = (error: unknown) =>
  String((error as { json?: { message?: string } }).json?.message ?? (error as Error).message).slice(0, 500);

/**
 * sandbox_write_file: one file, through the engine's archive API (`PUT /containers/{id}/archive`)
 * with a tar made here, so nothing runs in the sandbox and a stopped one takes writes too. The
 * file belongs to the user the sandbox runs as. A path in a read-only mount is refused here, and
 * the engine refuses it again where a link inside the sandbox leads there (it resolves the
 * directory within the container, then checks the mount it lands in).
 */
export async function writeFile(
  container: Docker.Container,
  request: WriteFileRequest,
): Promise<{ path: string; bytes: number; mode: string; owner: string }> {
  const info = await container.inspect();
  const readOnly = readOnlyMountOf(request.path, info.Mounts ?? []);
  if (readOnly)
    throw new SandboxError(
      'SANDBOX_PATH',
      `${request.path} is in ${readOnly}, which is mounted read-only; write somewhere else (such as /tmp), or ask the person for a writable --allow-mount.`,
    );
  const user = numericUser(info.Config.User);
  if (!user)
    throw new SandboxError(
      'SANDBOX_RUN',
      `the sandbox runs as "${info.Config.User}", not a numeric user, so the new file's owner is unknown; nothing was written.`,
    );
  const slash = request.path.lastIndexOf('/');
  const directory = slash === 0 ? '/' : request.path.slice(0, slash);
  const tar = oneFileTar({
    name: request.path.slice(slash + 1),
    content: request.content,
    mode: request.mode,
    uid: user.uid,
    gid: user.gid,
    mtime: Date.now() / 1000,
  });
  try {
    await container.putArchive(tar, { path: directory, noOverwriteDirNonDir: 'true' });
  } catch (error) {
    const status = engineStatus(error);
    if (status === 404)
      throw new SandboxError(
        'SANDBOX_PATH',
        `the directory ${directory} does not exist in the sandbox; make it first (for example with sandbox_run), then write the file.`,
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
  };
}

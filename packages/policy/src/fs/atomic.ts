import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, unlink } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FsError } from './errors.js';

/** Options for {@link writeFileAtomic}. */
export interface WriteFileAtomicOptions {
  /** Mode of the written file. Default `0o600`: ringfence files hold pins, tokens and state. */
  mode?: number;
  /** Mode of directories created on the way. Default `0o700`. */
  dirMode?: number;
}

/**
 * Replaces `path` with `data` so that a reader sees either the old file or the new one, never a
 * torn write, even if the process dies halfway: the data goes to a temporary file in the same
 * directory (same filesystem, so the rename is atomic), is fsynced, then renamed over `path`,
 * and the directory is fsynced so the rename itself survives a crash.
 *
 * This does not serialise two writers; wrap read-modify-write cycles in {@link withFileLock}.
 *
 * @throws {FsError} `WRITE_FAILED` naming the path and the system error.
 */
export async function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  const dir = dirname(path);
  const temp = join(dir, `.${basename(path)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await mkdir(dir, { recursive: true, mode: options.dirMode ?? 0o700 });
    const handle = await open(temp, 'wx', mode);
    try {
      await handle.writeFile(data);
      // The umask may have narrowed the mode given to open(); set it exactly.
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, path);
  } catch (error) {
    await unlink(temp).catch(() => {});
    throw new FsError(
      'WRITE_FAILED',
      `Could not write ${path}: ${(error as Error).message}. Check that the directory exists and is writable by you.`,
      { cause: error },
    );
  }
  await syncDirectory(dir);
}

/**
 * Creates `dir` (and missing parents) with `mode` (default 0700), the way RINGFENCE_HOME must be.
 * An existing directory is left as it is: changing the mode of a directory someone pointed us at
 * (say `RINGFENCE_HOME=/tmp`) would do more harm than good; `ringfence doctor` reports it instead.
 */
export async function ensurePrivateDirectory(dir: string, mode = 0o700): Promise<void> {
  const created = await mkdir(dir, { recursive: true, mode });
  // The umask may have narrowed the mode of the directory we just made; set it exactly.
  if (created !== undefined) await chmod(dir, mode);
}

async function syncDirectory(dir: string): Promise<void> {
  // Not every platform lets a directory be opened for fsync; the data is already safe there.
  try {
    const handle = await open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    /* best effort */
  }
}

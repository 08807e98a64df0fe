import { randomBytes } from 'node:crypto';
import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { FsError } from './errors.js';

/** Options for {@link withFileLock}. */
export interface FileLockOptions {
  /** How long to wait for another holder before giving up. Default 10 s. */
  timeoutMs?: number;
  /**
   * A lock file with no readable owner (its writer died between creating and filling it) is
   * considered abandoned after this long. Default 5 s.
   */
  staleMs?: number;
}

interface LockOwner {
  pid: number;
  nonce: string;
}

/**
 * Runs `fn` while holding an exclusive lock on `path` (the lock is the file `path + '.lock'`,
 * created with `O_EXCL`, so exactly one process can hold it).
 *
 * A lock left behind by a process that no longer runs is recovered: its pid is probed, and the
 * file is moved aside by rename (atomic, so two recoverers cannot both win) before it is removed.
 * Waiting is bounded by `timeoutMs`; then an error names the lock file.
 *
 * @throws {FsError} `LOCK_TIMEOUT` when the lock stays held by a live process.
 */
export async function withFileLock<T>(
  path: string,
  fn: () => Promise<T> | T,
  options: FileLockOptions = {},
): Promise<T> {
  const lockPath = `${path}.lock`;
  const owner: LockOwner = { pid: process.pid, nonce: randomBytes(12).toString('hex') };
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const staleMs = options.staleMs ?? 5_000;
  let delay = 5;
  for (;;) {
    if (await tryCreate(lockPath, owner)) break;
    await recoverIfStale(lockPath, staleMs);
    if (Date.now() > deadline) {
      throw new FsError(
        'LOCK_TIMEOUT',
        `Timed out waiting for the lock ${lockPath}. Another ringfence process holds it; if none is running, delete that file and retry.`,
      );
    }
    await sleep(delay + Math.random() * delay);
    delay = Math.min(delay * 2, 100);
  }
  try {
    return await fn();
  } finally {
    await release(lockPath, owner);
  }
}

async function tryCreate(lockPath: string, owner: LockOwner): Promise<boolean> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(lockPath, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
  try {
    await handle.writeFile(JSON.stringify(owner));
  } finally {
    await handle.close();
  }
  return true;
}

async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    const parsed = JSON.parse(await readFile(lockPath, 'utf8')) as Partial<LockOwner>;
    if (typeof parsed.pid === 'number' && typeof parsed.nonce === 'string') {
      return { pid: parsed.pid, nonce: parsed.nonce };
    }
  } catch {
    /* missing, empty or half-written */
  }
  return undefined;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM means the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function recoverIfStale(lockPath: string, staleMs: number): Promise<void> {
  const owner = await readOwner(lockPath);
  if (owner) {
    if (isAlive(owner.pid)) return;
  } else {
    const info = await stat(lockPath).catch(() => undefined);
    if (!info || Date.now() - info.mtimeMs < staleMs) return;
  }
  const aside = `${lockPath}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    await rename(lockPath, aside);
  } catch {
    return; // someone else recovered or released it first
  }
  // Between our read and our rename a live process may have taken a fresh lock; if what we moved
  // aside is not the stale lock we judged, put it back (link fails if the path is taken again).
  const moved = await readOwner(aside);
  const movedInfo = await stat(aside).catch(() => undefined);
  const sameAsJudged = owner
    ? moved?.nonce === owner.nonce && moved.pid === owner.pid
    : moved === undefined && movedInfo !== undefined && Date.now() - movedInfo.mtimeMs >= staleMs;
  if (!sameAsJudged) await link(aside, lockPath).catch(() => {});
  await unlink(aside).catch(() => {});
}

async function release(lockPath: string, owner: LockOwner): Promise<void> {
  const current = await readOwner(lockPath);
  if (current?.nonce === owner.nonce) await unlink(lockPath).catch(() => {});
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

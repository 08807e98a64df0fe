import { randomBytes } from 'node:crypto';
import { constants, fstatSync, type Stats } from 'node:fs';
import { type FileHandle, link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
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

/** A lock this process holds: the open lock file and how many bytes its owner line takes. */
interface Held {
  readonly lockPath: string;
  readonly owner: LockOwner;
  readonly handle: FileHandle;
  readonly ownerBytes: number;
}

/** The longest a waiter sleeps between tries; short, because a holder hands over on request. */
const MAX_POLL_MS = 10;

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
  const held = await acquire(`${path}.lock`, options);
  try {
    return await fn();
  } finally {
    await release(held);
  }
}

/** Options for {@link FileLease}. */
export interface FileLeaseOptions extends FileLockOptions {
  /** An idle holder keeps the lock this long before letting it go; 0: not at all. Default 25 ms. */
  lingerMs?: number;
}

/**
 * The lock of {@link withFileLock} (same file, same protocol, so both exclude each other), kept
 * between runs instead of being taken and dropped around each one: a busy writer pays for the lock
 * once, not per write. It is let go after `lingerMs` without a run, at `close()`, and, for
 * fairness, after the first run that finds another process waiting: a waiter says so by appending
 * a line to the lock file, which the holder sees with one `fstat` per run. A holder that handed
 * over waits a moment before trying again, so the waiter really gets its turn.
 */
export class FileLease {
  private readonly lockPath: string;
  private readonly options: FileLeaseOptions;
  private held: Held | undefined;
  private tail: Promise<unknown> = Promise.resolve();
  private lingerTimer: NodeJS.Timeout | undefined;
  private yieldedAt = 0;

  constructor(path: string, options: FileLeaseOptions = {}) {
    this.lockPath = `${path}.lock`;
    this.options = options;
  }

  /** Runs `fn` holding the lock; runs in this process are serialised. */
  run<T>(fn: () => Promise<T> | T): Promise<T> {
    const result = this.tail.then(() => this.runHeld(fn));
    this.tail = result.catch(() => {});
    return result;
  }

  /** Lets the lock go now (waiting for a run in progress). */
  async close(): Promise<void> {
    await this.tail;
    this.stopLinger();
    await this.letGo();
  }

  private async runHeld<T>(fn: () => Promise<T> | T): Promise<T> {
    this.stopLinger();
    // No fstat here: afterRun checked the file at the end of the last run, and only a hand
    // deleting it could change that while we hold it. That is noticed at the end of this run
    // (then it is let go); deleting a held lock file is never safe, lease or not.
    if (!this.held) {
      // Longer than a waiter's longest poll, so the one we handed over to is in before we retry.
      const sinceYield = Date.now() - this.yieldedAt;
      if (sinceYield < MAX_POLL_MS * 3) await sleep(MAX_POLL_MS * 3 - sinceYield);
      this.held = await acquire(this.lockPath, this.options);
    }
    try {
      return await fn();
    } finally {
      await this.afterRun();
    }
  }

  private async afterRun(): Promise<void> {
    const held = this.held;
    if (!held) return;
    // Sync: an fstat of a local lock file is answered from the inode cache, and the async form's
    // thread-pool round trip costs more CPU than the call itself, once per audit write.
    let info: Stats | undefined;
    try {
      info = fstatSync(held.handle.fd);
    } catch {
      info = undefined;
    }
    const linger = this.options.lingerMs ?? 25;
    if (linger > 0 && info && info.nlink > 0 && info.size <= held.ownerBytes) {
      this.lingerTimer = setTimeout(() => {
        this.lingerTimer = undefined;
        this.tail = this.tail.then(() => this.letGo());
      }, linger);
      this.lingerTimer.unref();
      return;
    }
    if (info && info.size > held.ownerBytes) this.yieldedAt = Date.now();
    await this.letGo();
  }

  private async letGo(): Promise<void> {
    const held = this.held;
    this.held = undefined;
    if (held) await release(held);
  }

  private stopLinger(): void {
    if (this.lingerTimer) clearTimeout(this.lingerTimer);
    this.lingerTimer = undefined;
  }
}

async function acquire(lockPath: string, options: FileLockOptions): Promise<Held> {
  const owner: LockOwner = { pid: process.pid, nonce: randomBytes(12).toString('hex') };
  const deadline = Date.now() + (options.timeoutMs ?? 10_000);
  const staleMs = options.staleMs ?? 5_000;
  const asked = new Set<string>();
  let delay = 1;
  for (;;) {
    const held = await tryCreate(lockPath, owner);
    if (held) return held;
    const holder = await recoverIfStale(lockPath, staleMs);
    if (holder && !asked.has(holder.nonce)) {
      asked.add(holder.nonce);
      await askToHandOver(lockPath);
    }
    if (Date.now() > deadline) {
      throw new FsError(
        'LOCK_TIMEOUT',
        `Timed out waiting for the lock ${lockPath}. Another ringfence process holds it; if none is running, delete that file and retry.`,
      );
    }
    await sleep(delay / 2 + (Math.random() * delay) / 2);
    delay = Math.min(delay * 2, MAX_POLL_MS);
  }
}

async function tryCreate(lockPath: string, owner: LockOwner): Promise<Held | undefined> {
  let handle: FileHandle;
  try {
    handle = await open(lockPath, 'wx', 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
  const line = Buffer.from(`${JSON.stringify(owner)}\n`);
  try {
    await handle.write(line, 0, line.length, 0);
  } catch (error) {
    // The file is ours (O_EXCL) but names no owner, so every waiter would have to sit out the
    // stale window (ENOSPC does this): take it back at once.
    await handle.close().catch(() => {});
    await unlink(lockPath).catch(() => {});
    throw error;
  }
  return { lockPath, owner, handle, ownerBytes: line.length };
}

/**
 * Tells the current holder someone waits (a lease holder then hands over after its current run):
 * one line appended to the lock file, once per holding (the caller keys it by the owner's nonce;
 * an inode number is reused too soon). Best effort: a waiter that cannot write still gets the
 * lock when the holder goes idle.
 */
async function askToHandOver(lockPath: string): Promise<void> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(lockPath, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
    // Led by a newline, so the owner's line stays whole even if it was written without one.
    await handle.write(`\n${process.pid}\n`);
  } catch {
    /* gone already, or not writable: nothing to ask */
  } finally {
    await handle?.close().catch(() => {});
  }
}

async function readOwner(lockPath: string): Promise<LockOwner | undefined> {
  try {
    const text = await readFile(lockPath, 'utf8');
    // The first line is the owner's; waiters append theirs after it.
    const parsed = JSON.parse(text.split('\n', 1)[0]!) as Partial<LockOwner>;
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
/** Recovers the lock if its holder is gone; returns the live holder it found, if any. */
async function recoverIfStale(lockPath: string, staleMs: number): Promise<LockOwner | undefined> {
  const owner = await readOwner(lockPath);
  if (owner) {
    if (isAlive(owner.pid)) return owner;
  } else {
    const info = await stat(lockPath).catch(() => undefined);
    if (!info || Date.now() - info.mtimeMs < staleMs) return undefined;
  }
  const aside = `${lockPath}.stale.${process.pid}.${randomBytes(6).toString('hex')}`;
  try {
    await rename(lockPath, aside);
  } catch {
    return undefined; // someone else recovered or released it first
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
  return undefined;
}

async function release(held: Held): Promise<void> {
  // Only remove the file if the path still names the one we created (by inode: cheaper than
  // reading the owner back, and equally exact).
  const [mine, there] = await Promise.all([
    held.handle.stat().catch(() => undefined),
    stat(held.lockPath).catch(() => undefined),
  ]);
  if (mine && there && mine.ino === there.ino && mine.dev === there.dev)
    await unlink(held.lockPath).catch(() => {});
  await held.handle.close().catch(() => {});
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

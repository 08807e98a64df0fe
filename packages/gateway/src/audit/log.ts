import fs, { constants, fstatSync, statSync } from 'node:fs';
import { type FileHandle, mkdir, open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { FileLease, isRingfenceError } from '@ringfence/policy';
import { resolveHome } from '../home/home.js';
import { AuditError } from './errors.js';
import {
  checkEntryShape,
  entryLine,
  hashLine,
  type PreparedEntry,
  prepareEntry,
  serializeEntry,
} from './format.js';
import { LineTooLongError, segmentsFromEnd } from './read.js';
import { AUDIT_FILE_NAME, AUDIT_GENESIS, type AuditDigest, type AuditInput } from './types.js';

export interface AuditLogOptions {
  /** The gateway session every entry names (unless an input overrides it). */
  readonly session: string;
  /**
   * The sandbox the assistant works in (`mcp serve --sandbox NAME`), written as `sandbox` in
   * every entry this log appends. Absent: no such field.
   */
  readonly sandbox?: string;
  /** Log file; default `audit.jsonl` in {@link resolveHome}. */
  readonly path?: string;
  /** How long to wait for another process's append before failing. Default 10 s. */
  readonly lockTimeoutMs?: number;
  /** How long an idle writer keeps the lock (FileLease); 0 lets it go after every write. Default 25 ms. */
  readonly lockLingerMs?: number;
  /** Entries per write+fsync when appends queue up. Default 256. */
  readonly maxBatch?: number;
  readonly now?: () => Date;
  /** One-line notices for stderr: the log was moved away, replaced or shortened under us. */
  readonly onNotice?: (message: string) => void;
  /** Told each write's time (`mcp serve --metrics`): never holds a write up. */
  readonly timings?: AuditTimings;
}

/** Each write of the log, timed: the write and its fdatasync together, and the fdatasync alone. */
export interface AuditTimings {
  written(elapsedMs: number, syncMs: number, entries: number): void;
  /** A write failed (its lock, its write or its fdatasync). */
  failed(): void;
}

/** The default log path: `RINGFENCE_HOME/audit.jsonl`. */
export function defaultAuditPath(env: NodeJS.ProcessEnv = process.env): string {
  return join(resolveHome(env), AUDIT_FILE_NAME);
}

interface FileState {
  readonly handle: FileHandle;
  readonly dev: number;
  readonly ino: number;
  size: number;
  mtimeMs: number;
  seq: number;
  hash: AuditDigest;
}

interface Pending {
  readonly prepared: PreparedEntry;
  readonly resolve: (seq: number) => void;
  readonly reject: (error: unknown) => void;
  /** Nobody waits on it (a result after its reply): kept for a later write if this one fails. */
  readonly deferred: boolean;
}

/** Deferred entries kept for a retry after failed writes; past this they are given up. */
const MAX_HELD_BACK = 1024;

/** The longest a deferred entry (`append(…, { defer: true })`) waits for company. */
const DEFER_MS = 50;

const OPEN_FLAGS = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW;

/**
 * The append side of `audit.jsonl`. Appends are queued in this process and, across processes,
 * serialised by a lock file held around "check the tail, write, fsync", so two gateways sharing a
 * home never fork the chain. The lock is a lease (see FileLease): taken once while appends keep
 * coming, handed to another process that asks, so a busy gateway pays no lock file per append. Each append is one `write(2)` on an `O_APPEND` descriptor followed by
 * `fdatasync`; the chain head is cached and the tail re-read only when the file changed under us.
 */
export class AuditLog {
  readonly path: string;
  private readonly session: string;
  private readonly options: AuditLogOptions;
  private file: FileState | undefined;
  private queue: Pending[] = [];
  private draining: Promise<void> | undefined;
  private closed = false;
  private deferTimer: NodeJS.Timeout | undefined;
  private readonly lease: FileLease;
  private retry: Pending[] = [];
  private heldBack = 0;

  private constructor(path: string, options: AuditLogOptions) {
    this.path = path;
    this.session = options.session;
    this.options = options;
    this.lease = new FileLease(path, { timeoutMs: options.lockTimeoutMs, lingerMs: options.lockLingerMs });
  }

  /**
   * Opens (creating with 0600, its directory with 0700) and reads the chain head.
   *
   * @throws {AuditError} `AUDIT_TORN_TAIL` / `AUDIT_TAIL_CORRUPT` when the log cannot be
   *   continued, `AUDIT_NOT_A_FILE`, `AUDIT_WRITE_FAILED`, `AUDIT_LOCK_TIMEOUT`.
   */
  static async open(options: AuditLogOptions): Promise<AuditLog> {
    const log = new AuditLog(options.path ?? defaultAuditPath(), options);
    try {
      await mkdir(dirname(log.path), { recursive: true, mode: 0o700 });
    } catch (error) {
      throw log.writeFailure(error);
    }
    await log.locked(() => log.refresh());
    return log;
  }

  /** seq and hash of the last line this process has seen (0 and the genesis for an empty log). */
  get head(): { readonly seq: number; readonly hash: AuditDigest } {
    return { seq: this.file?.seq ?? 0, hash: this.file?.hash ?? AUDIT_GENESIS };
  }

  /**
   * Appends one entry and resolves with its seq once it is fsynced. Raw arguments and results in
   * the input are reduced to digests before anything is queued. With `defer`, the entry waits (at
   * most DEFER_MS) to share the lock, write and fsync of the next append: for entries nobody
   * waits on, such as a result after its reply.
   *
   * @throws {AuditError} `AUDIT_INVALID_ENTRY` (only this entry is refused), `AUDIT_TORN_TAIL`,
   *   `AUDIT_TAIL_CORRUPT`, `AUDIT_NOT_A_FILE`, `AUDIT_WRITE_FAILED`, `AUDIT_LOCK_TIMEOUT`,
   *   `AUDIT_CLOSED`.
   */
  append(input: AuditInput, options: { defer?: boolean } = {}): Promise<number> {
    if (this.closed) {
      return Promise.reject(
        new AuditError('AUDIT_CLOSED', 'The audit log was closed; nothing more can be written.'),
      );
    }
    // Digests are computed here, before the lock, so hashing a large result never holds up
    // another process's append.
    let prepared: PreparedEntry;
    try {
      prepared = prepareEntry(input, this.session, this.options.sandbox);
    } catch (error) {
      return Promise.reject(error);
    }
    return new Promise<number>((resolve, reject) => {
      this.queue.push({ prepared, resolve, reject, deferred: options.defer === true });
      if (options.defer && !this.draining) {
        this.startDeferTimer();
        return;
      }
      this.stopDeferTimer();
      this.draining ??= this.drain();
    });
  }

  /**
   * A deferred entry rides along with the next append (one lock, one write, one fsync for both),
   * or is written on its own after DEFER_MS: the order of entries never changes.
   */
  private startDeferTimer(): void {
    this.deferTimer ??= setTimeout(() => {
      this.deferTimer = undefined;
      if (this.queue.length > 0) this.draining ??= this.drain();
    }, DEFER_MS);
  }

  private stopDeferTimer(): void {
    if (this.deferTimer) clearTimeout(this.deferTimer);
    this.deferTimer = undefined;
  }

  /** Waits for queued entries, lets the lock go, then closes the file. Later appends are refused. */
  async close(): Promise<void> {
    this.closed = true;
    this.stopDeferTimer();
    // A last try for results held back by a failed write; failing now, they are given up.
    this.queue.unshift(...this.retry.splice(0));
    this.heldBack = 0;
    if (this.queue.length > 0) this.draining ??= this.drain();
    while (this.draining) await this.draining;
    await this.lease.close();
    await this.file?.handle.close();
    this.file = undefined;
  }

  // Only called with a non-empty queue, so the first await comes before `finally` can run.
  private async drain(): Promise<void> {
    try {
      // Later appends wait their turn; each round takes everything queued so far (group commit).
      for (let round = 0; this.queue.length > 0; round++) {
        // Entries nobody waits on that came during a round do not make a round (a write and an
        // fsync) of their own: they wait for the next append as if they had come between rounds.
        if (round > 0 && !this.closed && !this.queue.some((item) => !item.deferred)) {
          this.startDeferTimer();
          break;
        }
        const batch = this.queue.splice(0, this.options.maxBatch ?? 256);
        try {
          await this.locked(() => this.writeBatch(batch));
        } catch (error) {
          this.options.timings?.failed();
          this.failBatch(batch, error);
        }
      }
    } finally {
      // Cleared in the same turn as the last empty-queue check: an append arriving after it
      // always starts a new drain instead of waiting on one that is already over.
      this.draining = undefined;
    }
  }

  /**
   * A failed write refuses the entries someone waits on (their calls are not forwarded). Deferred
   * entries (results after their reply) go back to wait for the next write, which records them
   * once writing works again; `audit verify` reports the calls whose result never made it.
   */
  private failBatch(batch: Pending[], error: unknown): void {
    const kept: Pending[] = [];
    for (const item of batch) {
      if (item.deferred && !this.closed && this.heldBack + kept.length < MAX_HELD_BACK) kept.push(item);
      else item.reject(error);
    }
    if (kept.length === 0) return;
    this.heldBack += kept.length;
    this.retry.push(...kept);
    this.options.onNotice?.(
      `ringfence: audit: ${kept.length} result entr${kept.length === 1 ? 'y' : 'ies'} could not be written (${(error as Error).message}); they will be written with the next entry that succeeds.`,
    );
  }

  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await this.lease.run(fn);
    } catch (error) {
      if (isRingfenceError(error) && error.code === 'LOCK_TIMEOUT') {
        throw new AuditError(
          'AUDIT_LOCK_TIMEOUT',
          `Another process held the audit log lock ${this.path}.lock for too long. If no ringfence process is running, delete that file.`,
          { cause: error },
        );
      }
      // Taking the lock itself can fail the way a write does (a full disk, a read-only home).
      throw this.writeFailure(error, 'lock');
    }
  }

  private async writeBatch(fresh: Pending[]): Promise<void> {
    const file = await this.refresh();
    // Entries held back by an earlier failure go first: they were appended before these.
    const batch = this.retry.length > 0 ? [...this.retry.splice(0), ...fresh] : fresh;
    this.heldBack = this.retry.length;
    const ts = (this.options.now?.() ?? new Date()).toISOString();
    let { seq, hash } = file;
    const lines: string[] = [];
    const written: { item: Pending; seq: number }[] = [];
    for (const item of batch) {
      const checked = entryLine(item.prepared, seq + 1, ts, hash);
      if (!checked.ok) {
        item.reject(
          new AuditError('AUDIT_INVALID_ENTRY', `Refusing to write a malformed entry: ${checked.message}.`),
        );
        continue;
      }
      const { line } = checked;
      lines.push(line);
      seq += 1;
      hash = hashLine(line);
      written.push({ item, seq });
    }
    if (lines.length === 0) return;
    const data = Buffer.from(`${lines.join('\n')}\n`, 'utf8');
    const timings = this.options.timings;
    const began = timings ? performance.now() : 0;
    let synced = 0;
    try {
      // The write is sync: it only copies into the page cache, and the async form costs a
      // thread-pool round trip (a wake of the event loop) that every forwarded call waited for
      // before its fdatasync could even start. Through `fs.` so tests can make it fail.
      const bytesWritten = fs.writeSync(file.handle.fd, data, 0, data.length, null);
      if (bytesWritten !== data.length)
        throw new AuditError('AUDIT_WRITE_FAILED', `short write (${bytesWritten} of ${data.length} bytes)`);
      // fdatasync: the bytes and the new length reach the disk; the mtime update is not worth a
      // second journal flush (it is ~40% cheaper on ext4, and every call waits for this).
      if (timings) synced = performance.now();
      await file.handle.datasync();
    } catch (error) {
      // Nothing here was acknowledged, so taking it back keeps the chain whole; if even that
      // fails, the next append finds the torn tail and refuses rather than chaining onto it.
      await file.handle.truncate(file.size).catch(() => {});
      this.forget();
      // Back into line for the next write: failBatch sees only `fresh`, and must see them all.
      const retried = batch.length - fresh.length;
      if (retried > 0) fresh.unshift(...batch.slice(0, retried));
      throw this.writeFailure(error, 'write');
    }
    // The per-write stats are sync (here and in `refresh`): metadata of a local file, answered
    // from the inode cache; the async form's thread-pool round trip costs more CPU than the call.
    if (timings) {
      const now = performance.now();
      timings.written(now - began, now - synced, written.length);
    }
    const info = fstatSync(file.handle.fd);
    Object.assign(file, { size: info.size, mtimeMs: info.mtimeMs, seq, hash });
    for (const { item, seq: entrySeq } of written) item.resolve(entrySeq);
  }

  private forget(): void {
    const file = this.file;
    this.file = undefined;
    void file?.handle.close().catch(() => {});
  }

  /** Under the lock: make sure we hold the file now at `path` and know its last line. */
  private async refresh(): Promise<FileState> {
    let current: ReturnType<typeof statSync>;
    try {
      current = statSync(this.path, { throwIfNoEntry: false });
    } catch (error) {
      throw this.writeFailure(error);
    }
    let file = this.file;
    if (file && (!current || current.ino !== file.ino || current.dev !== file.dev)) {
      this.options.onNotice?.(
        `ringfence: the audit log ${this.path} was ${current ? 'replaced' : 'moved away or deleted'}; continuing in the file now at that path.`,
      );
      this.forget();
      file = undefined;
    }
    if (file && current && current.size === file.size && current.mtimeMs === file.mtimeMs) return file;
    const opened = !file;
    if (!file) file = await this.openFile();
    let head: Awaited<ReturnType<AuditLog['readHead']>>;
    try {
      head = await this.readHead(file.handle);
    } catch (error) {
      if (opened) await file.handle.close();
      throw error;
    }
    if (this.file && head.seq < this.file.seq) {
      this.options.onNotice?.(
        `ringfence: the audit log ${this.path} lost entries after seq ${head.seq} (it ended at ${this.file.seq}); run \`ringfence audit verify\`.`,
      );
    }
    Object.assign(file, head);
    this.file = file;
    return file;
  }

  private async openFile(): Promise<FileState> {
    let handle: FileHandle;
    try {
      handle = await open(this.path, OPEN_FLAGS, 0o600);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'EISDIR') {
        throw new AuditError(
          'AUDIT_NOT_A_FILE',
          `The audit log ${this.path} is a link or a directory; move it aside so ringfence can create a regular file.`,
        );
      }
      throw this.writeFailure(error);
    }
    const info = await handle.stat();
    const uid = process.getuid?.();
    if (!info.isFile() || (uid !== undefined && info.uid !== uid)) {
      await handle.close();
      throw new AuditError(
        'AUDIT_NOT_A_FILE',
        `The audit log ${this.path} is not a regular file owned by you; move it aside so ringfence can create its own.`,
      );
    }
    // A file we did not create may be readable by others; the log names every tool the user calls.
    if ((info.mode & 0o777) !== 0o600) await handle.chmod(0o600);
    return { handle, dev: info.dev, ino: info.ino, size: 0, mtimeMs: 0, seq: 0, hash: AUDIT_GENESIS };
  }

  private async readHead(handle: FileHandle): Promise<Pick<FileState, 'size' | 'mtimeMs' | 'seq' | 'hash'>> {
    const info = await handle.stat();
    const base = { size: info.size, mtimeMs: info.mtimeMs };
    if (info.size === 0) return { ...base, seq: 0, hash: AUDIT_GENESIS };
    const segments = segmentsFromEnd(handle, info.size);
    try {
      const after = (await segments.next()).value;
      if (after && after.length > 0) {
        throw new AuditError(
          'AUDIT_TORN_TAIL',
          `The audit log ${this.path} ends in a torn line (a writer stopped mid-line). ringfence will not ` +
            'append after it. Run `ringfence audit verify`, keep the file as evidence by moving it aside ' +
            '(e.g. `mv audit.jsonl audit.jsonl.torn`), and a new log starts.',
        );
      }
      const last = (await segments.next()).value;
      const text = last?.toString('utf8') ?? '';
      let parsed: unknown;
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
      const checked = checkEntryShape(parsed);
      if (!last || !checked.ok || serializeEntry(checked.entry) !== text) {
        throw new AuditError(
          'AUDIT_TAIL_CORRUPT',
          `The last line of the audit log ${this.path} is not a valid entry${checked.ok ? '' : ` (${checked.message})`}. ` +
            'Run `ringfence audit verify`, move the file aside as evidence, and a new log starts.',
        );
      }
      return { ...base, seq: checked.entry.seq, hash: hashLine(last) };
    } catch (error) {
      if (error instanceof LineTooLongError) {
        throw new AuditError(
          'AUDIT_TAIL_CORRUPT',
          `The audit log ${this.path} does not end in a log line (${error.message}).`,
        );
      }
      throw error;
    } finally {
      await segments.return(undefined);
    }
  }

  private writeFailure(error: unknown, doing: 'open' | 'write' | 'lock' = 'open'): AuditError {
    if (error instanceof AuditError) return error;
    const code = (error as NodeJS.ErrnoException).code;
    const fix =
      code === 'ENOSPC' || code === 'EDQUOT'
        ? `Free disk space on the file system of ${dirname(this.path)}`
        : code === 'EACCES' || code === 'EPERM' || code === 'EROFS'
          ? `Make ${dirname(this.path)} writable by you (check its permissions and that it is not mounted read-only)`
          : `Check ${dirname(this.path)} (RINGFENCE_HOME) and its file system`;
    const what = doing === 'lock' ? `${this.path}.lock` : this.path;
    return new AuditError(
      'AUDIT_WRITE_FAILED',
      `Could not ${doing === 'open' ? 'open' : 'write'} the audit log ${what} (${code ?? (error as Error).message}). ${fix}; calls go through again as soon as it can be written, without a restart.`,
      { cause: error },
    );
  }
}

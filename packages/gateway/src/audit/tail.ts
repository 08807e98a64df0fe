import { type FileHandle, open, stat } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { AuditError } from './errors.js';
import { checkEntryShape } from './format.js';
import { LineSplitter, readAt, segmentsFromEnd } from './read.js';
import type { AuditEntry } from './types.js';

/** One line of the log as `audit tail` shows it. Tail reads; it does not verify the chain. */
export interface AuditLogLine {
  /** The line as stored (without its newline). */
  readonly raw: string;
  /** The entry, when the line has the documented shape. */
  readonly entry?: AuditEntry;
}

export interface AuditTail {
  readonly exists: boolean;
  readonly lines: readonly AuditLogLine[];
  /** Where the read stopped: hand it to {@link followAuditLog} to continue from there. */
  readonly position: { readonly offset: number; readonly ino: number };
}

function toLine(bytes: Buffer): AuditLogLine {
  const raw = bytes.toString('utf8');
  try {
    const shape = checkEntryShape(JSON.parse(raw));
    return shape.ok ? { raw, entry: shape.entry } : { raw };
  } catch {
    return { raw };
  }
}

/**
 * The last `count` complete lines (of `type`, when given), oldest first, read backwards from the
 * end so a long log costs only what is shown. A torn last fragment is not shown.
 */
export async function readAuditTail(
  path: string,
  options: { count: number; type?: string },
): Promise<AuditTail> {
  try {
    return await readTail(path, options);
  } catch (error) {
    throw new AuditError(
      'AUDIT_READ_FAILED',
      `Could not read ${path}: ${(error as Error).message}. Check the path and its permissions.`,
      { cause: error },
    );
  }
}

async function readTail(path: string, options: { count: number; type?: string }): Promise<AuditTail> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      return { exists: false, lines: [], position: { offset: 0, ino: 0 } };
    }
    throw error;
  }
  try {
    const info = await handle.stat();
    const found: AuditLogLine[] = [];
    let offset = info.size;
    let first = true;
    for await (const segment of segmentsFromEnd(handle, info.size)) {
      if (first) {
        // What follows the last newline is a line still being written (or torn): not shown, and
        // following resumes before it so it is shown once complete.
        first = false;
        offset = info.size - segment.length;
        continue;
      }
      if (found.length >= options.count) break;
      const line = toLine(segment);
      if (options.type === undefined || line.entry?.type === options.type) found.push(line);
    }
    return { exists: true, lines: found.reverse(), position: { offset, ino: info.ino } };
  } finally {
    await handle.close();
  }
}

export interface FollowOptions {
  readonly from: AuditTail['position'];
  readonly signal: AbortSignal;
  readonly onLine: (line: AuditLogLine) => void;
  /** The file was replaced, cut short or removed; following continues in whatever is at the path. */
  readonly onNotice?: (message: string) => void;
  readonly intervalMs?: number;
}

/**
 * Calls `onLine` for every complete line appended after `from`, until `signal` aborts. Polls the
 * file (portable, and cheap at a few checks a second); when the log is moved aside and a new one
 * starts, it follows the new file from its first line.
 */
export async function followAuditLog(path: string, options: FollowOptions): Promise<void> {
  let { offset, ino } = options.from;
  let splitter = new LineSplitter();
  const interval = options.intervalMs ?? 250;
  while (!options.signal.aborted) {
    const info = await stat(path).catch(() => undefined);
    if (info && (info.ino !== ino || info.size < offset)) {
      if (ino !== 0) {
        options.onNotice?.(
          `the audit log at ${path} was replaced or cut short; following it from its first line`,
        );
      }
      ino = info.ino;
      offset = 0;
      splitter = new LineSplitter();
    }
    if (info && info.size > offset) {
      const handle = await open(path, 'r').catch(() => undefined);
      if (handle) {
        try {
          const data = Buffer.alloc(info.size - offset);
          const got = await readAt(handle, data, offset);
          offset += got;
          for (const bytes of splitter.push(data.subarray(0, got))) options.onLine(toLine(bytes));
        } finally {
          await handle.close();
        }
      }
    }
    await sleep(interval, undefined, { signal: options.signal }).catch(() => {});
  }
}

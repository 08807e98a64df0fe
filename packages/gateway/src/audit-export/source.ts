import { type FileHandle, open } from 'node:fs/promises';
import { type AuditDigest, AuditError, hashLine } from '../audit/index.js';
import { readAt, segmentsFromEnd } from '../audit/read.js';
import { ExportError } from './errors.js';
import type { ExportPosition } from './position.js';

/** One complete line of the local log, checked to continue the chain from the line before it. */
export interface SourceLine {
  readonly raw: string;
  /** The line parsed (its shape is not checked here). */
  readonly value: Record<string, unknown>;
  readonly seq: number;
  readonly hash: AuditDigest;
  /** Byte offset just after this line's newline. */
  readonly end: number;
}

const BATCH_BYTES = 2 * 1024 * 1024 + 2;
const MAX_LINES = 512;

const diverged = (path: string, what: string) =>
  new ExportError(
    'EXPORT_LOG_DIVERGED',
    `The audit log ${path} no longer continues from what was already exported: ${what}. It was rewritten, cut back, or moved aside and started afresh. Check it with: ringfence audit verify --against <the collector's file>. If you moved it aside on purpose, export the new log from its first entry with: ringfence audit export --to <URL> --new-log`,
  );

async function openLog(path: string): Promise<FileHandle | undefined> {
  try {
    return await open(path, 'r');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new AuditError('AUDIT_READ_FAILED', `Could not read ${path}: ${(error as Error).message}.`, {
      cause: error,
    });
  }
}

function chained(
  path: string,
  bytes: Buffer,
  after: { seq: number; hash: AuditDigest },
  end: number,
): SourceLine {
  const raw = bytes.toString('utf8');
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new ExportError(
      'EXPORT_LOG_BROKEN',
      `Line ${after.seq + 1} of ${path} is not JSON: the log is broken and nothing after it is exported. Run: ringfence audit verify`,
    );
  }
  const { seq, prev } = value ?? {};
  if (seq !== after.seq + 1 || prev !== after.hash) {
    throw new ExportError(
      'EXPORT_LOG_BROKEN',
      `The entry after seq ${after.seq} in ${path} does not chain to it (seq ${String(seq)}): the log is broken or was changed while it was exported; nothing after seq ${after.seq} is exported. Run: ringfence audit verify`,
    );
  }
  return { raw, value, seq: after.seq + 1, hash: hashLine(raw), end };
}

/**
 * The log's state at `position`: the line ending at `position.offset` must be the entry
 * `position.seq` with hash `position.hash`, and line 1 must be the log `position.log`; anything
 * else means the local log diverged from what the collector already has. Returns the hash of
 * line 1 (undefined while the log is empty) and the file's inode.
 */
export async function checkPosition(
  path: string,
  position: ExportPosition,
): Promise<{ log?: AuditDigest; ino: number }> {
  const handle = await openLog(path);
  if (!handle) {
    if (position.seq === 0) return { ino: 0 };
    throw diverged(path, `the log is gone, but seq ${position.seq} was exported`);
  }
  try {
    const info = await handle.stat();
    const first = await firstLine(handle, info.size);
    const log = first === undefined ? undefined : hashLine(first.toString('utf8'));
    if (position.seq === 0) return { ...(log ? { log } : {}), ino: info.ino };
    if (info.size < position.offset)
      throw diverged(
        path,
        `it is ${info.size} bytes long, shorter than the ${position.offset} bytes already exported (up to seq ${position.seq})`,
      );
    if (position.log !== undefined && log !== position.log)
      throw diverged(path, `its first line is not the one exported (log ${position.log.slice(0, 23)}…)`);
    let last: Buffer | undefined;
    let first2 = true;
    for await (const segment of segmentsFromEnd(handle, position.offset)) {
      if (first2) {
        first2 = false;
        if (segment.length !== 0) throw diverged(path, `no line ends at byte ${position.offset}`);
        continue;
      }
      last = segment;
      break;
    }
    const raw = last?.toString('utf8') ?? '';
    let seq: unknown;
    try {
      ({ seq } = JSON.parse(raw));
    } catch {}
    if (seq !== position.seq || hashLine(raw) !== position.hash)
      throw diverged(
        path,
        `the entry exported as seq ${position.seq} (${position.hash.slice(0, 23)}…) is not there any more`,
      );
    return { ...(log ? { log } : {}), ino: info.ino };
  } finally {
    await handle.close();
  }
}

async function firstLine(handle: FileHandle, size: number): Promise<Buffer | undefined> {
  const buffer = Buffer.alloc(Math.min(size, BATCH_BYTES));
  const got = await readAt(handle, buffer, 0);
  const end = buffer.subarray(0, got).indexOf(0x0a);
  return end === -1 ? undefined : buffer.subarray(0, end);
}

/**
 * The complete lines after `after` (at most a batch), each checked to chain onto the one before.
 * A line still being written (no newline yet) waits for the next read. `replaced` says the file
 * at the path is no longer the one being read (other inode, or shorter than what was read).
 */
export async function readAfter(
  path: string,
  after: ExportPosition,
  ino: number,
): Promise<{ lines: SourceLine[]; replaced: boolean; ino: number; broken?: ExportError }> {
  const handle = await openLog(path);
  if (!handle) return { lines: [], replaced: after.seq > 0, ino: 0 };
  try {
    const info = await handle.stat();
    if ((ino !== 0 && info.ino !== ino) || info.size < after.offset)
      return { lines: [], replaced: true, ino: info.ino };
    if (info.size === after.offset) return { lines: [], replaced: false, ino: info.ino };
    const buffer = Buffer.alloc(Math.min(info.size - after.offset, BATCH_BYTES));
    const got = await readAt(handle, buffer, after.offset);
    const lines: SourceLine[] = [];
    let start = 0;
    let previous: { seq: number; hash: AuditDigest } = after;
    for (
      let i = buffer.indexOf(0x0a);
      i !== -1 && i < got && lines.length < MAX_LINES;
      i = buffer.indexOf(0x0a, start)
    ) {
      let line: SourceLine;
      try {
        line = chained(path, buffer.subarray(start, i), previous, after.offset + i + 1);
      } catch (error) {
        // What chained before the broken line still goes out; the exporter stops after it.
        if (lines.length === 0) throw error;
        return { lines, replaced: false, ino: info.ino, broken: error as ExportError };
      }
      lines.push(line);
      previous = line;
      start = i + 1;
    }
    return { lines, replaced: false, ino: info.ino };
  } finally {
    await handle.close();
  }
}

import { type FileHandle, open } from 'node:fs/promises';
import { withFileLock } from '@ringfence/policy';
import { OpenCalls } from './interrupted.js';
import { AUDIT_GENESIS, type AuditDigest } from './types.js';
import { type AuditVerifyCode, Lines, LongLineError, type Parsed, parseLine } from './verify-lines.js';
import { PARALLEL_MIN_BYTES, verifyInParallel } from './verify-parallel.js';

export type { AuditVerifyCode } from './verify-lines.js';

export type AuditVerifyResult =
  | {
      readonly ok: true;
      readonly path: string;
      /** false when there is no log yet: nothing was logged, which verifies as 0 entries. */
      readonly exists: boolean;
      readonly entries: number;
      /** Hash of the last line (the genesis value for an empty log): copy it elsewhere to anchor the log. */
      readonly lastHash: AuditDigest;
      /** seqs of forwarded calls with no result entry (interrupted, or still running): see OpenCalls. */
      readonly interrupted: readonly number[];
    }
  | {
      readonly ok: false;
      readonly path: string;
      /** 1-based line number in the file; 0 when the file could not be read at all. */
      readonly line: number;
      readonly code: AuditVerifyCode;
      readonly message: string;
    };

/**
 * The file's length at a moment when no writer is mid-append: read under the writers' lock (held
 * only for a stat), so a line being written while we verify is neither half-read nor reported as
 * torn; lines appended later are simply past the end we check. Without write access to the
 * directory (a copy kept as evidence), or when the lock stays busy, the plain length is used.
 */
async function settledSize(path: string, handle: FileHandle): Promise<number> {
  try {
    return await withFileLock(path, async () => (await handle.stat()).size, { timeoutMs: 2_000 });
  } catch {
    return (await handle.stat()).size;
  }
}

interface Known {
  readonly seq: number;
  readonly hash: AuditDigest;
}

/**
 * Checks the whole log: every line JSON of the documented shape in ringfence's exact byte form,
 * line 1 chained to the genesis value with seq 1, every later line naming the SHA-256 of the line
 * before it with the next seq. Stops at the first line that breaks and says what most likely
 * happened there (changed, inserted, deleted, reordered, torn). Never throws on content; an
 * absent file is `ok` with 0 entries (nothing has been logged yet).
 *
 * `lock: false` is for readers that must not create any file (the console): the length is read
 * without the writers' lock, so a line being appended at that moment is reported as torn, and
 * such a reader should ask again before believing it.
 */
export async function verifyAuditLog(
  path: string,
  options: { readonly lock?: boolean } = {},
): Promise<AuditVerifyResult> {
  let handle: FileHandle;
  try {
    handle = await open(path, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT')
      return { ok: true, path, exists: false, entries: 0, lastHash: AUDIT_GENESIS, interrupted: [] };
    return unreadable(path, error);
  }
  try {
    const size = options.lock === false ? (await handle.stat()).size : await settledSize(path, handle);
    if (size >= PARALLEL_MIN_BYTES) {
      const clean = await verifyInParallel(path, handle, size);
      if (clean) return { ok: true, path, exists: true, ...clean };
    }
    return await walk(path, new Lines(handle, size));
  } catch (error) {
    if (error instanceof LongLineError) {
      return {
        ok: false,
        path,
        line: 0,
        code: 'AUDIT_BAD_JSON',
        message: `${error.message}; this is not an audit log`,
      };
    }
    return unreadable(path, error);
  } finally {
    await handle.close();
  }
}

function unreadable(path: string, error: unknown): AuditVerifyResult {
  return {
    ok: false,
    path,
    line: 0,
    code: 'AUDIT_UNREADABLE',
    message: `could not read ${path}: ${(error as Error).message}`,
  };
}

async function walk(path: string, lines: Lines): Promise<AuditVerifyResult> {
  let line = 0;
  let last: Known | undefined;
  // Hash of the line before `last` (the genesis value when `last` is line 1).
  let beforeLast: AuditDigest = AUDIT_GENESIS;
  const calls = new OpenCalls();
  const fail = (at: number, code: AuditVerifyCode, message: string): AuditVerifyResult => ({
    ok: false,
    path,
    line: at,
    code,
    message: `line ${at}: ${message}`,
  });
  for (let item = lines.take() ?? (await lines.next()); item; item = lines.take() ?? (await lines.next())) {
    line += 1;
    if (!item.complete) {
      return fail(
        line,
        'AUDIT_TORN_LINE',
        'the last line has no newline: a writer stopped mid-line (crash, full disk) or the file was cut',
      );
    }
    const parsed = parseLine(item.bytes);
    if (!parsed.ok) return fail(line, parsed.code, parsed.message);
    const entry = parsed.facts;
    if (!last) {
      if (entry.seq !== 1) {
        return fail(
          line,
          'AUDIT_SEQ_GAP',
          `the log starts at seq ${entry.seq}: entries before it were removed`,
        );
      }
      if (entry.prev !== AUDIT_GENESIS) {
        return fail(
          line,
          'AUDIT_BAD_GENESIS',
          `the first entry's prev must be the genesis value ${AUDIT_GENESIS}`,
        );
      }
    } else if (entry.seq !== last.seq + 1 || entry.prev !== last.hash) {
      const next = await lines.peek();
      const after = next?.complete ? parseLine(next.bytes) : undefined;
      const [at, code, message] = diagnose(line, parsed, last, beforeLast, after?.ok ? after : undefined);
      return fail(at, code, message);
    }
    beforeLast = last?.hash ?? AUDIT_GENESIS;
    last = { seq: entry.seq, hash: parsed.hash };
    calls.see(entry);
  }
  return {
    ok: true,
    path,
    exists: true,
    entries: line,
    lastHash: last?.hash ?? AUDIT_GENESIS,
    interrupted: calls.seqs(),
  };
}

type Finding = [line: number, code: AuditVerifyCode, message: string];

/**
 * Line `j` does not follow `last` (line j-1). The chain alone says only "these two disagree";
 * the neighbours tell which line is the odd one, so the report can point at it.
 */
function diagnose(
  j: number,
  current: Extract<Parsed, { ok: true }>,
  last: Known,
  beforeLast: AuditDigest,
  next: Extract<Parsed, { ok: true }> | undefined,
): Finding {
  const entry = current.facts;
  const expected = last.seq + 1;
  // The same SHA-256 is the same bytes (the reader keeps no line's bytes past the next read).
  if (current.hash === last.hash) return [j, 'AUDIT_DUPLICATE_LINE', `repeats line ${j - 1}`];
  if (entry.prev === beforeLast) {
    return [
      j - 1,
      'AUDIT_LINE_INSERTED',
      `was inserted: line ${j} chains to the line before it (seq ${entry.seq}), skipping this one`,
    ];
  }
  if (next && next.facts.seq === entry.seq - 1 && entry.prev === next.hash && next.facts.prev === last.hash) {
    return [
      j,
      'AUDIT_SEQ_ORDER',
      `lines ${j} and ${j + 1} are in the wrong order (seq ${entry.seq} before ${next.facts.seq})`,
    ];
  }
  if (next && next.facts.prev === last.hash && next.facts.seq === expected) {
    return [
      j,
      'AUDIT_LINE_INSERTED',
      `was inserted: line ${j + 1} chains to line ${j - 1}, skipping this one`,
    ];
  }
  if (entry.seq === expected) {
    if (next?.facts.prev === current.hash) {
      return [
        j - 1,
        'AUDIT_LINE_CHANGED',
        `was changed after it was written: its hash no longer matches the prev recorded by line ${j}`,
      ];
    }
    if (next) {
      return [
        j,
        'AUDIT_LINE_CHANGED',
        `was changed after it was written: it does not chain to line ${j - 1} and line ${j + 1} does not chain to it`,
      ];
    }
    return [
      j - 1,
      'AUDIT_CHAIN_BROKEN',
      `does not match the prev recorded by line ${j}: line ${j - 1} was changed, or the prev of line ${j} was`,
    ];
  }
  if (entry.seq === 1 && entry.prev === AUDIT_GENESIS) {
    return [
      j,
      'AUDIT_SEQ_ORDER',
      'starts a new chain (seq 1, genesis prev): two logs were joined or the log was restarted in place',
    ];
  }
  if (entry.prev === last.hash) {
    return [
      j,
      'AUDIT_SEQ_ORDER',
      `chains to line ${j - 1} but has seq ${entry.seq} instead of ${expected}: its seq was changed`,
    ];
  }
  if (entry.seq > expected) {
    const missing =
      entry.seq - 1 === expected ? `entry ${expected} is` : `entries ${expected}..${entry.seq - 1} are`;
    return [
      j,
      'AUDIT_SEQ_GAP',
      `has seq ${entry.seq} after seq ${last.seq}: ${missing} missing here (deleted, or moved)`,
    ];
  }
  return [
    j,
    'AUDIT_SEQ_ORDER',
    `has seq ${entry.seq} after seq ${last.seq}: lines were reordered, repeated or renumbered`,
  ];
}

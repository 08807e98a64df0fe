import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '@ringfence/policy';
import { AUDIT_GENESIS, type AuditDigest } from '../audit/index.js';
import { ExportError } from './errors.js';

/**
 * How far a sink has been exported: the last entry it acknowledged (its seq and hash), the byte
 * offset just after that line, and the log it belongs to (the hash of line 1). Kept in the home as
 * `audit-export-<sink>.json`, replaced atomically (written aside, fsynced, renamed), so a crash
 * leaves the old position or the new one, never a torn file.
 */
export interface ExportPosition {
  readonly seq: number;
  readonly hash: AuditDigest;
  readonly offset: number;
  /** Hash of the log's line 1; undefined before anything was exported. */
  readonly log?: AuditDigest;
}

export const START: ExportPosition = { seq: 0, hash: AUDIT_GENESIS, offset: 0 };

export function positionPath(home: string, sinkId: string): string {
  return join(home, `audit-export-${sinkId}.json`);
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

export async function loadPosition(path: string): Promise<ExportPosition> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return START;
    throw new ExportError('EXPORT_POSITION', `Could not read ${path}: ${(error as Error).message}.`, {
      cause: error,
    });
  }
  const bad = () =>
    new ExportError(
      'EXPORT_POSITION',
      `${path} is not an export position. Remove it to export this sink again from the log's first entry (the collector then receives duplicates it can drop by seq).`,
    );
  let value: Record<string, unknown>;
  try {
    value = JSON.parse(text);
  } catch {
    throw bad();
  }
  const { version, seq, hash, offset, log } = value ?? {};
  if (version !== 1) throw bad();
  if (typeof seq !== 'number' || !Number.isSafeInteger(seq) || seq < 0) throw bad();
  if (typeof offset !== 'number' || !Number.isSafeInteger(offset) || offset < 0) throw bad();
  if (typeof hash !== 'string' || !DIGEST.test(hash)) throw bad();
  if (log !== undefined && (typeof log !== 'string' || !DIGEST.test(log))) throw bad();
  if ((seq === 0) !== (offset === 0)) throw bad();
  return {
    seq,
    hash: hash as AuditDigest,
    offset,
    ...(log !== undefined ? { log: log as AuditDigest } : {}),
  };
}

export async function savePosition(
  path: string,
  position: ExportPosition,
  about: { target: string; format: string },
): Promise<void> {
  const record = { version: 1, target: about.target, format: about.format, ...position };
  await writeFileAtomic(path, `${JSON.stringify(record)}\n`);
}

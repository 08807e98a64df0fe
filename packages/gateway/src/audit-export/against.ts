import { createReadStream } from 'node:fs';
import { access } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import { AUDIT_TYPES, type AuditDigest, hashLine, verifyAuditLog } from '../audit/index.js';
import { asAnchor } from './anchor.js';
import { ExportError } from './errors.js';

export type AgainstCode =
  /** The local log's own chain is broken (`audit verify` alone says where). */
  | 'AGAINST_LOCAL_BROKEN'
  /** The receiver's file holds no anchor and no exported entry. */
  | 'AGAINST_NOTHING'
  /** No log in the receiver's file is this log: its first line is not the one that left. */
  | 'AGAINST_OTHER_LOG'
  /** The export holds entries or anchors past the local log's end: it was cut back. */
  | 'AGAINST_TRUNCATED'
  /** A local entry differs from what left the machine: changed, reordered or re-chained. */
  | 'AGAINST_REWRITTEN'
  /** The receiver holds two different entries (or anchors) for one seq of the same log. */
  | 'AGAINST_CONFLICT';

export interface AgainstResult {
  readonly ok: boolean;
  readonly code?: AgainstCode;
  readonly message: string;
  readonly path: string;
  readonly against: string;
  /** Entries in the local log. */
  readonly entries: number;
  /** Distinct exported entries of this log found, and their repeats (at-least-once resends). */
  readonly exported: number;
  readonly duplicates: number;
  readonly anchors: number;
  /** The highest seq the receiver holds (entry or anchor) for this log: what is covered. */
  readonly coveredThrough: number;
  /** Exported seqs missing between 1 and the highest exported entry (an export begun later, or loss). */
  readonly missing: number;
  /** Other logs (by line-1 hash) the receiver's file holds, not checked here. */
  readonly otherLogs: number;
}

interface Held {
  readonly hash: AuditDigest;
  readonly line: number;
}

interface Group {
  readonly entries: Map<number, Held>;
  readonly anchors: Map<number, Held>;
  duplicates: number;
  conflict?: { seq: number; line: number; first: number };
}

const isRingfenceEntry = (v: Record<string, unknown>) =>
  typeof v.seq === 'number' &&
  typeof v.prev === 'string' &&
  (AUDIT_TYPES as readonly unknown[]).includes(v.type);

/** What a receiver's file holds (rsyslog's omfile output, a JSON lines file), grouped by log. */
async function readExport(path: string): Promise<Map<AuditDigest | undefined, Group>> {
  const groups = new Map<AuditDigest | undefined, Group>();
  const groupOf = (log: AuditDigest | undefined) => {
    let group = groups.get(log);
    if (!group) {
      group = { entries: new Map(), anchors: new Map(), duplicates: 0 };
      groups.set(log, group);
    }
    return group;
  };
  let current: AuditDigest | undefined;
  let pending: { seq: number; held: Held }[] = [];
  // Records before the first one naming their log (a file that starts mid-export) take the log
  // of the first record that names one.
  const adopt = (log: AuditDigest) => {
    if (current === undefined) for (const { seq, held } of pending) addEntry(groupOf(log), seq, held);
    pending = [];
    current = log;
  };
  const addEntry = (group: Group, seq: number, held: Held) => {
    const known = group.entries.get(seq);
    if (!known) group.entries.set(seq, held);
    else if (known.hash === held.hash) group.duplicates++;
    else group.conflict ??= { seq, line: held.line, first: known.line };
  };
  // A second, different anchor for one seq is as much a conflict as a second entry: else the last
  // one read (anyone can send one to the collector after the real one) would silently win.
  const addAnchor = (group: Group, seq: number, held: Held) => {
    const known = group.anchors.get(seq);
    if (!known) group.anchors.set(seq, held);
    else if (known.hash !== held.hash) group.conflict ??= { seq, line: held.line, first: known.line };
  };
  const logChainedTo = (seq: number, prev: string): AuditDigest | undefined => {
    for (const [log, group] of groups) if (group.entries.get(seq - 1)?.hash === prev) return log;
    return undefined;
  };
  let number = 0;
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    number++;
    const start = line.indexOf('{');
    if (start === -1) continue;
    const text = line.slice(start).replace(/\r$/, '');
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(text);
    } catch {
      continue;
    }
    if (typeof value !== 'object' || value === null) continue;
    const anchor = asAnchor(value);
    if (anchor) {
      adopt(anchor.log);
      addAnchor(groupOf(anchor.log), anchor.seq, { hash: anchor.hash, line: number });
      continue;
    }
    const metadata = value.metadata as Record<string, unknown> | undefined;
    const product = metadata?.product as Record<string, unknown> | undefined;
    if (value.class_uid === 6003 && product?.name === 'ringfence') {
      const log = (value.unmapped as Record<string, unknown> | undefined)?.log;
      const seq = metadata?.sequence;
      const hash = metadata?.uid;
      if (typeof log !== 'string' || typeof seq !== 'number' || typeof hash !== 'string') continue;
      adopt(log as AuditDigest);
      addEntry(groupOf(log as AuditDigest), seq, { hash: hash as AuditDigest, line: number });
      continue;
    }
    if (isRingfenceEntry(value)) {
      const seq = value.seq as number;
      const held = { hash: hashLine(text), line: number };
      if (seq === 1) adopt(held.hash);
      // An entry names no log but its prev does: it belongs to the log whose entry seq-1 it chains
      // to. Only when none is known does it take the log of the record before it, so a record of
      // another log arriving in between (anyone can send one) cannot take it out of its log's check.
      const chainedTo = seq > 1 ? logChainedTo(seq, value.prev as string) : undefined;
      if (chainedTo !== undefined) {
        current = chainedTo;
        addEntry(groupOf(chainedTo), seq, held);
      } else if (current === undefined) pending.push({ seq, held });
      else addEntry(groupOf(current), seq, held);
    }
  }
  if (pending.length > 0) for (const { seq, held } of pending) addEntry(groupOf(undefined), seq, held);
  return groups;
}

/** Hash of each local line whose seq is in `wanted`, the hash of line 1, and how many lines. */
async function localHashes(path: string, wanted: ReadonlySet<number>) {
  const hashes = new Map<number, AuditDigest>();
  let first: AuditDigest | undefined;
  let count = 0;
  try {
    await access(path);
  } catch {
    return { hashes, first, count };
  }
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    count++;
    if (count === 1) first = hashLine(line);
    if (wanted.has(count)) hashes.set(count, hashLine(line));
  }
  return { hashes, first, count };
}

/**
 * Checks the local log against what left the machine: the anchors and exported entries a
 * receiver wrote to `against`. The local chain must be intact; the receiver must hold this log
 * (by the hash of its line 1); every exported entry and anchor must be in the local log at its seq
 * with the same hash. Catches a rewrite of the whole file (re-chained from scratch), a cut back to
 * a line boundary, and changed or reordered entries, up to the last seq that left the machine.
 */
export async function verifyAgainstExport(path: string, against: string): Promise<AgainstResult> {
  let groups: Map<AuditDigest | undefined, Group>;
  try {
    groups = await readExport(against);
  } catch (error) {
    throw new ExportError(
      'EXPORT_AGAINST_UNREADABLE',
      `Could not read ${against}: ${(error as Error).message}. Give the file your collector wrote (rsyslog's output file, a JSON lines file).`,
      { cause: error },
    );
  }
  const base = {
    path,
    against,
    entries: 0,
    exported: 0,
    duplicates: 0,
    anchors: 0,
    coveredThrough: 0,
    missing: 0,
    otherLogs: 0,
  };
  const local = await verifyAuditLog(path);
  if (!local.ok)
    return {
      ...base,
      ok: false,
      code: 'AGAINST_LOCAL_BROKEN',
      message: `the local log's own chain is broken at line ${local.line}: ${local.message} (${local.code})`,
    };
  const wanted = new Set<number>();
  for (const group of groups.values())
    for (const seq of [...group.entries.keys(), ...group.anchors.keys()]) wanted.add(seq);
  const { hashes, first, count } = await localHashes(path, wanted);
  const withEntries = { ...base, entries: count };
  if (groups.size === 0)
    return {
      ...withEntries,
      ok: false,
      code: 'AGAINST_NOTHING',
      message: `${against} holds no ringfence anchor or exported entry: nothing to check against`,
    };
  const mine = first !== undefined ? (groups.get(first) ?? groups.get(undefined)) : undefined;
  const otherLogs = [...groups.keys()].filter((log) => log !== undefined && log !== first).length;
  if (!mine)
    return {
      ...withEntries,
      otherLogs,
      ok: false,
      code: 'AGAINST_OTHER_LOG',
      message: `none of the ${otherLogs} log(s) exported to ${against} is this log: its first line is not the one that left the machine. It was rewritten from its start, or deleted and started afresh${count === 0 ? ' (the local log is empty)' : ''}. A log moved aside on purpose is checked with --file OLD_LOG`,
    };
  const all = [...mine.entries.entries(), ...mine.anchors.entries()].sort((a, b) => a[0] - b[0]);
  const coveredThrough = all.length > 0 ? all[all.length - 1]![0] : 0;
  const highestEntry = Math.max(0, ...mine.entries.keys());
  const summary = {
    ...withEntries,
    otherLogs,
    exported: mine.entries.size,
    duplicates: mine.duplicates,
    anchors: mine.anchors.size,
    coveredThrough,
    missing: highestEntry - mine.entries.size,
  };
  if (mine.conflict)
    return {
      ...summary,
      ok: false,
      code: 'AGAINST_CONFLICT',
      message: `${against} holds two different entries or anchors for seq ${mine.conflict.seq} (its lines ${mine.conflict.first} and ${mine.conflict.line}): the local log was changed between two exports, or something else sent records to the collector; the earlier line is the one to trust`,
    };
  for (const [seq, held] of all) {
    const localHash = hashes.get(seq);
    if (localHash === undefined)
      return {
        ...summary,
        ok: false,
        code: 'AGAINST_TRUNCATED',
        message: `${against} holds seq ${seq} (its line ${held.line}) but the local log ends at seq ${count}: entries were cut from its end`,
      };
    if (localHash !== held.hash)
      return {
        ...summary,
        ok: false,
        code: 'AGAINST_REWRITTEN',
        message: `local entry seq ${seq} is not the one that left the machine (${against} line ${held.line} has ${held.hash.slice(0, 23)}…): it was changed, reordered or the log re-chained`,
      };
  }
  // Another log in the same file is either one moved aside on purpose or the one this log
  // replaced (deleted, or rewritten from its line 1, then exported afresh): only a person can
  // tell, so the success says so rather than passing over it.
  const others =
    otherLogs > 0
      ? `; ${against} also holds ${otherLogs} other log(s), not checked here: a log moved aside on purpose (check it with --file OLD_LOG --against ${against}), or one deleted or rewritten from its start and replaced by this one`
      : '';
  return {
    ...summary,
    ok: true,
    message: `the local log matches what left the machine through seq ${coveredThrough}${count > coveredThrough ? `; the ${count - coveredThrough} entries after it have not left the machine and are not covered` : ''}${others}`,
  };
}

import { canonicalize, isRingfenceError } from '@ringfence/policy';
import { clip } from './clip.js';
import { AuditError } from './errors.js';
import { middleText } from './middle.js';
import {
  checkEntryShape,
  hashLine,
  isDigest,
  isRecord,
  isSeq,
  isTimestamp,
  type ShapeCheck,
  serializeEntry,
} from './spec.js';
import { AUDIT_GENESIS, type AuditDigest, type AuditInput, type AuditType } from './types.js';

// The tables and checks live in spec.ts; these importers of format.ts keep their names.
export {
  checkEntryShape,
  hashLine,
  isSerializedForm,
  type ShapeCheck,
  serializeEntry,
} from './spec.js';

/**
 * A digest the caller already computed with {@link canonicalForm}, handed to `append` in place of
 * the raw value so it is not serialised twice. A class, not a shape: nothing parsed from JSON (what
 * a server or client sends) is ever an instance, so no input can pass itself off as a digest.
 */
export class PrecomputedDigest {
  constructor(readonly digest: AuditDigest | null) {}
}

/**
 * The canonical JSON of a value and its digest, computed once for callers that need both (the
 * result size check counts the same bytes JSON.stringify would: RFC 8785 only orders the keys).
 * `json` is undefined and the digest null when the value has no canonical form (a lone surrogate
 * in a string) or is nested too deeply to canonicalise (the stack runs out): the log says so
 * instead of hashing a guess, and the entry is still written.
 */
export function canonicalForm(value: unknown): {
  readonly json?: string;
  readonly digest: PrecomputedDigest;
} {
  let json: string;
  try {
    json = canonicalize(value);
  } catch (error) {
    if (isRingfenceError(error) && error.code === 'CANONICAL_UNSUPPORTED_VALUE')
      return { digest: new PrecomputedDigest(null) };
    if (error instanceof RangeError) return { digest: new PrecomputedDigest(null) };
    throw error;
  }
  // The canonical text is well-formed UTF-16 (lone surrogates were refused), so hashing the string
  // as UTF-8 hashes exactly `canonicalBytes`, without a copy into a Uint8Array first.
  return { json, digest: new PrecomputedDigest(hashLine(json)) };
}

/** Digest of the canonical JSON of an argument or result value (see {@link canonicalForm}). */
export function contentDigest(value: unknown): AuditDigest | null {
  return value instanceof PrecomputedDigest ? value.digest : canonicalForm(value).digest.digest;
}

/** Shortens long strings and drops undefined members, recursively. */
function clean<T>(value: T): T {
  if (typeof value === 'string') return clip(value) as T;
  if (!isRecord(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) if (v !== undefined) out[key] = clean(v);
  return out as T;
}

/** An entry as the caller described it, digests computed, waiting for seq, ts and prev. */
export interface PreparedEntry {
  readonly type: AuditType;
  /** The entry's fields as written (digests in place of content, strings cut), seq, ts and prev aside. */
  readonly fields: Readonly<Record<string, unknown>>;
  /**
   * The entry's line between `"ts":"…",` and `,"prev":…`, serialised once when it is prepared:
   * seq, ts and prev come first and last in the documented order, so the writer only splices
   * them in (`entryLine`) instead of checking and serialising the whole entry again.
   */
  readonly middle: string;
  readonly parentSeq: number | undefined;
}

/** `fields` is read back from `middle` when asked for (tests, `completeEntry`): the writer never needs it. */
class Prepared implements PreparedEntry {
  constructor(
    readonly type: AuditType,
    readonly middle: string,
    readonly parentSeq: number | undefined,
  ) {}

  get fields(): Readonly<Record<string, unknown>> {
    return JSON.parse(`{${this.middle}}`) as Record<string, unknown>;
  }
}

/** The member of `refs` that holds raw content, per type, replaced by its digest. */
function contentOf(input: AuditInput): { readonly key?: string; readonly digest?: AuditDigest | null } {
  if (input.type === 'mcp.decision' && input.refs.phase === 'call')
    return { key: 'arguments', digest: contentDigest(input.refs.arguments) };
  if (input.type === 'mcp.result') return { key: 'result', digest: contentDigest(input.refs.result) };
  if (input.type === 'mcp.server_request')
    return { key: 'request', digest: contentDigest(input.refs.request) };
  if (input.type === 'mcp.server_answer') {
    const { answer } = input.refs;
    return { key: 'answer', digest: answer === undefined ? null : contentDigest(answer) };
  }
  return {};
}

/**
 * Turns what a caller hands in into an entry minus what only the writer knows (seq, ts, prev):
 * raw arguments and results become digests here and long strings are shortened. The shape is
 * checked now, so a bad input is refused at once and never reaches the file.
 *
 * @throws {AuditError} `AUDIT_INVALID_ENTRY`
 */
export function prepareEntry(input: AuditInput, session: string, sandbox?: string): PreparedEntry {
  const content = contentOf(input);
  const top = topOf(input, session, sandbox);
  // One walk that checks and writes (middle.ts); what it does not accept goes the generic way,
  // which refuses it with the reason or, if it is well-formed after all, writes the same bytes.
  const middle = middleText(top, input.refs, content.key, content.digest, PROBE_SEQ);
  if (middle !== undefined) return new Prepared(input.type, middle, top.parent_seq);
  return prepareGeneric(input, top, content);
}

/** {@link prepareEntry} the generic way only: what its fast path is tested against. */
export function prepareEntryGenerically(input: AuditInput, session: string, sandbox?: string): PreparedEntry {
  return prepareGeneric(input, topOf(input, session, sandbox), contentOf(input));
}

/** The entry's own fields, as both paths start from them (parent_seq only where it belongs). */
function topOf(input: AuditInput, session: string, sandbox: string | undefined) {
  const hasParent = input.type === 'mcp.result' || input.type === 'mcp.server_answer';
  return {
    type: input.type,
    session: input.session ?? session,
    agent: input.agent,
    scope: input.scope,
    sandbox,
    parent_seq: hasParent ? input.parentSeq : undefined,
  };
}

/** The generic path: a cleaned copy, the strict shape check of a probe entry, its serialisation. */
function prepareGeneric(
  input: AuditInput,
  top: ReturnType<typeof topOf>,
  content: { readonly key?: string; readonly digest?: AuditDigest | null },
): PreparedEntry {
  const { parent_seq, ...base } = top;
  let refs: Record<string, unknown> = input.refs as unknown as Record<string, unknown>;
  if (content.key !== undefined) {
    const { [content.key]: _raw, ...rest } = refs;
    refs = { ...rest, [content.key]: content.digest };
  }
  const fields: Record<string, unknown> =
    input.type === 'mcp.result' || input.type === 'mcp.server_answer'
      ? { ...base, parent_seq, refs }
      : { ...base, refs };
  const cleaned = clean(fields);
  // A placeholder seq above any parent_seq; the real one is checked again when it is known.
  const probe = checkEntryShape({ ...cleaned, seq: PROBE_SEQ, ts: PROBE_TS, prev: AUDIT_GENESIS });
  if (!probe.ok) {
    throw new AuditError(
      'AUDIT_INVALID_ENTRY',
      `Refusing to write a malformed ${input.type} entry: ${probe.message}.`,
    );
  }
  const line = serializeEntry(probe.entry);
  const parentSeq = (probe.entry as { parent_seq?: number }).parent_seq;
  return new Prepared(input.type, line.slice(PROBE_HEAD.length, line.length - PROBE_TAIL.length), parentSeq);
}

const PROBE_SEQ = Number.MAX_SAFE_INTEGER;
const PROBE_TS = new Date(0).toISOString();
const PROBE_HEAD = `{"seq":${PROBE_SEQ},"ts":"${PROBE_TS}",`;
const PROBE_TAIL = `,"prev":"${AUDIT_GENESIS}"}`;

export type LineCheck = { ok: true; line: string } | { ok: false; message: string };

/**
 * The line of a prepared entry at its place in the chain: `serializeEntry(completeEntry(…))`
 * byte for byte, checking what was not known when the entry was prepared (seq, ts, prev and
 * parent_seq against the real seq); the rest was shape-checked by `prepareEntry`.
 */
export function entryLine(prepared: PreparedEntry, seq: number, ts: string, prev: AuditDigest): LineCheck {
  if (!isSeq(seq)) return { ok: false, message: 'seq must be a positive integer' };
  if (!isTimestamp(ts)) return { ok: false, message: 'ts must be a UTC time like 2026-01-31T12:00:00.000Z' };
  if (!isDigest(prev)) return { ok: false, message: 'prev must be sha256: and 64 lower-case hex digits' };
  if (prepared.parentSeq !== undefined && prepared.parentSeq >= seq) {
    return { ok: false, message: `parent_seq ${prepared.parentSeq} must come before seq ${seq}` };
  }
  // ts and prev passed the checks above: neither holds a character JSON would escape.
  return { ok: true, line: `{"seq":${seq},"ts":"${ts}",${prepared.middle},"prev":"${prev}"}` };
}

/** The full entry once the writer knows its place in the chain, shape-checked. */
export function completeEntry(
  prepared: PreparedEntry,
  seq: number,
  ts: string,
  prev: AuditDigest,
): ShapeCheck {
  return checkEntryShape({ ...prepared.fields, seq, ts, prev });
}

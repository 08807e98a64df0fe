/**
 * The entry tables and what is decided from them alone: the strict shape check, the written field
 * order, the byte-form comparison, a line's hash. Apart from format.ts (which digests values with
 * @ringfence/policy's canonical JSON) so the verifier's worker threads load only this.
 */
import { hash } from 'node:crypto';
import {
  AUDIT_METHOD_KINDS,
  AUDIT_METHODS,
  AUDIT_STRING_MAX,
  AUDIT_SUBJECT_KINDS,
  AUDIT_TYPES,
  type AuditDigest,
  type AuditEntry,
  type AuditMethod,
  type AuditType,
} from './types.js';

/** `sha256:` + hex SHA-256 of a line's exact bytes (without its trailing newline). */
export function hashLine(line: Uint8Array | string): AuditDigest {
  // The one-shot form: no Hash object per line, which the verifier computes a million times.
  return `sha256:${hash('sha256', line, 'hex')}`;
}

// One table per object drives both the strict shape check and the field order of written lines,
// so what the writer emits and what the verifier accepts cannot drift apart.
export type Check = (value: unknown) => boolean;
export interface Field {
  readonly check: Check | Spec;
  readonly what: string;
  readonly optional?: boolean;
}
export type Spec = { readonly [key: string]: Field };

// Specs are fixed tables, walked once per entry written or verified: their entries are listed once.
const specEntries = new WeakMap<Spec, readonly (readonly [string, Field])[]>();
export function fieldsOf(spec: Spec): readonly (readonly [string, Field])[] {
  let entries = specEntries.get(spec);
  if (!entries) {
    entries = Object.entries(spec);
    specEntries.set(spec, entries);
  }
  return entries;
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

// Exported for the line scanner (scan.ts), which checks these in place on the line's bytes.
export const isName: Check = (v) => typeof v === 'string' && v.length > 0 && v.length <= AUDIT_STRING_MAX;
export const isText: Check = (v) => typeof v === 'string' && v.length <= AUDIT_STRING_MAX;
export const isBool: Check = (v) => typeof v === 'boolean';
export const isSeq: Check = (v) => Number.isSafeInteger(v) && (v as number) >= 1;
export const isDigest: Check = (v) => typeof v === 'string' && DIGEST.test(v);
export const isDigestOrNull: Check = (v) => v === null || isDigest(v);
const isPort: Check = (v) => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 65535;
const isStatus: Check = (v) => Number.isInteger(v) && (v as number) >= 100 && (v as number) <= 599;
export const isTimestamp: Check = (v) =>
  typeof v === 'string' && TIMESTAMP.test(v) && !Number.isNaN(Date.parse(v));

const NAME = { check: isName, what: `a string of 1 to ${AUDIT_STRING_MAX} characters` };
const TEXT = { check: isText, what: `a string of at most ${AUDIT_STRING_MAX} characters` };
const BOOL = { check: isBool, what: 'true or false' };
const DIGEST_FIELD = { check: isDigest, what: 'sha256: and 64 lower-case hex digits' };

/** A held token's short digest (remote-auth `tokenDigest`): it names the token, never holds it. */
const TOKEN_DIGEST = {
  check: (v: unknown) => typeof v === 'string' && /^sha256:[0-9a-f]{16}$/.test(v),
  what: 'sha256: and 16 lower-case hex digits',
};

/** A call's W3C trace id (traces/): joins an entry with its trace, never says more. */
const TRACE_ID = {
  check: (v: unknown) => typeof v === 'string' && /^(?!0{32})[0-9a-f]{32}$/.test(v),
  what: '32 lower-case hex digits, not all zeros',
  optional: true,
};

const POLICY: Spec = { name: NAME, digest: DIGEST_FIELD, signer: NAME };
const SUBJECT_KIND = {
  check: (v: unknown) => (AUDIT_SUBJECT_KINDS as readonly unknown[]).includes(v),
  what: AUDIT_SUBJECT_KINDS.map((k) => `"${k}"`).join(' or '),
  optional: true,
};

const METHOD = {
  check: (v: unknown) => (AUDIT_METHODS as readonly unknown[]).includes(v),
  what: AUDIT_METHODS.map((m) => `"${m}"`).join(' or '),
  optional: true,
};

const REFS: Record<AuditType, Spec> = {
  'gateway.start': {
    pid: { check: isSeq, what: 'a positive integer' },
    version: { ...NAME, optional: true },
    policy: { check: POLICY, what: 'an object', optional: true },
  },
  'mcp.decision': {
    phase: { check: (v) => v === 'expose' || v === 'call', what: '"expose" or "call"' },
    server: NAME,
    tool: NAME,
    kind: SUBJECT_KIND,
    method: METHOD,
    allowed: BOOL,
    rule: NAME,
    reason: { ...TEXT, optional: true },
    policy: { check: POLICY, what: 'an object', optional: true },
    arguments: { check: isDigestOrNull, what: 'a sha256: digest or null', optional: true },
    digest: { ...DIGEST_FIELD, optional: true },
    task: { ...NAME, optional: true },
    // A call to one of ringfence's own tools: the sandbox it acts on (its `name` argument).
    sandbox: { ...NAME, optional: true },
    // Classes and field paths of the secrets the arguments carried, never a value.
    secrets: { ...NAME, optional: true },
    trace_id: TRACE_ID,
  },
  'mcp.result': {
    server: NAME,
    tool: NAME,
    kind: SUBJECT_KIND,
    method: METHOD,
    is_error: BOOL,
    result: { check: isDigestOrNull, what: 'a sha256: digest or null' },
    reason: { ...TEXT, optional: true },
    // Written only when something was dropped, so 0 is as malformed as a negative count.
    dropped: { check: isSeq, what: 'a positive integer', optional: true },
    cancelled: {
      check: (v) => v === 'client' || v === 'timeout',
      what: '"client" or "timeout"',
      optional: true,
    },
    task: { ...NAME, optional: true },
    sandbox: { ...NAME, optional: true },
    // Written only when something was removed, so 0 is as malformed as a negative count.
    redacted: { check: isSeq, what: 'a positive integer', optional: true },
    redacted_classes: { ...NAME, optional: true },
    trace_id: TRACE_ID,
  },
  'mcp.egress': {
    server: NAME,
    // A malformed request can leave the proxy with no host to report.
    host: TEXT,
    port: { check: isPort, what: 'an integer from 0 to 65535' },
    allowed: BOOL,
    status: { check: isStatus, what: 'an HTTP status code', optional: true },
    reason: TEXT,
    count: { check: isSeq, what: 'a positive integer', optional: true },
  },
  'mcp.server_request': {
    server: NAME,
    method: NAME,
    allowed: BOOL,
    rule: NAME,
    reason: { ...TEXT, optional: true },
    request: { check: isDigestOrNull, what: 'a sha256: digest or null' },
    policy: { check: POLICY, what: 'an object', optional: true },
  },
  'mcp.server_answer': {
    server: NAME,
    method: NAME,
    is_error: BOOL,
    answer: { check: isDigestOrNull, what: 'a sha256: digest or null' },
    reason: { ...TEXT, optional: true },
  },
  'mcp.task': {
    op: {
      check: (v) => v === 'get' || v === 'result' || v === 'cancel' || v === 'update',
      what: '"get", "result", "cancel" or "update"',
    },
    // A client may send an empty id: it is recorded as sent.
    task: TEXT,
    allowed: BOOL,
    reason: TEXT,
    server: { ...NAME, optional: true },
    tool: { ...NAME, optional: true },
  },
  'mcp.oauth': {
    server: NAME,
    event: {
      check: (v) => v === 'used' || v === 'refreshed' || v === 'refused',
      what: '"used", "refreshed" or "refused"',
    },
    token: { ...TOKEN_DIGEST, optional: true },
    previous: { ...TOKEN_DIGEST, optional: true },
    status: { check: isStatus, what: 'an HTTP status code', optional: true },
    reason: { ...TEXT, optional: true },
  },
};

/** Entry types that answer an earlier entry, named by `parent_seq`. */
const HAS_PARENT: readonly AuditType[] = ['mcp.result', 'mcp.server_answer'];

function envelope(type: AuditType): Spec {
  return {
    seq: { check: isSeq, what: 'a positive integer' },
    ts: { check: isTimestamp, what: 'a UTC time like 2026-01-31T12:00:00.000Z' },
    type: { check: (v) => v === type, what: 'an entry type' },
    session: NAME,
    agent: { ...NAME, optional: true },
    scope: { ...NAME, optional: true },
    // The sandbox the assistant works in (`mcp serve --sandbox NAME`): on every entry of that gateway.
    sandbox: { ...NAME, optional: true },
    ...(HAS_PARENT.includes(type) ? { parent_seq: { check: isSeq, what: 'a positive integer' } } : {}),
    refs: { check: REFS[type], what: 'an object' },
    prev: DIGEST_FIELD,
  };
}
const ENVELOPES = Object.fromEntries(AUDIT_TYPES.map((t) => [t, envelope(t)])) as Record<AuditType, Spec>;

/** The table of an entry type this version knows, else undefined. */
export function entrySpec(type: string): Spec | undefined {
  return Object.hasOwn(ENVELOPES, type) ? ENVELOPES[type as AuditType] : undefined;
}

export const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function problem(value: unknown, spec: Spec, path: string): string | undefined {
  if (!isRecord(value)) return `${path || 'the line'} must be a JSON object`;
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(spec, key)) return `unknown field ${path}${key}`;
  }
  for (const [key, field] of fieldsOf(spec)) {
    const v = value[key];
    if (v === undefined) {
      if (field.optional) continue;
      return `missing field ${path}${key}`;
    }
    if (typeof field.check === 'function') {
      if (!field.check(v)) return `${path}${key} must be ${field.what}`;
    } else {
      const inner = problem(v, field.check, `${path}${key}.`);
      if (inner) return inner;
    }
  }
  return undefined;
}

export type ShapeCheck = { ok: true; entry: AuditEntry } | { ok: false; message: string };

/** Strict shape check of a parsed line: known type, no unknown or missing fields, valid values. */
export function checkEntryShape(value: unknown): ShapeCheck {
  if (!isRecord(value)) return { ok: false, message: 'the line must be a JSON object' };
  const type = value.type;
  if (typeof type !== 'string' || !(AUDIT_TYPES as readonly string[]).includes(type)) {
    return {
      ok: false,
      message: `unknown entry type ${JSON.stringify(type)} (a newer ringfence may have written it; verify with that version)`,
    };
  }
  const found = problem(value, ENVELOPES[type as AuditType], '');
  if (found) return { ok: false, message: found };
  const across = crossFieldProblem(value as unknown as FieldsAcross);
  if (across) return { ok: false, message: across };
  return { ok: true, entry: value as unknown as AuditEntry };
}

/** What the rules between fields look at; `refs.arguments` only for whether it is present. */
export interface FieldsAcross {
  readonly type: string;
  readonly seq: number;
  readonly parent_seq?: number;
  readonly refs: {
    readonly phase?: unknown;
    readonly arguments?: unknown;
    readonly kind?: unknown;
    readonly method?: unknown;
    readonly task?: unknown;
  };
}

/** The rules that tie fields of an entry whose fields each passed their own check. */
export function crossFieldProblem(entry: FieldsAcross): string | undefined {
  if (entry.type === 'mcp.decision') {
    const hasArguments = entry.refs.arguments !== undefined;
    if (entry.refs.phase === 'call' && !hasArguments) return 'a call decision must name its arguments digest';
    if (entry.refs.phase === 'expose' && hasArguments) return 'an expose decision has no arguments';
    // Instructions are passed to a client or withheld, never called.
    if (entry.refs.phase !== 'expose' && entry.refs.kind === 'instructions')
      return 'only an expose decision is about instructions';
    if (entry.refs.phase === 'expose' && entry.refs.task !== undefined)
      return 'an expose decision names no task';
  }
  if (entry.type === 'mcp.result' && entry.refs.kind === 'instructions')
    return 'a result is never about instructions';
  if (entry.type === 'mcp.decision' || entry.type === 'mcp.result') {
    const problem = methodProblem(entry.refs);
    if (problem) return problem;
  }
  if (
    (entry.type === 'mcp.result' || entry.type === 'mcp.server_answer') &&
    (entry.parent_seq as number) >= entry.seq
  ) {
    return `parent_seq ${entry.parent_seq} must come before seq ${entry.seq}`;
  }
  return undefined;
}

/** A call entry's `method` and `kind` agree: a completion is about a prompt or a template, and so on. */
function methodProblem(refs: FieldsAcross['refs']): string | undefined {
  if (refs.method === undefined)
    return refs.kind === 'log-level' ? 'a log-level entry must name its method' : undefined;
  if (refs.phase === 'expose') return 'an expose decision names no method';
  const kinds = AUDIT_METHOD_KINDS[refs.method as AuditMethod];
  return kinds.includes(refs.kind as never)
    ? undefined
    : `a ${refs.method as string} entry must be about a ${kinds.join(' or ')}`;
}

function ordered(value: Record<string, unknown>, spec: Spec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, field] of fieldsOf(spec)) {
    const v = value[key];
    if (v === undefined) continue;
    out[key] = typeof field.check === 'function' ? v : ordered(v as Record<string, unknown>, field.check);
  }
  return out;
}

/**
 * The one byte form of an entry: the documented field order, no spaces, JSON.stringify escapes
 * (so a line never holds a raw newline). The verifier re-serialises every line and compares, so a
 * reformatted line is caught on that line rather than only by the next line's `prev`.
 */
export function serializeEntry(entry: AuditEntry): string {
  return JSON.stringify(ordered(entry as unknown as Record<string, unknown>, ENVELOPES[entry.type]));
}

/** Whether every object's keys come in the documented order (fields may be absent). */
function inSpecOrder(value: Record<string, unknown>, spec: Spec): boolean {
  const fields = fieldsOf(spec);
  let at = 0;
  for (const key of Object.keys(value)) {
    while (at < fields.length && (fields[at] as readonly [string, Field])[0] !== key) at++;
    if (at === fields.length) return false;
    const field = (fields[at] as readonly [string, Field])[1];
    if (typeof field.check !== 'function' && !inSpecOrder(value[key] as Record<string, unknown>, field.check))
      return false;
    at++;
  }
  return true;
}

/**
 * `serializeEntry(entry) === text` for an entry that passed `checkEntryShape` and was parsed from
 * `text`, without building the reordered copy: JSON.parse keeps the text's key order, so the text
 * is ringfence's byte form exactly when that order is the documented one and JSON.stringify gives
 * the text back (spacing, escapes and duplicate keys all show up as a difference there).
 */
export function isSerializedForm(entry: AuditEntry, text: string): boolean {
  return (
    inSpecOrder(entry as unknown as Record<string, unknown>, ENVELOPES[entry.type]) &&
    JSON.stringify(entry) === text
  );
}

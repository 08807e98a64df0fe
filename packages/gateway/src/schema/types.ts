/** Caps applied to untrusted schemas and to the values checked against them. */
export interface SchemaGuardLimits {
  /** Serialized (UTF-8 JSON) size of one schema. */
  maxSchemaBytes: number;
  /** JSON nesting depth of one schema (every object or array is one level). */
  maxDepth: number;
  /** Subschemas in one schema, the root and booleans included. */
  maxSubschemas: number;
  /** Length of one `pattern` / `patternProperties` key, in UTF-16 code units. */
  maxPatternLength: number;
  /** Budget of one compile or check once a worker has picked it up. */
  timeoutMs: number;
  /** Serialized size of one tool result, and of one call's arguments. */
  maxResultBytes: number;
}

export const DEFAULT_SCHEMA_LIMITS: SchemaGuardLimits = Object.freeze({
  maxSchemaBytes: 256 * 1024,
  maxDepth: 64,
  maxSubschemas: 2_000,
  maxPatternLength: 1_024,
  timeoutMs: 2_000,
  maxResultBytes: 1024 * 1024,
});

/**
 * Nesting cap for arguments and results. Not a limit a user tunes: it exists so that structured
 * cloning and ajv's recursive validators can never run out of stack on a hostile value.
 */
export const MAX_VALUE_DEPTH = 512;

/**
 * Cap on the in-place expansion of a schema (how many subschemas one instance location meets
 * through `allOf`/`anyOf`/`oneOf`/`not`/`if`/`$ref` chains), as a multiple of `maxSubschemas`.
 * Doubling chains of `anyOf` + `$ref` cost 2^n evaluations while staying tiny on disk.
 */
export const EXPANSION_FACTOR = 10;

export type SchemaReasonCode =
  | 'SCHEMA_DIALECT'
  | 'SCHEMA_REMOTE_REF'
  | 'SCHEMA_REF_CYCLE'
  | 'SCHEMA_TOO_LARGE'
  | 'SCHEMA_TOO_DEEP'
  | 'SCHEMA_TOO_MANY_SUBSCHEMAS'
  | 'SCHEMA_TOO_COMPLEX'
  | 'SCHEMA_PATTERN'
  | 'SCHEMA_INVALID'
  | 'SCHEMA_TIMEOUT'
  | 'SCHEMA_RESOURCES'
  | 'SCHEMA_GUARD_CLOSED'
  | 'ARGUMENTS_INVALID'
  | 'ARGUMENTS_UNKNOWN'
  | 'ARGUMENTS_TOO_LARGE'
  | 'RESULT_INVALID'
  | 'RESULT_MISSING_STRUCTURED'
  | 'RESULT_TOO_LARGE';

export type SchemaVerdict = { ok: true } | { ok: false; code: SchemaReasonCode; message: string };

/**
 * Which top-level argument names a call may carry: the names declared by `properties`, names
 * matching `patternProperties` (RE2), or any name when the schema explicitly opens the object.
 */
export interface ArgumentRule {
  known: string[];
  patterns: string[];
  open: boolean;
}

/** A plain-name fragment (`$anchor`, `#name`). */
export const ANCHOR = /^[A-Za-z_][-A-Za-z0-9._]*$/;

export type Dialect = '2020-12' | 'draft-07';

export function refuse(code: SchemaReasonCode, message: string): SchemaVerdict & { ok: false } {
  return { ok: false, code, message: clip(message) };
}

export const OK: SchemaVerdict = Object.freeze({ ok: true });

/** Messages end up in front of the model and in logs: keep them short and printable. */
export function clip(text: string, max = 300): string {
  const flat = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}

/**
 * The argument rule (docs/schema-guard.md): names the schema does not declare are refused before
 * the schema is checked. `matches` tests a name against the rule's patterns (compiled by the caller).
 */
export function unknownArguments(
  rule: ArgumentRule,
  value: unknown,
  matches: (name: string) => boolean,
): SchemaVerdict | undefined {
  if (rule.open || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const known = new Set(rule.known);
  const unknown = Object.keys(value).filter((name) => !known.has(name) && !matches(name));
  if (unknown.length === 0) return undefined;
  const names = unknown.slice(0, 5).map((n) => JSON.stringify(n.slice(0, 60)));
  return refuse(
    'ARGUMENTS_UNKNOWN',
    `unknown argument${unknown.length > 1 ? 's' : ''} ${names.join(', ')}${unknown.length > 5 ? ', …' : ''}: the tool's input schema does not declare ${unknown.length > 1 ? 'them' : 'it'}`,
  );
}

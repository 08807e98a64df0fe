import { digestOf, parseStrictJson } from '@ringfence/policy';
import { type DefinitionKind, INSTRUCTIONS_NAME, KIND_ID } from './kinds.js';

/** A definition (a tool, a prompt, a resource, a template) as the server sent it, minus `_meta`, with its fingerprint. */
export interface PinnableDefinition {
  readonly kind: DefinitionKind;
  /** What keys its pin: the name of a tool or prompt, the URI of a resource, a template's URI template. */
  readonly name: string;
  readonly digest: string;
  /** What was fingerprinted, and therefore exactly what the client may be shown. */
  readonly definition: Readonly<Record<string, unknown>>;
}

export type FingerprintResult =
  | { readonly ok: true; readonly pinnable: PinnableDefinition }
  | { readonly ok: false; readonly name?: string; readonly reason: string };

/**
 * `sha256:` + SHA-256 of the RFC 8785 canonical JSON of the definition object minus `_meta`.
 * Every other field — present or future — is covered, so nothing the model reads can change
 * without the fingerprint changing. A definition that cannot be canonicalised (lone surrogates,
 * non-finite numbers) cannot be pinned and is withheld. Every kind is fingerprinted alike; the
 * kind says where the pin is kept and which member keys it (`KIND_ID`).
 *
 * A resource is pinned as a definition, never its content: its `size` and
 * `annotations.lastModified` describe the content of the moment, so they are left out of the
 * fingerprint and therefore out of what the client is shown; otherwise every write to a file a
 * server lists would withhold it until someone approves it again.
 */
export function fingerprintDefinition(raw: unknown, kind: DefinitionKind): FingerprintResult {
  if (kind === 'instructions') return fingerprintInstructions(raw);
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: `the ${kind} is not a JSON object` };
  }
  const record = raw as Record<string, unknown>;
  const id = KIND_ID[kind];
  const name = typeof record[id] === 'string' ? (record[id] as string) : undefined;
  if (!name) return { ok: false, reason: `the ${kind} has no ${id}` };
  const definition: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key === '_meta' || (kind === 'resource' && key === 'size')) continue;
    definition[key] = value;
  }
  const annotations = definition.annotations;
  if (
    kind === 'resource' &&
    typeof annotations === 'object' &&
    annotations !== null &&
    !Array.isArray(annotations)
  ) {
    const { lastModified: _content, ...rest } = annotations as Record<string, unknown>;
    definition.annotations = rest;
  }
  let digest: string;
  try {
    digest = digestOf(definition);
  } catch (error) {
    return { ok: false, name, reason: `the definition cannot be pinned: ${(error as Error).message}` };
  }
  // What is pinned must read back: a definition the strict reader refuses (a `__proto__` key, a
  // definition named `__proto__`, nesting past its depth cap) would make the pins file unreadable
  // for every server. Refuse it here, for this definition alone.
  try {
    parseStrictJson(JSON.stringify({ [name]: { definition } }));
  } catch (error) {
    return { ok: false, name, reason: `the definition cannot be stored: ${(error as Error).message}` };
  }
  return { ok: true, pinnable: { kind, name, digest, definition } };
}

/** A tool's fingerprint: what an organisation policy pins with `{tool, digest}`. */
export function fingerprintTool(raw: unknown): FingerprintResult {
  return fingerprintDefinition(raw, 'tool');
}

/**
 * A server's instructions (the text, as its `initialize` answer gave it) as the definition
 * `{instructions: TEXT}`, pinned under `INSTRUCTIONS_NAME`: the whole text is fingerprinted, so a
 * single changed character (an invisible one too) withholds it until a person approves it again.
 */
export function fingerprintInstructions(text: unknown): FingerprintResult {
  const name = INSTRUCTIONS_NAME;
  if (typeof text !== 'string') return { ok: false, name, reason: 'the instructions are not text' };
  const definition = { instructions: text };
  try {
    return { ok: true, pinnable: { kind: 'instructions', name, digest: digestOf(definition), definition } };
  } catch (error) {
    return { ok: false, name, reason: `the instructions cannot be pinned: ${(error as Error).message}` };
  }
}

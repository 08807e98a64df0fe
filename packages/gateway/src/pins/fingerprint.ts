import { digestOf, parseStrictJson } from '@ringfence/policy';

/** A tool definition exactly as the server sent it, minus `_meta`, with its fingerprint. */
export interface PinnableTool {
  readonly name: string;
  readonly digest: string;
  /** What was fingerprinted, and therefore exactly what the client may be shown. */
  readonly definition: Readonly<Record<string, unknown>>;
}

export type FingerprintResult =
  | { readonly ok: true; readonly tool: PinnableTool }
  | { readonly ok: false; readonly name?: string; readonly reason: string };

/**
 * `sha256:` + SHA-256 of the RFC 8785 canonical JSON of the tool object minus `_meta`. Every
 * other field — present or future — is covered, so nothing the model reads can change
 * without the fingerprint changing. A tool that cannot be canonicalised (lone surrogates,
 * non-finite numbers) cannot be pinned and is withheld.
 */
export function fingerprintTool(raw: unknown): FingerprintResult {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    return { ok: false, reason: 'the tool is not a JSON object' };
  }
  const record = raw as Record<string, unknown>;
  const name = typeof record.name === 'string' ? record.name : undefined;
  if (!name) return { ok: false, reason: 'the tool has no name' };
  const definition: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(record)) {
    if (key !== '_meta') definition[key] = value;
  }
  let digest: string;
  try {
    digest = digestOf(definition);
  } catch (error) {
    return { ok: false, name, reason: `the definition cannot be pinned: ${(error as Error).message}` };
  }
  // What is pinned must read back: a definition the strict reader refuses (a `__proto__` key, a
  // tool named `__proto__`, nesting past its depth cap) would make the pins file unreadable for
  // every server. Refuse it here, for this tool alone.
  try {
    parseStrictJson(JSON.stringify({ [name]: { definition } }));
  } catch (error) {
    return { ok: false, name, reason: `the definition cannot be stored: ${(error as Error).message}` };
  }
  return { ok: true, tool: { name, digest, definition } };
}

import { canonicalize, parseStrictJson } from '@ringfence/policy';

/**
 * `structuredContent` of a tool with no pinned output schema has been checked by nothing, and a
 * client may read it instead of `content` (the model sees one, a person the other). It is passed
 * only when it says exactly what a text item of the same result says: MCP asks a tool that
 * returns structured content to return its JSON as text too, so an honest tool loses nothing,
 * and a `structuredContent` that contradicts `content` never reaches the client.
 *
 * "Exactly": the text parsed strictly (a duplicated member, which two readers may resolve
 * differently, makes it disagree) and both compared as RFC 8785 canonical JSON.
 */
export function agreesWithText(structured: Record<string, unknown>, content: readonly unknown[]): boolean {
  let expected: string;
  try {
    expected = canonicalize(structured);
  } catch {
    return false;
  }
  for (const item of content) {
    const { type, text } = (item ?? {}) as { type?: unknown; text?: unknown };
    // Only an object can be the same as structuredContent: skip other text unparsed.
    if (type !== 'text' || typeof text !== 'string' || !text.trimStart().startsWith('{')) continue;
    try {
      if (canonicalize(parseStrictJson(text)) === expected) return true;
    } catch {
      // Not strict JSON, or no canonical form: this item does not say the same.
    }
  }
  return false;
}

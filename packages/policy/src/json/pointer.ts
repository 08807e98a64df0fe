/** Sentinel for a JSON Pointer that names nothing. */
export const MISSING: unique symbol = Symbol('missing');

export interface PointerOptions {
  /**
   * The pointer is a URI fragment (a `$ref` after its `#`): each reference token is
   * percent-decoded before `~1`/`~0` are undone (RFC 6901 §6). A token that does not decode
   * names nothing.
   */
  readonly uriFragment?: boolean;
}

const ARRAY_INDEX = /^(0|[1-9][0-9]*)$/;

/** One reference token as a pointer writes it: `~` → `~0`, `/` → `~1` (RFC 6901 §3). */
export function escapePointerToken(key: string): string {
  return key.replaceAll('~', '~0').replaceAll('/', '~1');
}

/**
 * Resolves an RFC 6901 JSON Pointer against own properties only, so `/constructor` or
 * `/__proto__` never reaches into prototypes (and `/length` is not an array member), and array
 * indexes must be plain decimal. Documents come from outside (tool arguments, server-written
 * schemas and definitions), so inherited members must never be readable through a pointer.
 */
export function resolvePointer(
  document: unknown,
  pointer: string,
  options: PointerOptions = {},
): unknown | typeof MISSING {
  if (pointer === '') return document;
  if (!pointer.startsWith('/')) return MISSING;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    let decoded = raw;
    if (options.uriFragment) {
      try {
        decoded = decodeURIComponent(raw);
      } catch {
        return MISSING;
      }
    }
    const token = decoded.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      if (!ARRAY_INDEX.test(token)) return MISSING;
      const index = Number(token);
      if (index >= current.length) return MISSING;
      current = current[index];
    } else if (typeof current === 'object' && current !== null) {
      if (!Object.hasOwn(current, token)) return MISSING;
      current = (current as Record<string, unknown>)[token];
    } else {
      return MISSING;
    }
  }
  return current;
}

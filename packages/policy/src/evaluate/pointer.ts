/** Sentinel for a JSON Pointer that names nothing. */
export const MISSING: unique symbol = Symbol('missing');

/**
 * Resolves an RFC 6901 JSON Pointer against own properties only, so `/constructor` or
 * `/__proto__` never reaches into prototypes, and array indexes must be plain decimal.
 */
export function resolvePointer(document: unknown, pointer: string): unknown | typeof MISSING {
  if (pointer === '') return document;
  if (!pointer.startsWith('/')) return MISSING;
  let current: unknown = document;
  for (const raw of pointer.slice(1).split('/')) {
    const token = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (Array.isArray(current)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return MISSING;
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

/**
 * The `x-mcp-header` declarations of a tool's input schema (MCP 2026-07-28, "Custom Headers"):
 * which arguments travel as `Mcp-Param-*` headers. Read by the same rules where ringfence sends
 * them upstream (`upstream/mcp-headers.ts`) and where it checks a client's (`serve/http-param-headers.ts`).
 */

/** RFC 9110 `token`: what a header name may be (no space, control character or delimiter). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** The schema types an `x-mcp-header` property may have (`number` is excluded by the spec). */
const HEADER_TYPES = new Set(['string', 'integer', 'boolean']);

export interface Declaration {
  readonly path: readonly string[];
  readonly header: string;
  readonly type: string;
}

/**
 * The `x-mcp-header` declarations of an input schema: only on properties reached through a chain
 * of `properties` (never under items, combinators or `$defs`), with a token name, a permitted type,
 * and names unique regardless of case. A schema that breaks any rule declares nothing: the call
 * goes without custom headers and a server that needs them refuses it, saying why.
 */
export function headerDeclarations(inputSchema: unknown): Declaration[] {
  const found: Declaration[] = [];
  const seen = new Set<string>();
  const visit = (node: unknown, path: string[]): boolean => {
    if (node === null || typeof node !== 'object' || Array.isArray(node)) return true;
    const schema = node as Record<string, unknown>;
    if (Object.hasOwn(schema, 'x-mcp-header')) {
      const header = schema['x-mcp-header'];
      const type = schema.type;
      if (path.length === 0 || typeof header !== 'string' || !TOKEN.test(header)) return false;
      if (typeof type !== 'string' || !HEADER_TYPES.has(type)) return false;
      if (seen.has(header.toLowerCase())) return false;
      seen.add(header.toLowerCase());
      found.push({ path, header, type });
    }
    const properties = schema.properties;
    if (properties === null || typeof properties !== 'object' || Array.isArray(properties)) return true;
    for (const [key, child] of Object.entries(properties)) if (!visit(child, [...path, key])) return false;
    return true;
  };
  return visit(inputSchema, []) ? found : [];
}

/** The argument a declaration's `path` names (own properties only), or undefined. */
export function declaredValue(args: unknown, path: readonly string[]): unknown {
  let value: unknown = args;
  for (const key of path)
    value =
      value !== null && typeof value === 'object' && Object.hasOwn(value, key)
        ? (value as Record<string, unknown>)[key]
        : undefined;
  return value;
}

/**
 * `Mcp-Param-*` of a 2026 `tools/call` checked against its body, as the SDK checks them only for
 * its high-level `McpServer` (ringfence serves a low-level `Server`, so the SDK never does it
 * here). The declarations come from the tool as the gateway lists it (its pinned `inputSchema`),
 * read by the same rules as the headers ringfence sends upstream (`upstream/mcp-headers.ts`). A
 * header that disagrees with the body, or is absent while the body carries the value, is refused
 * (400, -32020) before any decision: something in front of ringfence that routes or filters on a
 * header must never see one value while the call carries another.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { declaredValue, headerDeclarations } from '../schema/x-mcp-header.js';

/** The MCP `HeaderMismatch` error code. */
export const HEADER_MISMATCH = -32020;

const SENTINEL = /^=\?base64\?([A-Za-z0-9+/]*={0,2})\?=$/;
const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;

/** A header value as the client meant it: the sentinel's Base64 decoded, or undefined when malformed. */
function decoded(value: string): string | undefined {
  if (!value.startsWith('=?base64?')) return value;
  const match = SENTINEL.exec(value);
  if (!match) return undefined;
  const bytes = Buffer.from(match[1]!, 'base64');
  const text = bytes.toString('utf8');
  return Buffer.from(text, 'utf8').equals(bytes) ? text : undefined;
}

/** Why the headers disagree with `args` under `inputSchema`, or undefined when they agree. */
export function paramHeaderMismatch(
  inputSchema: unknown,
  args: unknown,
  headers: IncomingHttpHeaders,
): string | undefined {
  for (const { path, header, type } of headerDeclarations(inputSchema)) {
    const value = declaredValue(args, path);
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
    const name = `mcp-param-${header.toLowerCase()}`;
    const given = headers[name];
    if (given === undefined)
      return `the body carries ${path.join('.')}=${JSON.stringify(value)} but the ${name} header is absent`;
    const text = typeof given === 'string' ? decoded(given) : undefined;
    if (text === undefined)
      return `the ${name} header is sent more than once or carries an invalid Base64 value`;
    const agrees =
      type === 'integer' && typeof value === 'number' && CANONICAL_INTEGER.test(text)
        ? Number(text) === value
        : text === String(value);
    if (!agrees)
      return `the ${name} header decodes to ${JSON.stringify(text)} but the body carries ${path.join('.')}=${JSON.stringify(value)}`;
  }
  return undefined;
}

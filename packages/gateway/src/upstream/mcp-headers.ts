import { PROTOCOL_VERSION_META_KEY } from '@modelcontextprotocol/client';
import { declaredValue, headerDeclarations } from '../schema/x-mcp-header.js';

export { headerDeclarations };

/**
 * The HTTP headers a 2026-07-28 (modern) request carries besides its body (MCP streamable HTTP,
 * "Standard Request Headers" and "Custom Headers"). The SDK computes these only inside its own
 * transport and `callTool()`, and exports neither, so ringfence, which has its own transport and
 * forwards calls with `request()`, computes them here. A server checks every one against the body
 * and refuses a mismatch (-32020), so these must agree with what is sent, byte for byte.
 */

const SENTINEL_PREFIX = '=?base64?';
const SENTINEL_SUFFIX = '?=';
/** Where `Mcp-Name` comes from, per method. */
const NAME_SOURCE: Readonly<Record<string, string>> = {
  'tools/call': 'name',
  'prompts/get': 'name',
  'resources/read': 'uri',
  'tasks/get': 'taskId',
  'tasks/update': 'taskId',
  'tasks/cancel': 'taskId',
};

/**
 * A value as a header may carry it: plain when it is printable ASCII without leading or trailing
 * space, otherwise (a newline, a control or non-ASCII character, an empty value, or something that
 * already looks like the sentinel) Base64 of its UTF-8 inside `=?base64?…?=`. So no value an
 * upstream or a model chose can split a header or smuggle another one.
 */
export function headerValue(value: string): string {
  const plain =
    value.length > 0 &&
    value === value.trim() &&
    !(value.startsWith(SENTINEL_PREFIX) && value.endsWith(SENTINEL_SUFFIX)) &&
    /^[\t\x20-\x7e]*$/.test(value);
  return plain
    ? value
    : `${SENTINEL_PREFIX}${Buffer.from(value, 'utf8').toString('base64')}${SENTINEL_SUFFIX}`;
}

/**
 * `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` for a request whose `_meta` names a protocol
 * version (only modern requests do: a 2025 request gets none of them, as before).
 */
export function standardHeaders(message: unknown): Record<string, string> {
  if (message === null || typeof message !== 'object') return {};
  const { method, params, id } = message as { method?: unknown; params?: unknown; id?: unknown };
  if (typeof method !== 'string' || id === undefined) return {};
  const fields = params !== null && typeof params === 'object' ? (params as Record<string, unknown>) : {};
  const meta = fields._meta;
  const version =
    meta !== null && typeof meta === 'object'
      ? (meta as Record<string, unknown>)[PROTOCOL_VERSION_META_KEY]
      : undefined;
  if (typeof version !== 'string') return {};
  const headers: Record<string, string> = {
    'mcp-protocol-version': version,
    'mcp-method': method,
  };
  const source = Object.hasOwn(NAME_SOURCE, method) ? NAME_SOURCE[method] : undefined;
  const name = source === undefined ? undefined : fields[source];
  if (typeof name === 'string') headers['mcp-name'] = headerValue(name);
  return headers;
}

/**
 * `Mcp-Param-*` for one `tools/call`, from the PINNED tool's input schema (the definition the
 * gateway checked the call against, never a fresher listing the server may have changed) and the
 * call's arguments. An absent, null or mistyped value gets no header.
 */
export function paramHeaders(
  pinnedInputSchema: unknown,
  args: Record<string, unknown>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const { path, header, type } of headerDeclarations(pinnedInputSchema)) {
    const value = declaredValue(args, path);
    let text: string | undefined;
    if (type === 'string' && typeof value === 'string') text = value;
    else if (type === 'boolean' && typeof value === 'boolean') text = String(value);
    else if (type === 'integer' && typeof value === 'number' && Number.isSafeInteger(value))
      text = String(value);
    if (text !== undefined) headers[`mcp-param-${header.toLowerCase()}`] = headerValue(text);
  }
  return headers;
}

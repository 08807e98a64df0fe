import { normalizeHostName } from '../contract/hostname.js';
import { detectIpLiteral, type IpBytes } from '../contract/ip.js';

/**
 * The outcome of reading a request target. `malformed` targets are answered 400; `ip-literal`
 * targets are refused 403 before anything else happens (no DNS, no allowlist lookup).
 */
export type TargetParse =
  | { readonly kind: 'name'; readonly host: string; readonly port: number }
  | { readonly kind: 'ip-literal'; readonly host: string; readonly port: number; readonly ip: IpBytes | null }
  | { readonly kind: 'malformed'; readonly reason: string; readonly host: string; readonly port: number };

export interface ForwardTarget {
  readonly target: TargetParse;
  /** The request path (origin-form) to send upstream. */
  readonly path: string;
}

function parsePort(text: string): number | null {
  if (!/^[0-9]{1,5}$/.test(text)) return null;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : null;
}

/**
 * Classifies a host string (without port). The IP-literal check runs on the raw text *and* on the
 * IDNA form, because full-width digits (`１２７.０.０.１`) become ASCII digits under IDNA.
 */
export function classifyHost(rawHost: string, port: number): TargetParse {
  const literal = detectIpLiteral(rawHost);
  if (literal.literal) return { kind: 'ip-literal', host: rawHost.toLowerCase(), port, ip: literal.ip };
  const host = normalizeHostName(rawHost);
  if (host === null) return { kind: 'malformed', reason: 'invalid-host', host: rawHost.slice(0, 255), port };
  const after = detectIpLiteral(host);
  if (after.literal) return { kind: 'ip-literal', host, port, ip: after.ip };
  return { kind: 'name', host, port };
}

/**
 * Splits `host[:port]` / `[v6]:port`. `defaultPort` applies when the port is absent (Host headers
 * and absolute URIs); CONNECT passes `null` because its authority must carry a port.
 */
export function parseAuthority(authority: string, defaultPort: number | null): TargetParse {
  const bad = (reason: string): TargetParse => ({
    kind: 'malformed',
    reason,
    host: authority.slice(0, 255),
    port: defaultPort ?? 0,
  });
  if (authority === '' || authority.length > 1024) return bad('invalid-authority');
  if (authority.includes('@')) return bad('userinfo-in-authority');
  if (authority.includes('%')) {
    // Zone ids inside brackets are an IPv6 literal; anything else percent-encoded is malformed.
    if (authority.startsWith('[')) {
      const end = authority.indexOf(']');
      const port = parsePort(authority.slice(end + 2)) ?? defaultPort ?? 0;
      return { kind: 'ip-literal', host: authority.slice(0, end + 1).toLowerCase(), port, ip: null };
    }
    return bad('percent-encoding-in-authority');
  }
  let hostText: string;
  let portText: string | undefined;
  if (authority.startsWith('[')) {
    const end = authority.indexOf(']');
    if (end < 0) return bad('invalid-authority');
    hostText = authority.slice(0, end + 1);
    const rest = authority.slice(end + 1);
    if (rest !== '' && !rest.startsWith(':')) return bad('invalid-authority');
    portText = rest === '' ? undefined : rest.slice(1);
  } else {
    const colons = authority.split(':').length - 1;
    if (colons > 1) {
      // An unbracketed IPv6 address: refuse it as an address, whatever port it might end in.
      return { kind: 'ip-literal', host: authority.toLowerCase(), port: defaultPort ?? 0, ip: null };
    }
    const at = authority.lastIndexOf(':');
    hostText = at < 0 ? authority : authority.slice(0, at);
    portText = at < 0 ? undefined : authority.slice(at + 1);
  }
  let port: number;
  if (portText === undefined) {
    if (defaultPort === null) return bad('missing-port');
    port = defaultPort;
  } else {
    const parsed = parsePort(portText);
    if (parsed === null) return bad('invalid-port');
    port = parsed;
  }
  if (hostText === '') return bad('invalid-host');
  return classifyHost(hostText, port);
}

/**
 * Parsing is pure, and a proxy sees the same few authorities over and over (URI and Host of
 * every request), so results are memoised; the cache is dropped whole when full, which bounds
 * memory without LRU bookkeeping on the hot path.
 */
const memo = new Map<string, TargetParse>();
const MEMO_MAX = 4096;

function parseAuthorityCached(authority: string, defaultPort: number | null): TargetParse {
  const key = `${defaultPort ?? ''} ${authority}`;
  let parsed = memo.get(key);
  if (parsed === undefined) {
    parsed = parseAuthority(authority, defaultPort);
    if (memo.size >= MEMO_MAX) memo.clear();
    memo.set(key, parsed);
  }
  return parsed;
}

/** Parses a CONNECT request target (authority-form, port required). */
export function parseConnectTarget(target: string): TargetParse {
  return parseAuthorityCached(target, null);
}

/** Parses a Host header value (port 80 when absent). */
export function parseHostHeader(value: string): TargetParse {
  return parseAuthorityCached(value, 80);
}

/**
 * Parses a plain-HTTP proxy request target, which must be an absolute `http://` URI. Anything
 * else (origin-form, `https://`, `*`) is not a proxy request and is refused by the caller.
 */
export function parseForwardTarget(target: string): ForwardTarget | null {
  const match = /^http:\/\/([^/?#]*)([/?][^#]*)?$/i.exec(target);
  if (!match) return null;
  const authority = match[1] ?? '';
  let path = match[2] ?? '/';
  if (path.startsWith('?')) path = `/${path}`;
  return { target: parseAuthorityCached(authority, 80), path };
}

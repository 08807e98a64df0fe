/**
 * Header handling for plain-HTTP forwards. Works on `rawHeaders` (name/value pairs as received)
 * because `req.headers` merges or drops duplicates, which hides exactly the ambiguities that
 * request smuggling and Host confusion rely on.
 */

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
]);

export function countHeader(raw: readonly string[], name: string): number {
  let n = 0;
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) n++;
  return n;
}

export function headerValues(raw: readonly string[], name: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) if (raw[i]?.toLowerCase() === name) out.push(raw[i + 1] ?? '');
  return out;
}

/**
 * Removes hop-by-hop headers and any header the sender named in `Connection` (RFC 9110 7.6.1).
 * Transfer-Encoding is kept: Node re-frames the body on each side from it.
 */
export function stripHopByHop(raw: readonly string[]): string[] {
  const named = new Set<string>();
  for (const value of headerValues(raw, 'connection')) {
    for (const token of value.split(',')) {
      const t = token.trim().toLowerCase();
      if (t !== '') named.add(t);
    }
  }
  const out: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i] ?? '';
    const lower = name.toLowerCase();
    if (HOP_BY_HOP.has(lower) || named.has(lower)) continue;
    out.push(name, raw[i + 1] ?? '');
  }
  return out;
}

/**
 * Framing the proxy will not pass on, even where Node's parser tolerated it: two different
 * interpretations of where a body ends is how one request becomes two.
 */
export function framingProblem(raw: readonly string[]): string | null {
  const te = headerValues(raw, 'transfer-encoding');
  const cl = headerValues(raw, 'content-length');
  if (te.length > 0 && cl.length > 0) return 'bad-framing';
  if (te.length > 1) return 'bad-framing';
  if (te.length === 1 && te[0]?.trim().toLowerCase() !== 'chunked') return 'bad-framing';
  if (cl.length > 1) return 'bad-framing';
  if (cl.length === 1 && !/^[0-9]{1,15}$/.test(cl[0] ?? '')) return 'bad-framing';
  // Naming framing or Host in Connection would have them stripped before forwarding: the body
  // would reach the origin unframed (a second, unchecked request) or the request without Host.
  for (const value of headerValues(raw, 'connection')) {
    for (const token of value.split(',')) {
      if (PROTECTED.has(token.trim().toLowerCase())) return 'bad-connection-header';
    }
  }
  return null;
}

const PROTECTED = new Set(['host', 'content-length', 'transfer-encoding']);

/**
 * A CONNECT has no content (RFC 9110 9.3.6): whatever follows its head is tunnel data. A body
 * announced anyway is refused, since a reader that honours it would see a different tunnel start.
 * `Content-Length: 0` (sent by some clients) announces nothing and is let through.
 */
export function connectFramingProblem(raw: readonly string[]): string | null {
  if (countHeader(raw, 'transfer-encoding') > 0) return 'bad-framing';
  const cl = headerValues(raw, 'content-length');
  if (cl.length > 1 || (cl.length === 1 && cl[0] !== '0')) return 'bad-framing';
  return null;
}

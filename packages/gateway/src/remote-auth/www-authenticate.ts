/**
 * The Bearer challenge of a 401/403 `WWW-Authenticate` header (RFC 6750 §3, RFC 9728 §5.1):
 * which error, which scope the server needs, and where its protected-resource metadata is.
 *
 * The header comes from a server ringfence does not trust yet, so the parser is strict and
 * bounded: at most {@link MAX_HEADER_LENGTH} characters are read (a longer header is refused
 * whole, not cut, so no half-read value is used); a parameter given twice in the Bearer challenge
 * is dropped (RFC 6750 §3: "MUST NOT appear more than once"; first-wins or last-wins would let a
 * second value hide behind the first); commas inside quoted strings are values, not separators.
 */

export const MAX_HEADER_LENGTH = 8192;

export interface BearerChallenge {
  readonly scheme: 'Bearer';
  readonly error?: string;
  readonly error_description?: string;
  /** Space-separated scopes the server says the request needs. */
  readonly scope?: string;
  /** The URL of the server's protected-resource metadata (RFC 9728 §5.1). */
  readonly resource_metadata?: string;
  readonly realm?: string;
}

const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

/** Splits at commas outside quoted strings; undefined when a quote is left open. */
function splitTopLevel(header: string): string[] | undefined {
  const parts: string[] = [];
  let current = '';
  let quoted = false;
  for (let i = 0; i < header.length; i++) {
    const c = header[i]!;
    if (quoted) {
      current += c;
      if (c === '\\' && i + 1 < header.length) current += header[++i];
      else if (c === '"') quoted = false;
    } else if (c === '"') {
      quoted = true;
      current += c;
    } else if (c === ',') {
      parts.push(current);
      current = '';
    } else current += c;
  }
  if (quoted) return undefined;
  parts.push(current);
  return parts.map((part) => part.trim()).filter((part) => part !== '');
}

/** `name = value` with value a token or a quoted string; undefined when it is neither. */
function parseParam(text: string): [string, string] | undefined {
  const eq = text.indexOf('=');
  if (eq <= 0) return undefined;
  const name = text.slice(0, eq).trim().toLowerCase();
  const raw = text.slice(eq + 1).trim();
  if (!TOKEN.test(name)) return undefined;
  if (raw.startsWith('"')) {
    if (raw.length < 2 || !raw.endsWith('"')) return undefined;
    let value = '';
    for (let i = 1; i < raw.length - 1; i++) {
      const c = raw[i]!;
      if (c === '\\') value += raw[++i] ?? '';
      else if (c === '"') return undefined;
      else value += c;
    }
    return [name, value];
  }
  return TOKEN.test(raw) ? [name, raw] : undefined;
}

interface RawChallenge {
  scheme: string;
  params: Map<string, string>;
  duplicated: Set<string>;
}

/**
 * The Bearer challenge in a `WWW-Authenticate` header, or undefined when there is none (no
 * header, another scheme only, an open quote, or a header longer than {@link MAX_HEADER_LENGTH}).
 * Parameters that are malformed or given twice are left out; the challenge itself still counts.
 */
export function parseWwwAuthenticate(header: string | null | undefined): BearerChallenge | undefined {
  if (typeof header !== 'string' || header.length > MAX_HEADER_LENGTH) return undefined;
  const parts = splitTopLevel(header);
  if (!parts) return undefined;
  const challenges: RawChallenge[] = [];
  for (const part of parts) {
    // A new challenge starts with a scheme token followed by space and not by "=".
    const match = /^([!#$%&'*+.^_`|~0-9A-Za-z-]+)(?:\s+(.*))?$/s.exec(part);
    const startsChallenge = match && !/^\s*=/.test(part.slice(match[1]!.length));
    let rest = part;
    if (startsChallenge && (match[2] === undefined || !/^=/.test(part.slice(match[1]!.length).trim()))) {
      challenges.push({ scheme: match[1]!.toLowerCase(), params: new Map(), duplicated: new Set() });
      rest = match[2] ?? '';
      if (rest === '') continue;
    }
    const current = challenges.at(-1);
    if (!current) continue;
    const param = parseParam(rest);
    if (!param) continue; // token68 or garbage: not a parameter we read
    const [name, value] = param;
    if (current.params.has(name) || current.duplicated.has(name)) {
      current.params.delete(name);
      current.duplicated.add(name);
    } else current.params.set(name, value);
  }
  const bearer = challenges.find((challenge) => challenge.scheme === 'bearer');
  if (!bearer) return undefined;
  const pick = (name: string): Record<string, string> => {
    const value = bearer.params.get(name);
    return value === undefined ? {} : { [name]: value };
  };
  return {
    scheme: 'Bearer',
    ...pick('error'),
    ...pick('error_description'),
    ...pick('scope'),
    ...pick('resource_metadata'),
    ...pick('realm'),
  };
}

/** One challenge of a `WWW-Authenticate` header (RFC 9110 §11.6.1), as MCP's authorization reads it. */
export interface AuthChallenge {
  /** The auth scheme, lower-cased (`bearer`). */
  readonly scheme: string;
  /** RFC 6750 §3.1: `invalid_token`, `insufficient_scope`, `invalid_request`. */
  readonly error?: string;
  readonly error_description?: string;
  /** The scope the request needs (RFC 6750 §3), space-separated. */
  readonly scope?: string;
  /** Where the protected-resource metadata is (RFC 9728 §5.1). */
  readonly resource_metadata?: string;
}

const TOKEN = /[!#$%&'*+\-.^_`|~0-9A-Za-z]+/y;
const TOKEN68 = /[A-Za-z0-9\-._~+/]+=*/y;

/**
 * The Bearer challenge of a `WWW-Authenticate` header (else its first challenge): the scheme and
 * the auth-params MCP uses. Parameter names are case-insensitive; a value is a token or a quoted
 * string (with `\` escapes). A header that does not parse yields what was read before the fault,
 * never an exception: the caller decides on `scheme`/`error`, and an unreadable header is a bare
 * refusal. Values are the server's words, untrusted: shown only through the renderer.
 */
export function parseWwwAuthenticate(header: string): AuthChallenge {
  const challenges = readChallenges(header);
  return challenges.find((c) => c.scheme === 'bearer') ?? challenges[0] ?? { scheme: '' };
}

function readChallenges(header: string): AuthChallenge[] {
  const out: AuthChallenge[] = [];
  let at = 0;
  const skip = (chars: RegExp) => {
    while (at < header.length && chars.test(header[at]!)) at++;
  };
  const match = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = at;
    const found = pattern.exec(header);
    if (!found) return undefined;
    at = pattern.lastIndex;
    return found[0];
  };
  const quoted = (): string | undefined => {
    if (header[at] !== '"') return undefined;
    let value = '';
    for (at++; at < header.length; at++) {
      const char = header[at]!;
      if (char === '"') {
        at++;
        return value;
      }
      if (char === '\\') at++;
      value += header[at] ?? '';
    }
    return undefined;
  };
  while (at < header.length) {
    skip(/[\s,]/);
    const scheme = match(TOKEN);
    if (!scheme) break;
    const params: Record<string, string> = {};
    out.push(params as never);
    (params as { scheme?: string }).scheme = scheme.toLowerCase();
    skip(/\s/);
    // A token68 (`Negotiate abc==`) is a whole credential, not params: nothing MCP reads.
    const before = at;
    if (match(TOKEN68) !== undefined) {
      skip(/\s/);
      if (at >= header.length || header[at] === ',') continue;
    }
    at = before;
    // auth-param list: name = (token | quoted-string), separated by commas.
    for (;;) {
      skip(/[\s,]/);
      const start = at;
      const key = match(TOKEN);
      if (key === undefined) break;
      skip(/\s/);
      if (header[at] !== '=') {
        at = start; // the next challenge's scheme
        break;
      }
      at++;
      skip(/\s/);
      const value = header[at] === '"' ? quoted() : match(TOKEN);
      if (value === undefined) return out;
      const lower = key.toLowerCase();
      if (lower !== 'scheme' && !(lower in params)) params[lower] = value;
    }
  }
  return out.map((params) => {
    const p = params as unknown as Record<string, string>;
    return {
      scheme: p.scheme!,
      ...(p.error !== undefined ? { error: p.error } : {}),
      ...(p.error_description !== undefined ? { error_description: p.error_description } : {}),
      ...(p.scope !== undefined ? { scope: p.scope } : {}),
      ...(p.resource_metadata !== undefined ? { resource_metadata: p.resource_metadata } : {}),
    };
  });
}

import { RE2JS } from 're2js';
import type { Naming } from '../catalog/present.js';

/**
 * The gateway's resource namespace. Serving every server, the client sees each server's URI as
 * `ringfence:SERVER/` followed by the server's own URI, verbatim: a server name has no `/`, so
 * the first `/` ends it and the rest is exactly what the server listed (no decoding, no
 * normalisation: the same bytes go back to the same server). A URI template gets the same prefix,
 * which template expansion leaves alone. Serving one server (`--only`), the same holds for every
 * URI but those `isBareSafe` allows: a client shown a URI may open it by itself (a browser for
 * `https:`, the OS for `vscode:`, `smb:` or `\\host\share`), past the gateway and the server's
 * egress sidecar, and no list of such schemes is ever complete; so a URI is shown bare only when
 * its scheme is one nothing but an MCP server resolves, and namespaced otherwise. Reading goes
 * through the gateway either way.
 */
export const URI_PREFIX = 'ringfence:';

/**
 * The schemes `--only` shows bare: reserved for examples and tests, resolved by no browser, OS or
 * editor: `example` (RFC 7595) and `test` (the MCP conformance suite's). An allowlist, not a
 * denylist: a scheme not here is namespaced, whatever it is.
 */
export const BARE_SCHEMES: ReadonlySet<string> = new Set(['example', 'test']);

/**
 * A URI shown bare must also be plain: its scheme written in lower case at its very start, then
 * only letters, digits and `-._~:/?#@%&=+,;*{}` (`*` and `{}` for a template), ASCII only. No whitespace,
 * control, backslash, quote, bracket or parenthesis can make it read as something else (a second
 * link in text a client renders as markdown, a path on another host); such a URI is namespaced.
 */
const PLAIN_URI = /^([a-z][a-z0-9+.-]{0,31}):[A-Za-z0-9\-._~:/?#@%&=+,;*{}]*$/;

/** A URI longer than this is refused before any matching: no listed URI or template is near it. */
export const URI_MAX = 8192;

const NAMESPACED = /^ringfence:([a-z0-9][a-z0-9-]{0,31})\/([\s\S]*)$/;

/** The scheme of a URI or URI template, lower-cased; undefined when there is none. */
export function schemeOf(uri: string): string | undefined {
  return /^([A-Za-z][A-Za-z0-9+.-]{0,31}):/.exec(uri)?.[1]?.toLowerCase();
}

/** Whether `--only` may show `uri` as the server sent it (see `BARE_SCHEMES`, `PLAIN_URI`). */
export function isBareSafe(uri: string): boolean {
  if (uri.length > URI_MAX) return false;
  const scheme = PLAIN_URI.exec(uri)?.[1];
  return scheme !== undefined && BARE_SCHEMES.has(scheme);
}

/** The URI (or URI template) the client is shown for `uri` of `server`. */
export function clientUri(server: string, uri: string, naming: Naming): string {
  if (!naming.prefixed && isBareSafe(uri)) return uri;
  return `${URI_PREFIX}${server}/${uri}`;
}

/**
 * The server a client's URI names and the server's own URI in it, or undefined when it names
 * none. `only` is the one server of `--only`: there a bare URI is that server's, and a
 * namespaced one must name it.
 */
export function serverUri(uri: string, only?: string): { server: string; uri: string } | undefined {
  const namespaced = NAMESPACED.exec(uri);
  if (namespaced) {
    const [, server, rest] = namespaced as unknown as [string, string, string];
    if (only !== undefined && server !== only) return undefined;
    return { server, uri: rest };
  }
  if (only === undefined || schemeOf(uri) === 'ringfence') return undefined;
  return { server: only, uri };
}

/** Why a server's own URI or URI template cannot be exposed, or undefined when it can. */
export function uriProblem(uri: string): string | undefined {
  if (uri.length > URI_MAX) return `its URI is over ${URI_MAX} characters`;
  if (schemeOf(uri) === 'ringfence')
    return 'its URI uses the ringfence: scheme, which is the gateway’s own namespace';
  return undefined;
}

/** The most expressions a template may have: more is refused, not matched. */
const MAX_EXPRESSIONS = 32;

/**
 * RFC 6570 URI template → a regular expression matching the URIs it expands to, run by RE2
 * (linear time whatever the server wrote). `{var}`, `{.var}` and `{;var}` stand for one path
 * segment's worth (no `/`, `?` or `#`); `{+var}` and `{#var}` for anything; `{/var}` for more
 * path; `{?…}` and `{&…}` for a query. Returns a reason when the template cannot be matched.
 */
export function compileTemplate(template: string): RE2JS | string {
  if (template.length > URI_MAX) return `the template is over ${URI_MAX} characters`;
  let pattern = '';
  let expressions = 0;
  let rest = template;
  while (rest.length > 0) {
    const open = rest.indexOf('{');
    const literal = open < 0 ? rest : rest.slice(0, open);
    if (literal.includes('}')) return 'the template has a } without a {';
    pattern += RE2JS.quote(literal);
    if (open < 0) break;
    const close = rest.indexOf('}', open);
    if (close < 0) return 'the template has a { without a }';
    const body = rest.slice(open + 1, close);
    if (!/^[+#./;?&]?[A-Za-z0-9_%.,*:]+$/.test(body)) return `the template expression {${body}} is malformed`;
    if (++expressions > MAX_EXPRESSIONS) return `the template has more than ${MAX_EXPRESSIONS} expressions`;
    const operator = /^[+#./;?&]/.test(body) ? body[0] : '';
    pattern +=
      operator === '+' || operator === '#'
        ? '.*'
        : operator === '/'
          ? '(?:/.*)?'
          : operator === '?' || operator === '&'
            ? '(?:[?&][^#]*)?'
            : operator === '.' || operator === ';'
              ? `(?:\\${operator}[^/?#]*)?`
              : '[^/?#]*';
    rest = rest.slice(close + 1);
  }
  return RE2JS.compile(`^${pattern}$`, RE2JS.DOTALL);
}

/** Whether `uri` is one the template expands to (false for a template that cannot be matched). */
export function templateMatches(template: RE2JS | string, uri: string): boolean {
  return typeof template !== 'string' && uri.length <= URI_MAX && template.matches(uri);
}

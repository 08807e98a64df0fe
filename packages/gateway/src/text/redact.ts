/**
 * The one redactor: what every printer of ringfence (client import and setup, mcp ls, doctor,
 * the console, error messages) passes a URL, an argument list or a message through before a
 * person sees it. Deterministic: the same input always gives the same output, and a value it
 * hides is replaced whole by `***`, never shortened. What counts as a secret is in
 * secret-shapes.ts; the rules are documented in docs/untrusted-text.md ("Secrets are not shown").
 */

import { findFormats } from '../credentials/scan/formats.js';
import { rendered } from './render.js';
import {
  hasTokenShape,
  isCredentialName,
  isCredentialParameter,
  looksLikeSecretWord,
} from './secret-shapes.js';

export const REDACTED = '***';

/** Flags whose value is `NAME=VALUE` or `Name: value` (docker -e, curl and mcp-remote -H): the name is kept, the value never. */
const PAIR_FLAGS = new Set(['-e', '--env', '-H', '--header']);

/** A flag on its own: `-x`, `--name`, `--name-with-dashes` (not `-`, `--`, or a negative number). */
const FLAG = /^--?[A-Za-z][A-Za-z0-9_.-]*$/;

/** `Bearer X`, `Basic X`: an Authorization value written out. */
const AUTH_SCHEME = /\b(Bearer|Basic|Digest)(\s+)[A-Za-z0-9._~+/=-]{6,}/gi;

/** `scheme://…` in running text, up to a space or a quote. */
const URL_IN_TEXT = /\b[A-Za-z][A-Za-z0-9+.-]*:\/\/[^\s"'<>`]+/g;

/** `user:password@host` in running text, with no scheme before it (a URL is handled whole). */
const USERINFO_IN_TEXT = /(?<![\w/.:%~-])[A-Za-z0-9._~%-]+:(?!\/\/)[^\s@'"<>`]+@(?=[A-Za-z0-9[])/g;

/**
 * `name=value`, `name: value` or `"name": "value"` in running text (`value` up to a space or a
 * separator; a quoted value up to its closing quote, escaped quotes inside it included). In YAML
 * the value may be on the next line, indented (`token:\n  VALUE`), unless that line is a key of
 * its own or a list item (a nested mapping is not a value).
 */
const PAIR_IN_TEXT =
  /([A-Za-z_][A-Za-z0-9_.-]*)(["']?[ \t]*(?:=|:)(?:[ \t]*\r?\n[ \t]+(?![A-Za-z_][\w.-]*[ \t]*:(?:\s|$)|-\s)|[ \t]*))("(?:[^"\\\r\n]|\\.)*"|'(?:[^'\\\r\n]|\\.)*'|[^\s&;,'"]+)/g;

/** Scheme words an Authorization value begins with (`Bearer X`, `token X`, `ApiKey X`…). */
const SCHEME_WORD =
  /^(?:Bearer|Basic|Digest|Token|Negotiate|NTLM|ApiKey|Api-Key|Key|Hawk|AWS4-HMAC-SHA256|DPoP|MAC)$/i;

/**
 * `Authorization: …` and `Proxy-Authorization: …` (a header line, a `-H` value in a message):
 * the whole rest of the value, up to the end of the line or a closing quote or bracket, is the
 * credential, whatever scheme it names; a leading scheme word followed by a value is kept.
 */
const AUTHORIZATION_IN_TEXT =
  /\b((?:Proxy-)?Authorization)(["']?[ \t]*[:=][ \t]*)((?:[A-Za-z][A-Za-z0-9-]*[ \t]+)?)([^\r\n"'`)\]}]+)/gi;

/** `Cookie: a=1; session=X` (and `Set-Cookie:`): pairs named like a credential parameter are hidden. */
const COOKIE_IN_TEXT = /\b((?:Set-)?Cookie)([ \t]*:[ \t]*)([^\r\n"'`]+)/gi;

/** `-u user:password`, `--user user:password` in running text (curl, wget). */
const USER_FLAG_IN_TEXT = /((?:^|[\s"'])(?:-u|--user)(?:=|[ \t]+))([^\s:'"]+):([^\s'"]+)/g;

/** `//user:password@host` (scheme-relative, no scheme before it) in running text. */
const SCHEME_RELATIVE_USERINFO = /(?<![\w:/])\/\/[^\s/@'"<>`]+@(?=[A-Za-z0-9[])/g;

/** What a message writes where a person fills in a value (`--token TOKEN`, `KEY=VALUE`, `…`). */
const PLACEHOLDER = /^(?:[A-Z][A-Z_]{1,15}|…|\.\.\.|\*+|\.{1,2}\/\S*|~\/\S*)[.,;:)\]]*$/;

/** `--name value` or `--name=value` in running text. */
const FLAG_IN_TEXT = /(--?[A-Za-z][A-Za-z0-9_.-]*)(=|[ \t]+)("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|[^\s'"]+)/g;

/** Every known token format in `text` (credentials/scan/formats.ts), each replaced whole. */
function replaceTokenShapes(text: string): string {
  const hits = findFormats(text);
  if (hits.length === 0) return text;
  let out = '';
  let at = 0;
  for (const hit of hits) {
    // Hits come in order of where they start; one overlapping the last extends what it hides.
    if (hit.start < at) {
      at = Math.max(at, hit.end);
      continue;
    }
    out += `${text.slice(at, hit.start)}${REDACTED}`;
    at = hit.end;
  }
  return out + text.slice(at);
}

/** `a=1&token=x`: each credential-named parameter's value, and each secret-looking one, hidden. */
function redactParameters(query: string, separator: RegExp): string {
  return query
    .split(separator)
    .map((pair, index) => {
      // split() with a capturing group keeps the separators at odd indexes.
      if (index % 2 === 1) return pair;
      const eq = pair.indexOf('=');
      if (eq === -1) return redactWord(pair);
      const name = pair.slice(0, eq);
      // `#<token>=` (base64 padding) is a value, not a name: judged whole.
      if (redactWord(name) !== name) return REDACTED;
      let decoded = name;
      try {
        decoded = decodeURIComponent(name.replace(/\+/g, ' '));
      } catch {}
      if (isCredentialParameter(decoded)) return `${name}=${REDACTED}`;
      const value = pair.slice(eq + 1);
      const word = redactWord(value);
      if (word !== value) return `${name}=${word}`;
      // A value that is itself a URL with credentials, a header, `Bearer X`…: hidden whole.
      let text = value;
      try {
        text = decodeURIComponent(value.replace(/\+/g, ' '));
      } catch {}
      return redactText(text) === text ? pair : `${name}=${REDACTED}`;
    })
    .join('');
}

/** `a=1; session=X`: a pair named like a credential parameter (`session`, `sid`, `token`…) loses its value. */
function redactCookiePairs(pairs: string): string {
  return pairs
    .split(/(;[ \t]*)/)
    .map((pair, index) => {
      if (index % 2 === 1) return pair;
      const eq = pair.indexOf('=');
      if (eq <= 0) return pair;
      const name = pair.slice(0, eq).trim();
      return isCredentialParameter(name) || redactWord(pair.slice(eq + 1)) !== pair.slice(eq + 1)
        ? `${pair.slice(0, eq)}=${REDACTED}`
        : pair;
    })
    .join('');
}

/** One word on its own: a known token or a long random-looking word becomes `***`. */
function redactWord(word: string): string {
  if (word === '') return word;
  let decoded = word;
  try {
    decoded = decodeURIComponent(word);
  } catch {}
  if (looksLikeSecretWord(word) || looksLikeSecretWord(decoded)) return REDACTED;
  const shaped = replaceTokenShapes(word);
  return shaped !== word || replaceTokenShapes(decoded) !== decoded ? REDACTED : word;
}

/**
 * A URL as a person may see it: credentials (`user:pass@`) become `***@`; a query or fragment
 * parameter named like a credential (`token`, `api_key`, `X-Amz-Signature`, `code`, `sig`…, in
 * any case) keeps its name and loses its value; any other parameter value, path segment or
 * fragment that is a known token or looks random (secret-shapes.ts) is hidden too. Text that is
 * not a URL is redacted as text.
 */
export function redactUrl(raw: string): string {
  // `//user:password@host/x`, scheme-relative: read as a URL with an authority.
  if (raw.startsWith('//')) return redactUrl(`x:${raw}`).slice(2);
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*:)([/\\]*)/.exec(raw);
  if (!scheme) return redactText(raw);
  const url = withoutMalformedUserinfo(raw, scheme[0]);
  let parsed: URL | undefined;
  try {
    parsed = new URL(url);
  } catch {}
  // A URL that parses is shown as WHATWG URL parsing reads it (what a client would connect to):
  // `https:\\u:p@h`, `https:/u:p@h` and `https://u:p@ss@h` all have userinfo there.
  if (parsed && (scheme[2]!.length >= 2 || SPECIAL_SCHEMES.test(parsed.protocol))) {
    const userinfo = parsed.username !== '' || parsed.password !== '' ? `${REDACTED}@` : '';
    return `${parsed.protocol}//${userinfo}${parsed.host}${shownRest(parsed.pathname, parsed.search, parsed.hash)}`;
  }
  const head = scheme[0];
  let rest = url.slice(head.length);
  let authority = '';
  if (scheme[2]!.length >= 2 || SPECIAL_SCHEMES.test(scheme[1]!)) {
    // Not a URL that parses: the authority is taken up to the first slash, past any `?` or `#`,
    // so a password holding one is still hidden whole.
    const slash = rest.search(/[/\\]/);
    authority = slash === -1 ? rest : rest.slice(0, slash);
    rest = slash === -1 ? '' : rest.slice(slash);
    const at = authority.lastIndexOf('@');
    if (at !== -1) authority = `${REDACTED}@${authority.slice(at + 1)}`;
    const end = authority.search(/[?#]/);
    if (end !== -1) {
      rest = `${authority.slice(end)}${rest}`;
      authority = authority.slice(0, end);
    }
  } else {
    // No authority (`user:pass@host`, `mailto:x@y`): what comes before an `@` in the first
    // segment is read as userinfo.
    const first = rest.search(/[/\\?#]/);
    const segment = first === -1 ? rest : rest.slice(0, first);
    const at = segment.lastIndexOf('@');
    if (at !== -1) {
      authority = `${REDACTED}@${segment.slice(at + 1)}`;
      rest = first === -1 ? '' : rest.slice(first);
    }
  }
  const hashAt = rest.indexOf('#');
  const fragment = hashAt === -1 ? '' : rest.slice(hashAt);
  if (hashAt !== -1) rest = rest.slice(0, hashAt);
  const queryAt = rest.indexOf('?');
  const query = queryAt === -1 ? '' : rest.slice(queryAt);
  if (queryAt !== -1) rest = rest.slice(0, queryAt);
  return `${head}${authority}${shownRest(rest, query, fragment)}`;
}

/**
 * A password written with a `/` in it (`https://user:pa/ss@host`) makes URL parsing end the
 * authority early and read the rest as a path, password included. `NAME:VALUE@` before the last
 * `@` ahead of any `?` or `#`, where VALUE up to the first slash is not a port, is userinfo
 * whatever the parser says: it is replaced by `***@` before anything else reads the URL.
 */
function withoutMalformedUserinfo(url: string, head: string): string {
  const rest = url.slice(head.length);
  const end = rest.search(/[?#]/);
  const at = (end === -1 ? rest : rest.slice(0, end)).lastIndexOf('@');
  if (at === -1) return url;
  const candidate = rest.slice(0, at);
  const hidden = `${head}${REDACTED}@${rest.slice(at + 1)}`;
  // A token as the user name, slashes and all.
  if (redactWord(candidate) !== candidate) return hidden;
  const colon = candidate.indexOf(':');
  const slash = candidate.search(/[/\\]/);
  if (colon === -1 || (slash !== -1 && slash < colon)) return url;
  const afterColon = candidate.slice(colon + 1, slash === -1 ? undefined : slash);
  return /^\d+$/.test(afterColon) ? url : hidden;
}

/** Schemes WHATWG URL parsing gives an authority whatever follows their colon. */
const SPECIAL_SCHEMES = /^(?:https?|wss?|ftp|file):$/i;

/** Path, `?query` and `#fragment` (each with its leading character, or empty), redacted. */
function shownRest(path: string, query: string, fragment: string): string {
  const shownPath = path
    .split(/([/\\;])/)
    .map((part, index) => (index % 2 === 1 ? part : redactPathSegment(part)))
    .join('');
  const shownQuery = query === '' ? '' : `?${redactParameters(query.slice(1), /([&;])/)}`;
  const shownFragment = fragment === '' ? '' : `#${redactParameters(fragment.slice(1), /([&;])/)}`;
  return `${shownPath}${shownQuery}${shownFragment}`;
}

/** A path segment: `name=value` (matrix parameters) by name, anything else by its look. */
function redactPathSegment(segment: string): string {
  const eq = segment.indexOf('=');
  if (eq > 0 && isCredentialParameter(segment.slice(0, eq))) return `${segment.slice(0, eq)}=${REDACTED}`;
  // Telegram's /bot<token>/ and similar: a prefix glued to a token.
  const shaped = redactWord(segment);
  if (shaped !== segment) return shaped;
  const glued = /^([A-Za-z]{2,8})([0-9]+:[A-Za-z0-9_-]{20,})$/.exec(segment);
  return glued ? `${glued[1]}${REDACTED}` : segment;
}

/** A `NAME=VALUE` or `Name: value` pair with the value hidden (the name is kept). */
function nameOnly(pair: string): string {
  const at = pair.search(/[=:]/);
  return at > 0 ? `${pair.slice(0, at + 1)}${pair[at] === ':' ? ' ' : ''}${REDACTED}` : redactValue(pair);
}

/**
 * One argument that is not a flag's credential value: a URL by {@link redactUrl}, `NAME=value`
 * with a credential-like NAME as `NAME=***`, a known token or a long random-looking word as
 * `***`, anything else as text.
 */
export function redactValue(arg: string): string {
  if (/^(?:[A-Za-z][A-Za-z0-9+.-]*:)?\/\//.test(arg)) return redactUrl(arg);
  const pair = /^([A-Za-z_][A-Za-z0-9_.-]*)(=|:\s*)([\s\S]*)$/.exec(arg);
  if (pair) {
    const [, name, sep, value] = pair as unknown as [string, string, string, string];
    if (isCredentialName(name)) return `${name}${sep}${REDACTED}`;
    if (/^[A-Za-z][A-Za-z0-9+.-]*:\/\//.test(value)) return `${name}${sep}${redactUrl(value)}`;
    const word = redactWord(value);
    if (word !== value) return `${name}${sep}${word}`;
  }
  if (redactWord(arg) !== arg) return isFilePath(arg) ? arg.split('/').map(redactWord).join('/') : REDACTED;
  return redactText(arg);
}

/**
 * A path people write (`/nix/store/<hash>-node/bin/node`): absolute, relative or from home, in
 * three segments or more, one of them a plain word. A random token that starts with `/` almost
 * never has a segment of letters only; a path is redacted segment by segment instead of whole.
 */
function isFilePath(arg: string): boolean {
  if (!/^(?:\/|\.{1,2}\/|~\/)/.test(arg)) return false;
  const segments = arg.split('/');
  return segments.length >= 3 && segments.some((segment) => /^[A-Za-z]{3,}$/.test(segment));
}

/**
 * An argument list as a person may see it. Hidden: the value after a credential-like flag, in
 * both `--token VALUE` and `--token=VALUE` forms (`--token`, `--pat`, `--api-key`, `--password`,
 * `--client-secret`, `--auth-header`…; a flag whose last word is file, path, dir, name, type, env
 * or var names where a secret is and is kept); the value of every `-e`/`--env`/`-H`/`--header`
 * pair (its name is kept); `NAME=value` with a credential-like NAME; credentials and credential
 * parameters in URLs; known token formats; and long random-looking positional arguments. Single-
 * letter flags other than -e and -H are not read as credentials (`-p` is a port as often as a
 * password).
 */
export function redactArgs(args: readonly string[]): string[] {
  const shown: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    const previous = args[i - 1];
    const next = args[i + 1];
    if (previous !== undefined && PAIR_FLAGS.has(previous)) {
      shown.push(nameOnly(arg));
      continue;
    }
    if (previous !== undefined && USER_FLAGS.has(previous)) {
      shown.push(userOnly(arg));
      continue;
    }
    const withValue = /^(--?[A-Za-z][A-Za-z0-9_.-]*)=([\s\S]*)$/.exec(arg);
    if (withValue && isFlagWord(withValue[1]!)) {
      const [, flag, value] = withValue as unknown as [string, string, string];
      if (PAIR_FLAGS.has(flag)) shown.push(`${flag}=${nameOnly(value)}`);
      else if (USER_FLAGS.has(flag)) shown.push(`${flag}=${userOnly(value)}`);
      else if (isCredentialFlag(flag)) shown.push(`${flag}=${REDACTED}`);
      else shown.push(`${flag}=${redactValue(value)}`);
      continue;
    }
    if (isFlagWord(arg)) {
      shown.push(arg);
      // The flag's value follows unless the next word is itself a long flag (`--auth --port
      // 80`): a word with one dash is the value (a secret may start with `-`). A scheme word
      // (`--auth Bearer X`) is hidden with the word after it.
      if (isCredentialFlag(arg) && next !== undefined && !(next.startsWith('--') && isFlagWord(next))) {
        if (next.startsWith('--') && /^--[A-Za-z]/.test(next)) {
          // `--token=…` or another long flag with a value: judged as an argument of its own.
          continue;
        }
        shown.push(REDACTED);
        i++;
        if (SCHEME_WORD.test(next) && args[i + 1] !== undefined) {
          shown.push(REDACTED);
          i++;
        }
      }
      continue;
    }
    shown.push(redactValue(arg));
  }
  return shown;
}

/** Flags whose value is `user` or `user:password` (curl and wget `-u`/`--user`). */
const USER_FLAGS = new Set(['-u', '--user']);

/** `user:password` with the password hidden; a user name alone is kept. */
function userOnly(value: string): string {
  const colon = value.indexOf(':');
  return colon === -1 ? redactValue(value) : `${value.slice(0, colon)}:${REDACTED}`;
}

/** A word that is a flag, not a value that happens to start with `-` (a random token may). */
function isFlagWord(word: string): boolean {
  return FLAG.test(word) && redactWord(word) === word;
}

/** `--token`, `--api-key`, `--clientSecret`: a flag of two letters or more named like a credential. */
function isCredentialFlag(flag: string): boolean {
  const name = flag.replace(/^--?/, '');
  return name.length > 1 && isCredentialName(name);
}

/**
 * A message, an error or a line of output as a person may see it: every URL in it by
 * {@link redactUrl}; `name=value`, `name: value`, `--name value` and `--name=value` with a
 * credential-like name, value hidden; `Bearer X` and `Basic X`; private key blocks and known
 * token formats. Random-looking words in running text are left alone (digests and ids are
 * legitimate there); arguments go through {@link redactArgs}, which hides those too.
 */
export function redactText(text: string): string {
  let out = replaceTokenShapes(text);
  out = out.replace(URL_IN_TEXT, (match) => {
    // Sentence punctuation after a URL is not part of it.
    const trail = /[.,;:!?)\]}]+$/.exec(match)?.[0] ?? '';
    return `${redactUrl(match.slice(0, match.length - trail.length))}${trail}`;
  });
  out = out.replace(USERINFO_IN_TEXT, `${REDACTED}@`);
  out = out.replace(SCHEME_RELATIVE_USERINFO, `//${REDACTED}@`);
  out = out.replace(USER_FLAG_IN_TEXT, (_m, flag: string, user: string) => `${flag}${user}:${REDACTED}`);
  out = out.replace(AUTH_SCHEME, (_match, scheme: string, space: string) => `${scheme}${space}${REDACTED}`);
  const kept = (value: string) => value === REDACTED || PLACEHOLDER.test(value) || SCHEME_WORD.test(value);
  out = out.replace(
    AUTHORIZATION_IN_TEXT,
    (_m, name: string, sep: string, scheme: string, value: string) =>
      `${name}${sep}${SCHEME_WORD.test(scheme.trim()) ? scheme : ''}${kept(value.trim()) && !SCHEME_WORD.test(value.trim()) ? value : `${REDACTED}${/\s*$/.exec(value)![0]}`}`,
  );
  // A value after a credential flag is hidden unless it is itself a long flag (`--auth --port`):
  // one dash starts a value as well as a flag.
  out = out.replace(FLAG_IN_TEXT, (match, flag: string, gap: string, value: string) =>
    flag.length > 2 &&
    isCredentialFlag(flag) &&
    (gap === '=' || !(value.startsWith('--') && isFlagWord(value))) &&
    !kept(value)
      ? `${flag}${gap}${REDACTED}`
      : match,
  );
  out = out.replace(PAIR_IN_TEXT, (match, name: string, sep: string, value: string) =>
    isCredentialName(name) && !kept(value) && !value.startsWith('//') ? `${name}${sep}${REDACTED}` : match,
  );
  out = out.replace(
    COOKIE_IN_TEXT,
    (_m, name: string, sep: string, pairs: string) => `${name}${sep}${redactCookiePairs(pairs)}`,
  );
  return out;
}

/**
 * A parsed JSON value with every string leaf passed through `redactText` (object keys are kept):
 * for printing a whole record (an audit entry) a person may read.
 */
export function redactJson(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactJson);
  if (typeof value === 'object' && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [key, leaf] of Object.entries(value)) out[key] = redactJson(leaf);
    return out;
  }
  return value;
}

/**
 * One stored JSON line as a person may see it: unchanged when no string leaf holds a secret,
 * else re-serialized with each such leaf redacted (`redactJson`) — then it is a copy that no
 * longer hashes to its chain digest; the file itself is what `audit verify` reads. A line that is
 * not JSON is redacted as text.
 */
export function redactJsonLine(raw: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    return redactText(raw);
  }
  const redacted = redactJson(parsed);
  return JSON.stringify(redacted) === JSON.stringify(parsed) ? raw : JSON.stringify(redacted);
}

/**
 * An error or reason for one report line: redacted (`redactText`), then rendered once as a line.
 * Every runtime and engine error `mcp serve` prints goes through here, so a URL with its token in
 * an error message is not shown.
 */
export function redactedLine(text: string): string {
  return rendered(redactText(text), 'line');
}

/**
 * A container image reference as a person may see it. A reference in the engine's grammar
 * (`[HOST[:PORT]/]PATH[:TAG][@ALGO:HEX]`) has no place for a credential, and its tags and digests
 * are long random-looking words by design (`node-base:20.20.2-f7282ee1bb67f1c9`), so it is shown as
 * it is unless a known token format sits in it. Anything outside the grammar (`u:p@host/img`) goes
 * through `redactValue`.
 */
export function redactImage(reference: string): string {
  if (IMAGE_REFERENCE.test(reference) && !hasTokenShape(reference)) return reference;
  return redactValue(reference);
}

const IMAGE_REFERENCE =
  /^(?:[a-z0-9](?:[a-z0-9.-]*[a-z0-9])?(?::[0-9]{1,5})?\/)?[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:\/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*(?::[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(?:@[a-z0-9]+(?:[+._-][a-z0-9]+)*:[0-9a-fA-F]{32,})?$/;

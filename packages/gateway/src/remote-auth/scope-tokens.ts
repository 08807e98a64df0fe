import { escapeOf } from '../text/render.js';

/**
 * Scopes a server chose (a 403's `WWW-Authenticate` scope, a token response's `scope`) end up in
 * a shell command that the person and the model are told to run (`ringfence mcp auth login NAME
 * --scope '…'`). So a scope token is kept only when it is both an RFC 6749 §3.3 scope-token
 * (printable ASCII but space, `"` and `\`) and made of a conservative shell-inert set: letters,
 * digits and `. _ : / + - = @ ,`, at most {@link MAX_SCOPE_TOKEN} characters, at most
 * {@link MAX_SCOPE_TOKENS} of them. That covers the scopes real servers use (`repo`, `read:org`,
 * `files.read`, `https://www.googleapis.com/auth/drive`, `api://app/.default`) and excludes every
 * character a shell gives meaning to (`$ \` ( ) ; & | < > * ? [ ] { } ~ ! # ' "` and whitespace).
 * The command still quotes the list POSIX-style in single quotes, in case this set ever widens.
 * A token left out is never echoed raw: {@link shownDropped} escapes every character outside the set.
 */
export const SCOPE_TOKEN = /^[A-Za-z0-9._:/+=@,-]+$/;
export const MAX_SCOPE_TOKEN = 128;
export const MAX_SCOPE_TOKENS = 32;

export interface SafeScopes {
  /** The tokens kept, in order, without repeats. */
  readonly kept: readonly string[];
  /** The tokens left out (raw: show them only through {@link shownDropped}). */
  readonly dropped: readonly string[];
}

/** The shell-safe scope tokens of space-separated lists (a server's, or stored from one). */
export function safeScopes(...lists: (string | undefined)[]): SafeScopes {
  const kept: string[] = [];
  const dropped: string[] = [];
  for (const token of lists.flatMap((list) => (list ?? '').split(/[ \t\r\n]+/)).filter(Boolean)) {
    if (kept.includes(token) || dropped.includes(token)) continue;
    if (SCOPE_TOKEN.test(token) && token.length <= MAX_SCOPE_TOKEN && kept.length < MAX_SCOPE_TOKENS)
      kept.push(token);
    else dropped.push(token);
  }
  return { kept, dropped };
}

/** A word quoted for a POSIX shell: single quotes, each `'` inside as `'\''`. */
export const shellQuoted = (word: string): string => `'${word.replaceAll("'", `'\\''`)}'`;

/**
 * Dropped tokens as people (and the model) may read them: at most 3, each clipped to 40
 * characters, every character outside the safe set shown as `\u{HEX}`, so nothing in it is a
 * shell metacharacter or a control character. One-to-one for what is shown (`\` is escaped too).
 */
export function shownDropped(dropped: readonly string[]): string {
  const one = (token: string) => {
    const chars = [...token];
    const shown = chars
      .slice(0, 40)
      .map((c) => (SCOPE_TOKEN.test(c) ? c : escapeOf(c.codePointAt(0)!)))
      .join('');
    return chars.length > 40 ? `${shown}…` : shown;
  };
  const listed = dropped.slice(0, 3).map(one).join(', ');
  return dropped.length > 3 ? `${listed} and ${dropped.length - 3} more` : listed;
}

/** The sentence saying which of the server's scope tokens were left out, or '' when none were. */
export function droppedNote(dropped: readonly string[] | undefined): string {
  if (!dropped?.length) return '';
  return ` The server also named ${dropped.length === 1 ? 'a scope' : `${dropped.length} scopes`} that ringfence does not pass to a command (not a plain scope token: ${shownDropped(dropped)}); ask the server's operator if a call still needs it.`;
}

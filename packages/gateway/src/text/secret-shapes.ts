/**
 * What a secret looks like, for the redactor (redact.ts): credential-like names, known token
 * formats, and the rule for a long random-looking word. Pure predicates, no replacing here.
 * The rules are documented in docs/untrusted-text.md ("Secrets are not shown").
 */

import { findFormats } from '../credentials/scan/formats.js';

/** Whole words (of a name split at `_`, `-`, `.` and camelCase) that name a credential. */
const CREDENTIAL_WORDS = new Set([
  'token',
  'tokens',
  'secret',
  'secrets',
  'password',
  'passwd',
  'passphrase',
  'pass',
  'pwd',
  'pw',
  'auth',
  'oauth',
  'authorization',
  'apikey',
  'key',
  'keys',
  'sig',
  'signature',
  'cookie',
  'credential',
  'credentials',
  'cred',
  'creds',
  'bearer',
  'jwt',
  'pat',
  'otp',
  'private',
  'privatekey',
  'hmac',
]);

/** Pieces that name a credential even inside one run of letters (`accesstoken`, `xapikey`). */
const CREDENTIAL_PIECES = [
  'token',
  'secret',
  'passw',
  'passphrase',
  'apikey',
  'credential',
  'privatekey',
  'accesskey',
  'authorization',
  'bearer',
  'cookie',
  'signature',
];

/** A last word that says the value names where a secret is, not the secret (`--token-file PATH`). */
const POINTER_WORDS = new Set(['file', 'path', 'dir', 'directory', 'name', 'type', 'env', 'var']);

/**
 * Query and fragment parameters that carry a credential under a name that, elsewhere, often
 * does not (`--session NAME` names an audit session; `exit code: 1` is not a secret).
 */
const QUERY_ONLY_NAMES = new Set(['code', 'sig', 'session', 'sessionid', 'session_id', 'sid']);

const wordsOf = (name: string): string[] =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);

/** A name (env variable, flag, header, query parameter) whose value is a credential. */
export function isCredentialName(name: string): boolean {
  const words = wordsOf(name);
  if (words.length === 0) return false;
  if (words.length > 1 && POINTER_WORDS.has(words[words.length - 1]!)) return false;
  if (words.some((word) => CREDENTIAL_WORDS.has(word))) return true;
  const compact = words.join('');
  return CREDENTIAL_PIECES.some((piece) => compact.includes(piece));
}

/** As {@link isCredentialName}, plus the short names signed URLs and OAuth redirects use. */
export function isCredentialParameter(name: string): boolean {
  return isCredentialName(name) || QUERY_ONLY_NAMES.has(name.toLowerCase());
}

/**
 * Whether `text` holds a known token format (a private-key block, a JWT, a vendor token…). The
 * formats are defined once, for this redactor and for the credential scan of arguments and
 * results alike, in credentials/scan/formats.ts, and found there in linear time.
 */
export function hasTokenShape(text: string): boolean {
  return findFormats(text).length > 0;
}

function shannonBits(text: string): number {
  const counts = new Map<string, number>();
  for (const c of text) counts.set(c, (counts.get(c) ?? 0) + 1);
  let bits = 0;
  for (const n of counts.values()) bits -= (n / text.length) * Math.log2(n / text.length);
  return bits;
}

/** Runs a word is made of: an acronym, a (capitalised) lower-case word, or digits. */
const RUNS = /[A-Z]+(?![a-z])|[A-Z]?[a-z]+|[0-9]+/g;

export const SECRET_WORD_MIN_LENGTH = 20;

/**
 * A long random-looking word (an argument on its own, a path segment, a parameter's value):
 * at least 20 characters of token characters (letters, digits, `+/=_.:~-`), not a relative or
 * home path, with a Shannon entropy of at least 2.5 bits per character, and one of: hexadecimal
 * with letters and digits; a UUID; or, over its alphanumeric pieces of 5 characters or more (at least 12
 * characters of them), an average run (acronym, word, digits) shorter than 3.5 characters, or 4
 * changes between letters and digits. Words people write (`server-filesystem`,
 * `claude-3-5-sonnet-20241022`, `MyVeryLongServerName`, `/home/me/projects`) have long runs and
 * few changes; random tokens have many. Measured on random tokens: 32 hex characters or more,
 * 32 base64 characters or more and UUIDs are always or almost always caught (misses under 0.1%);
 * 20 to 22 base64url characters miss up to about 2%. Known formats and values in a credential's
 * position do not depend on this rule.
 */
export function looksLikeSecretWord(word: string): boolean {
  if (word.length < SECRET_WORD_MIN_LENGTH || !/^[A-Za-z0-9+/=_.:~-]+$/.test(word)) return false;
  if (/^(?:\.{1,2}\/|~\/)/.test(word)) return false;
  if (shannonBits(word) < 2.5) return false;
  if (/^[0-9a-f]+$/i.test(word) && /[0-9]/.test(word) && /[a-f]/i.test(word)) return true;
  if (/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(word)) return true;
  const pieces = word.split(/[^A-Za-z0-9]+/).filter((piece) => piece.length >= 5);
  const length = pieces.reduce((sum, piece) => sum + piece.length, 0);
  if (length < 12) return false;
  const runs = pieces.reduce((sum, piece) => sum + (piece.match(RUNS)?.length ?? 0), 0);
  if (length / runs < 3.5) return true;
  let changes = 0;
  for (const piece of pieces)
    for (let i = 1; i < piece.length; i++)
      if (/[0-9]/.test(piece[i - 1]!) !== /[0-9]/.test(piece[i]!)) changes++;
  return changes >= 4;
}

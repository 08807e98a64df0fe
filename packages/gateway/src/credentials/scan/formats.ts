/**
 * Well-known secret formats, found in linear time: the one definition both the egress scan of
 * arguments (and the ingress redaction of results) and the redactor of what people are shown
 * (text/redact.ts) use. No regular expression runs on the text: each format begins with a literal
 * prefix, every prefix is found in one pass (an Aho-Corasick automaton, literals.ts, shared with
 * the stored values' needles), then a run of the format's body characters is read forward from
 * each, so a hostile string (`sk-sk-sk-…`, `eyJ-eyJ-…`, a megabyte of `AKIA` or of `x`) costs
 * one pass and a bounded amount per prefix, never a backtracking search. Each format is specific
 * enough (a vendor prefix and a length) that prose and identifiers do not match it. Documented in
 * docs/credentials.md ("What is detected").
 */

import type { CredentialClass } from '../known.js';
import { Automaton, type Keyed } from './literals.js';

/** Where a format was found in a text: `[start, end)`, and the class it names. */
export interface FormatHit {
  readonly start: number;
  readonly end: number;
  readonly class: CredentialClass;
}

type Body = (code: number) => boolean;

const isUpperOrDigit: Body = (c) => (c >= 48 && c <= 57) || (c >= 65 && c <= 90);
const isAlnum: Body = (c) => isUpperOrDigit(c) || (c >= 97 && c <= 122);
const isWord: Body = (c) => isAlnum(c) || c === 95; // [A-Za-z0-9_]
const isBase64Url: Body = (c) => isWord(c) || c === 45; // [A-Za-z0-9_-]
const isSlackBody: Body = (c) => isAlnum(c) || c === 45; // [A-Za-z0-9-]
const isBase64: Body = (c) => isAlnum(c) || c === 43 || c === 47; // [A-Za-z0-9+/]

/**
 * A token: `prefix` at a word boundary, then at least `min` characters of `body` (exactly `min`
 * and a word boundary after, when `exact`). `class` may depend on the token (`sk-ant-…`).
 */
interface TokenFormat {
  readonly prefixes: readonly string[];
  readonly body: Body;
  readonly min: number;
  readonly exact?: boolean;
  readonly class: CredentialClass | ((token: string) => CredentialClass);
}

/** The token formats; private-key blocks and JWTs have a shape of their own (below). */
export const TOKEN_FORMATS: readonly TokenFormat[] = [
  { prefixes: ['ghp_', 'gho_', 'ghu_', 'ghs_', 'ghr_'], body: isAlnum, min: 16, class: 'github' },
  { prefixes: ['github_pat_'], body: isWord, min: 16, class: 'github' },
  { prefixes: ['glpat-'], body: isBase64Url, min: 16, class: 'gitlab' },
  {
    prefixes: ['sk-'],
    body: isBase64Url,
    min: 16,
    class: (token) => (token.startsWith('sk-ant-') ? 'anthropic' : 'openai'),
  },
  {
    prefixes: ['sk_live_', 'sk_test_', 'pk_live_', 'pk_test_', 'rk_live_', 'rk_test_'],
    body: isAlnum,
    min: 10,
    class: 'stripe',
  },
  {
    prefixes: ['xoxa-', 'xoxb-', 'xoxe-', 'xoxp-', 'xoxo-', 'xoxs-', 'xoxr-', 'xapp-'],
    body: isSlackBody,
    min: 8,
    class: 'slack',
  },
  { prefixes: ['AKIA', 'ASIA', 'ABIA', 'ACCA'], body: isUpperOrDigit, min: 16, exact: true, class: 'aws' },
  { prefixes: ['AIza'], body: isBase64Url, min: 30, class: 'google' },
  { prefixes: ['ya29.'], body: isBase64Url, min: 16, class: 'google' },
  { prefixes: ['npm_'], body: isAlnum, min: 30, class: 'npm' },
  { prefixes: ['hf_'], body: isAlnum, min: 30, class: 'huggingface' },
  { prefixes: ['pypi-'], body: isBase64Url, min: 40, class: 'pypi' },
];

/** The end of the run of `body` characters from `from`, reading at most `limit` of them. */
function runEnd(text: string, from: number, body: Body, limit = Number.POSITIVE_INFINITY): number {
  let i = from;
  const stop = Math.min(text.length, from + limit);
  while (i < stop && body(text.charCodeAt(i))) i++;
  return i;
}

const wordBefore = (text: string, at: number): boolean => at > 0 && isWord(text.charCodeAt(at - 1));

/**
 * A shape: one of the token formats, a private-key block or a JWT. Its candidates are the
 * occurrences of its prefixes, in order; each tells where the next may start (after a match, or
 * after a run every later candidate inside it would fail alike), which keeps the reading linear.
 */
export type Shape = TokenFormat | 'private-key' | 'jwt';

/** A token at `at` (its prefix `prefix` characters long), or where the next candidate may start. */
function tokenAt(text: string, at: number, format: TokenFormat, prefix: number): FormatHit | number {
  if (wordBefore(text, at)) return at + 1;
  const bodyStart = at + prefix;
  const end = runEnd(text, bodyStart, format.body, format.exact ? format.min + 1 : undefined);
  const length = end - bodyStart;
  if (length < format.min) return at + 1;
  if (format.exact && (length !== format.min || (end < text.length && isWord(text.charCodeAt(end)))))
    return at + 1;
  const cls = typeof format.class === 'function' ? format.class(text.slice(at, end)) : format.class;
  return { start: at, end, class: cls };
}

const PEM_BEGIN = '-----BEGIN ';
const PEM_END = '-----END ';
const PEM_TAIL = 'PRIVATE KEY-----';
/** The longest label (`ENCRYPTED`, `OPENSSH`, `RSA`…) read before `PRIVATE KEY`. */
const PEM_LABEL_MAX = 64;
const isPemLabel: Body = (c) => isUpperOrDigit(c) || c === 32;

/** `-----BEGIN … PRIVATE KEY-----` or `-----END … PRIVATE KEY-----` at `at`: the marker's end, or -1. */
function pemMarker(text: string, at: number, head: string): number {
  const labelEnd = runEnd(text, at + head.length, isPemLabel, PEM_LABEL_MAX);
  // The label run includes `PRIVATE KEY` itself (letters and spaces): the tail must end it.
  const tailAt = labelEnd - 'PRIVATE KEY'.length;
  if (tailAt < at + head.length || !text.startsWith(PEM_TAIL, tailAt)) return -1;
  return tailAt + PEM_TAIL.length;
}

/**
 * A private-key block: from its BEGIN marker to its END marker, or to the end of the text when
 * the END is missing (a block cut short is still a key). The END search only moves on.
 */
function privateKeyAt(text: string, at: number): FormatHit | number {
  const bodyStart = pemMarker(text, at, PEM_BEGIN);
  if (bodyStart === -1) return at + 1;
  let end = text.length;
  for (let search = bodyStart; ; ) {
    const close = text.indexOf(PEM_END, search);
    if (close === -1) break;
    const closeEnd = pemMarker(text, close, PEM_END);
    if (closeEnd !== -1) {
      end = closeEnd;
      break;
    }
    search = close + 1;
  }
  return { start: at, end, class: 'private-key' };
}

const JWT_HEAD = 'eyJ'; // base64url of `{"`: a JSON object's start
const JWT_PART_MIN = 8;

/**
 * A JWT: three base64url parts joined by dots, the first beginning `eyJ` at a word boundary, the
 * first two at least 8 characters long. A candidate that fails fails for every `eyJ` later in
 * the same run (they share the run's end), so the next starts after the run.
 */
function jwtAt(text: string, at: number): FormatHit | number {
  if (wordBefore(text, at)) return at + 1;
  const headerEnd = runEnd(text, at, isBase64Url);
  if (headerEnd - at < JWT_HEAD.length + JWT_PART_MIN || text.charCodeAt(headerEnd) !== 46)
    return Math.max(at + 1, headerEnd);
  const payloadEnd = runEnd(text, headerEnd + 1, isBase64Url);
  if (payloadEnd - headerEnd - 1 < JWT_PART_MIN || text.charCodeAt(payloadEnd) !== 46)
    return Math.max(at + 1, payloadEnd);
  return { start: at, end: runEnd(text, payloadEnd + 1, isBase64Url), class: 'jwt' };
}

/** Every prefix a shape begins with: the needles of the one-pass search. */
export const SHAPE_PREFIXES: readonly Keyed<Shape>[] = [
  { text: PEM_BEGIN, key: 'private-key' },
  { text: JWT_HEAD, key: 'jwt' },
  ...TOKEN_FORMATS.flatMap((format) => format.prefixes.map((text) => ({ text, key: format }))),
];

/**
 * Reads the formats of one text from the occurrences of their prefixes, told as the one pass
 * finds them (each shape's in order of where they start); `hits` then holds what was found.
 */
export class FormatReader {
  readonly hits: FormatHit[] = [];
  /** Where each shape's next candidate may start. */
  private readonly from = new Map<Shape, number>();

  constructor(private readonly text: string) {}

  prefix(start: number, end: number, shape: Shape): void {
    if (start < (this.from.get(shape) ?? 0)) return;
    const { text } = this;
    const found =
      shape === 'private-key'
        ? privateKeyAt(text, start)
        : shape === 'jwt'
          ? jwtAt(text, start)
          : tokenAt(text, start, shape, end - start);
    if (typeof found === 'number') this.from.set(shape, found);
    else {
      this.hits.push(found);
      this.from.set(shape, found.end);
    }
  }
}

let prefixes: Automaton<Shape> | undefined;

/** Every known format in `text`, in order of where it starts (hits of different shapes may overlap). */
export function findFormats(text: string): FormatHit[] {
  prefixes ??= new Automaton(SHAPE_PREFIXES);
  const reader = new FormatReader(text);
  prefixes.scan(text, (start, end, shape) => reader.prefix(start, end, shape));
  return reader.hits.sort((a, b) => a.start - b.start || b.end - a.end);
}

/** An AWS secret access key: exactly 40 characters of base64, not part of a longer run. */
const AWS_SECRET_LENGTH = 40;

/**
 * AWS secret access keys in `text`: looked for only beside an access key id (in the same string
 * or a sibling, the caller decides), since 40 base64 characters alone are too common to name.
 */
export function findAwsSecrets(text: string): FormatHit[] {
  const out: FormatHit[] = [];
  let i = 0;
  while (i < text.length) {
    if (!isBase64(text.charCodeAt(i))) {
      i++;
      continue;
    }
    // `=` is not in the run: `aws_secret_access_key=KEY` leaves the key a run of its own.
    const end = runEnd(text, i, isBase64);
    const run = end - i === AWS_SECRET_LENGTH ? text.slice(i, end) : '';
    if (run && /[0-9]/.test(run) && /[A-Z]/.test(run) && /[a-z]/.test(run))
      out.push({ start: i, end, class: 'aws' });
    i = end;
  }
  return out;
}

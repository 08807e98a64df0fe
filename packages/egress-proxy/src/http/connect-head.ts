/**
 * The request head of a CONNECT, read by the proxy itself (the fast path in front.ts): a tunnel
 * needs only its target and header names, and Node's HTTP server costs a parser, connection
 * tracking and timers per connection to produce them. Strict on purpose, stricter than Node's
 * parser: one `CONNECT <authority> HTTP/1.x` line, then `name: value` lines, all ending in CRLF;
 * no obs-fold, no NUL or other control bytes, the whole head within the byte cap. Anything else is
 * refused, never guessed at, so no two readers of these bytes can disagree about where the head ends.
 */

export type HeadOutcome =
  | {
      readonly kind: 'head';
      readonly target: string;
      /** Name/value pairs as received, like `IncomingMessage.rawHeaders`. */
      readonly rawHeaders: string[];
      /** Bytes after the head (the client may send its first bytes before the 200). */
      readonly rest: Buffer;
    }
  | { readonly kind: 'refuse'; readonly status: number; readonly reason: string };

export const CONNECT_PREFIX = Buffer.from('CONNECT ', 'latin1');

const CR = 0x0d;
const LF = 0x0a;
const SP = 0x20;
const HTAB = 0x09;
const COLON = 0x3a;

// RFC 9110 tchar: the only bytes a header name may have.
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~") TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++) TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++) TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++) TCHAR[c] = 1;

// Field-value bytes: HTAB, SP, visible ASCII and obs-text (Node accepts obs-text too); no CTL, no DEL.
const VALUE = new Uint8Array(256);
VALUE[HTAB] = 1;
for (let c = 0x20; c <= 0x7e; c++) VALUE[c] = 1;
for (let c = 0x80; c <= 0xff; c++) VALUE[c] = 1;

const MALFORMED = { kind: 'refuse', status: 400, reason: 'malformed-request' } as const;
const TOO_LARGE = { kind: 'refuse', status: 431, reason: 'headers-too-large' } as const;

/**
 * Incremental reader: `push` each chunk as it arrives; it answers `null` while the head is
 * incomplete and still valid so far, else the head or the refusal. Lines are checked as soon as
 * they are complete, so a bad line is refused at once whatever way the bytes were split.
 */
export class ConnectHeadReader {
  private buffer: Buffer = Buffer.alloc(0);
  /** Start of the first line not yet checked. */
  private lineStart = 0;
  /** Where the search for the next LF resumes. */
  private scanned = 0;
  private target = '';
  private readonly rawHeaders: string[] = [];

  constructor(private readonly maxHeadBytes: number) {}

  push(chunk: Buffer): HeadOutcome | null {
    this.buffer = this.buffer.length === 0 ? chunk : Buffer.concat([this.buffer, chunk]);
    const buffer = this.buffer;
    for (let lf = buffer.indexOf(LF, this.scanned); lf >= 0; lf = buffer.indexOf(LF, this.scanned)) {
      if (lf + 1 > this.maxHeadBytes) return TOO_LARGE;
      // Every line ends in CRLF: a lone LF is where lenient and strict readers part ways.
      if (lf === this.lineStart || buffer[lf - 1] !== CR) return MALFORMED;
      const start = this.lineStart;
      const end = lf - 1;
      this.lineStart = lf + 1;
      this.scanned = lf + 1;
      if (start === 0) {
        if (!this.requestLine(buffer, end)) return MALFORMED;
        continue;
      }
      if (end === start)
        return {
          kind: 'head',
          target: this.target,
          rawHeaders: this.rawHeaders,
          rest: buffer.subarray(lf + 1),
        };
      if (!this.headerLine(buffer, start, end)) return MALFORMED;
    }
    this.scanned = buffer.length;
    if (buffer.length > this.maxHeadBytes) return TOO_LARGE;
    return null;
  }

  /** `CONNECT SP authority SP HTTP/1.0|1.1`, ending at `end` (the CR). */
  private requestLine(buffer: Buffer, end: number): boolean {
    if (buffer.compare(CONNECT_PREFIX, 0, CONNECT_PREFIX.length, 0, CONNECT_PREFIX.length) !== 0)
      return false;
    const from = CONNECT_PREFIX.length;
    const version = end - 9;
    if (version <= from) return false;
    for (let i = from; i < version; i++) {
      const c = buffer[i] as number;
      if (c <= SP || c >= 0x7f) return false;
    }
    const tail = buffer.toString('latin1', version, end);
    if (tail !== ' HTTP/1.1' && tail !== ' HTTP/1.0') return false;
    this.target = buffer.toString('latin1', from, version);
    return true;
  }

  /** `name ":" OWS value OWS`, from `start` to `end` (the CR). */
  private headerLine(buffer: Buffer, start: number, end: number): boolean {
    let colon = start;
    // A line starting with SP/HTAB is obs-fold; a name must be tchars right up to the colon.
    while (colon < end && TCHAR[buffer[colon] as number] === 1) colon++;
    if (colon === start || colon === end || buffer[colon] !== COLON) return false;
    let from = colon + 1;
    let to = end;
    for (let i = from; i < to; i++) if (VALUE[buffer[i] as number] !== 1) return false;
    while (from < to && (buffer[from] === SP || buffer[from] === HTAB)) from++;
    while (to > from && (buffer[to - 1] === SP || buffer[to - 1] === HTAB)) to--;
    this.rawHeaders.push(buffer.toString('latin1', start, colon), buffer.toString('latin1', from, to));
    return true;
  }
}

/**
 * Whether bytes starting a connection can still be a CONNECT head: they are a prefix of
 * `CONNECT ` or start with it. `undefined` while too few bytes have arrived to tell.
 */
export function startsConnect(buffer: Buffer): boolean | undefined {
  const n = Math.min(buffer.length, CONNECT_PREFIX.length);
  if (buffer.compare(CONNECT_PREFIX, 0, n, 0, n) !== 0) return false;
  return n === CONNECT_PREFIX.length ? true : undefined;
}

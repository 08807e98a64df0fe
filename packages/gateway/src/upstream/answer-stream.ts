import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { JSONRPCMessageSchema } from '@modelcontextprotocol/core';
import { UpstreamError } from '../ports/errors.js';

const LF = 0x0a;
const CR = 0x0d;
const COLON = 0x3a;
const SPACE = 0x20;
const BOM = [0xef, 0xbb, 0xbf];
/** The fields an MCP event stream uses; a line naming anything else is not one. */
const FIELDS = ['data', 'id', 'event', 'retry'] as const;
const LONGEST_FIELD = 5;

export interface EventStreamLimits {
  /** Largest stream in all (the answer to one POST, buffered whole by the client's caller). */
  readonly maxTotalBytes?: number;
  /** Largest event, counted from the last blank line (a long-lived GET stream). */
  readonly maxEventBytes?: number;
}

export interface EventStreamHandlers {
  /** One JSON-RPC message, checked against the SDK's schema, from a `message` event. */
  readonly onMessage: (message: JSONRPCMessage) => void;
  /** An event carried an id (the stream can be resumed after it). */
  readonly onEventId?: (id: string) => void;
  /** The server asked for this reconnection delay. */
  readonly onRetry?: (ms: number) => void;
}

export const tooLarge = (max: number) =>
  new UpstreamError('UPSTREAM_ANSWER_TOO_LARGE', `the server's answer exceeded ${max} bytes; it was cut off`);
const malformed = (what: string) =>
  new UpstreamError(
    'UPSTREAM_MALFORMED',
    `the server's answer is not a valid MCP event stream: it sent ${what}; the call was ended`,
  );
const notAField = (name: string) =>
  `a line that is not an event field (${JSON.stringify(name.slice(0, 40))})`;

/**
 * Server-sent events read from the bytes as they come (no text decoding but of each event's data,
 * no stream layers), as strictly as MCP needs: every line is empty, a comment or one of the four
 * fields, and every message event is one JSON-RPC message. `feed` returns the first thing that
 * breaks this, or a cap exceeded, as an error; the stream is then over. Cost stays linear whatever
 * the line lengths and however the bytes are split.
 */
export class EventStreamParser {
  /** The id of the last event that had one (the `Last-Event-ID` to resume after). */
  lastEventId: string | undefined;
  /** Events dispatched so far (a resumed stream that brought none made no progress). */
  events = 0;
  private total = 0;
  /** Bytes of the event being received, up to the end of the last complete line. */
  private eventBytes = 0;
  /** The start of the current line, when a chunk ended inside it. */
  private partial: Buffer[] = [];
  private partialBytes = 0;
  private headChecked = false;
  private skipLF = false;
  private bomSeen = 0;
  private data: Buffer[] = [];
  private hasData = false;
  private type = '';
  private idSeen: string | undefined;

  constructor(
    private readonly handlers: EventStreamHandlers,
    private readonly limits: EventStreamLimits = {},
  ) {}

  feed(chunk: Buffer): UpstreamError | undefined {
    const { maxTotalBytes, maxEventBytes } = this.limits;
    this.total += chunk.length;
    if (maxTotalBytes !== undefined && this.total > maxTotalBytes) return tooLarge(maxTotalBytes);
    let start = 0;
    // A UTF-8 byte order mark may open the stream (as EventSource allows), split or not.
    while (this.bomSeen < BOM.length && start < chunk.length) {
      if (chunk[start] !== BOM[this.bomSeen]) {
        if (this.bomSeen > 0) return malformed('a broken byte order mark');
        this.bomSeen = BOM.length;
        break;
      }
      this.bomSeen += 1;
      start += 1;
    }
    if (this.skipLF && chunk.length > 0) {
      if (chunk[0] === LF) start = Math.max(start, 1);
      this.skipLF = false;
    }
    // Each search resumes where the last one stopped, so many short lines stay linear.
    let lf = chunk.indexOf(LF, start);
    let cr = chunk.indexOf(CR, start);
    while (start < chunk.length) {
      if (lf !== -1 && lf < start) lf = chunk.indexOf(LF, start);
      if (cr !== -1 && cr < start) cr = chunk.indexOf(CR, start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) {
        const rest = chunk.subarray(start);
        const problem = this.checkHead(rest);
        if (problem) return malformed(problem);
        this.partial.push(rest);
        this.partialBytes += rest.length;
        break;
      }
      const piece = chunk.subarray(start, end);
      const problem = this.checkHead(piece) ?? this.line(piece);
      if (problem) return problem instanceof UpstreamError ? problem : malformed(problem);
      start = end + 1;
      if (chunk[end] === CR) {
        if (start === chunk.length) this.skipLF = true;
        else if (chunk[start] === LF) start += 1;
      }
    }
    if (maxEventBytes !== undefined && this.eventBytes + this.partialBytes > maxEventBytes)
      return tooLarge(maxEventBytes);
    return undefined;
  }

  /** The field name of the current line is checked as soon as its first bytes are known. */
  private checkHead(piece: Buffer): string | undefined {
    if (this.headChecked || piece.length === 0) return undefined;
    const head =
      this.partialBytes === 0
        ? piece.toString('latin1', 0, Math.min(piece.length, LONGEST_FIELD + 1))
        : Buffer.concat([...this.partial, piece.subarray(0, LONGEST_FIELD + 1)]).toString(
            'latin1',
            0,
            Math.min(this.partialBytes + piece.length, LONGEST_FIELD + 1),
          );
    const colon = head.indexOf(':');
    const name = colon < 0 ? head : head.slice(0, colon);
    const possible =
      colon === 0 || (colon > 0 ? FIELDS.some((f) => f === name) : FIELDS.some((f) => f.startsWith(name)));
    if (!possible) return notAField(name);
    if (colon >= 0 || head.length > LONGEST_FIELD) this.headChecked = true;
    return undefined;
  }

  /** One complete line (the bytes after any partial start kept from earlier chunks). */
  private line(piece: Buffer): UpstreamError | string | undefined {
    const line =
      this.partialBytes === 0
        ? piece
        : Buffer.concat([...this.partial, piece], this.partialBytes + piece.length);
    this.partial = [];
    this.partialBytes = 0;
    this.headChecked = false;
    this.eventBytes += line.length + 1;
    const max = this.limits.maxEventBytes;
    if (max !== undefined && this.eventBytes > max) return tooLarge(max);
    if (line.length === 0) return this.dispatch();
    if (line[0] === COLON) return undefined;
    let colon = line.indexOf(COLON);
    if (colon < 0) colon = line.length;
    const name = line.toString('latin1', 0, Math.min(colon, LONGEST_FIELD + 1));
    const from = colon + 1 < line.length && line[colon + 1] === SPACE ? colon + 2 : colon + 1;
    const value = line.subarray(Math.min(from, line.length));
    if (name === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (name === 'event') this.type = value.toString('utf8');
    else if (name === 'id') {
      if (!value.includes(0)) this.idSeen = value.toString('utf8');
    } else if (name === 'retry') {
      const text = value.toString('latin1', 0, value.length);
      if (/^\d{1,9}$/.test(text)) this.handlers.onRetry?.(Number(text));
    } else return notAField(name);
    return undefined;
  }

  private dispatch(): UpstreamError | string | undefined {
    const { hasData, type, idSeen } = this;
    const parts = this.data;
    this.data = [];
    this.hasData = false;
    this.type = '';
    this.idSeen = undefined;
    this.eventBytes = 0;
    if (hasData || idSeen !== undefined) this.events += 1;
    if (idSeen !== undefined) {
      this.lastEventId = idSeen;
      this.handlers.onEventId?.(idSeen);
    }
    // As the SDK reads them: only message events with data carry JSON-RPC.
    if (!hasData || (type !== '' && type !== 'message')) return undefined;
    const data = (parts.length === 1 ? parts[0]! : joinLines(parts)).toString('utf8');
    if (data === '') return undefined;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return 'an event whose data is not JSON';
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) return 'an event that is not a JSON-RPC message';
    this.handlers.onMessage(parsed.data);
    return undefined;
  }
}

const NEWLINE = Buffer.from('\n');
function joinLines(parts: Buffer[]): Buffer {
  const joined: Buffer[] = [];
  for (const [index, part] of parts.entries()) {
    if (index > 0) joined.push(NEWLINE);
    joined.push(part);
  }
  return Buffer.concat(joined);
}

/** A network failure as people read it: an errno code, else the cause's text. */
export function describeNetworkError(error: unknown): string {
  for (const candidate of [error, (error as { cause?: unknown })?.cause]) {
    const code = (candidate as { code?: unknown })?.code;
    if (typeof code === 'string' && /^E[A-Z]+$/.test(code)) return code;
  }
  const cause = (error as { cause?: { message?: unknown } })?.cause;
  if (typeof cause?.message === 'string' && cause.message) return cause.message;
  return (error as Error)?.message ?? String(error);
}

import { JSONRPCMessageSchema } from '@modelcontextprotocol/sdk/types.js';
import { UpstreamError } from '../ports/errors.js';

/** The fields an MCP event stream uses; a line naming anything else is not one. */
const FIELDS = ['data', 'id', 'event', 'retry'] as const;
const LONGEST_FIELD = 5;

/** What became of the event stream that answers one call, once it is over or broken. */
export type AnswerStreamEnd =
  | { readonly kind: 'answered' }
  /** Ended before the answer, after an event id: the SDK resumes it with a GET (Last-Event-ID). */
  | { readonly kind: 'resumable'; readonly lastEventId: string }
  /** Ended, dropped or garbled before the answer: the answer will not come. */
  | { readonly kind: 'broken'; readonly error: UpstreamError };

/**
 * Server-sent events, read line by line as strictly as MCP needs: every line is empty, a comment
 * or one of the four fields, and every message event is one JSON-RPC message. The first thing
 * that breaks this is returned as a problem. Cost stays linear whatever the line lengths.
 */
class EventScanner {
  answered = false;
  lastEventId: string | undefined;
  private head = '';
  private rest: string[] = [];
  private skipLF = false;
  private data: string[] = [];
  private hasData = false;
  private type = '';

  feed(text: string): string | undefined {
    let start = 0;
    if (this.skipLF && text.startsWith('\n')) start = 1;
    this.skipLF = false;
    // Each search resumes where the last one stopped, so many short lines stay linear.
    let lf = text.indexOf('\n', start);
    let cr = text.indexOf('\r', start);
    while (start < text.length) {
      if (lf !== -1 && lf < start) lf = text.indexOf('\n', start);
      if (cr !== -1 && cr < start) cr = text.indexOf('\r', start);
      const end = lf === -1 ? cr : cr === -1 ? lf : Math.min(lf, cr);
      if (end === -1) return this.partial(text.slice(start));
      const problem = this.partial(text.slice(start, end)) ?? this.line();
      if (problem) return problem;
      start = end + 1;
      if (text[end] === '\r') {
        if (start === text.length) this.skipLF = true;
        else if (text[start] === '\n') start += 1;
      }
    }
    return undefined;
  }

  /** Part of the current line; its field name is checked as soon as it is known. */
  private partial(piece: string): string | undefined {
    if (piece.length === 0) return undefined;
    if (this.head.length <= LONGEST_FIELD && !this.head.includes(':')) {
      this.head += piece.slice(0, LONGEST_FIELD + 1);
      const colon = this.head.indexOf(':');
      const name = colon < 0 ? this.head : this.head.slice(0, colon);
      const possible =
        colon === 0 || (colon > 0 ? FIELDS.some((f) => f === name) : FIELDS.some((f) => f.startsWith(name)));
      if (!possible) return `a line that is not an event field (${JSON.stringify(name.slice(0, 40))})`;
    }
    this.rest.push(piece);
    return undefined;
  }

  /** The current line is complete. */
  private line(): string | undefined {
    const line = this.rest.join('');
    this.rest = [];
    this.head = '';
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return undefined;
    const colon = line.indexOf(':');
    const name = colon < 0 ? line : line.slice(0, colon);
    let value = colon < 0 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (name === 'data') {
      this.data.push(value);
      this.hasData = true;
    } else if (name === 'event') this.type = value;
    else if (name === 'id' && !value.includes('\u0000')) this.lastEventId = value;
    else if (name !== 'id' && name !== 'retry')
      return `a line that is not an event field (${JSON.stringify(name.slice(0, 40))})`;
    return undefined;
  }

  private dispatch(): string | undefined {
    const { hasData, type } = this;
    const data = this.data.join('\n');
    this.data = [];
    this.hasData = false;
    this.type = '';
    // As the SDK reads them: only message events with data carry JSON-RPC.
    if (!hasData || data === '' || (type !== '' && type !== 'message')) return undefined;
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return 'an event whose data is not JSON';
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) return 'an event that is not a JSON-RPC message';
    if ('result' in parsed.data || 'error' in parsed.data) this.answered = true;
    return undefined;
  }
}

/** A fetch failure or a broken body, as people read it: an errno code, else the cause's text. */
export function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: unknown })?.cause as { code?: unknown; message?: unknown } | undefined;
  const code = typeof cause?.code === 'string' ? cause.code : undefined;
  if (code && /^E[A-Z]+$/.test(code)) return code;
  if (typeof cause?.message === 'string' && cause.message) return cause.message;
  return code ?? (error as Error)?.message ?? String(error);
}

/**
 * The body of the event stream answering one call, passed on unchanged while it is watched:
 * garbage (a line that is no event field, an event that is no JSON-RPC message) fails the stream
 * at once, and `onEnd` says how it ended — answered, resumable, or broken (garbled, dropped, or
 * ended without the answer) — so that a call whose answer cannot come fails now rather than at
 * its timeout.
 */
export function watchAnswerStream(
  body: ReadableStream<Uint8Array>,
  onEnd: (end: AnswerStreamEnd) => void,
  /** The answer may not be longer than this (counted here, so no second stream layer does it). */
  maxBytes = Number.POSITIVE_INFINITY,
): ReadableStream<Uint8Array> {
  const reader = body.getReader();
  let seen = 0;
  const decoder = new TextDecoder();
  const scanner = new EventScanner();
  let ended = false;
  const end = (outcome: AnswerStreamEnd) => {
    if (ended) return;
    ended = true;
    onEnd(outcome);
  };
  const broken = (what: string) =>
    new UpstreamError('UPSTREAM_LOST', `${what} before it answered; the call was ended`);
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      let chunk: Awaited<ReturnType<typeof reader.read>>;
      try {
        chunk = await reader.read();
      } catch (error) {
        if (scanner.answered) end({ kind: 'answered' });
        else
          end({
            kind: 'broken',
            error: broken(`the connection to the server dropped (${describeNetworkError(error)})`),
          });
        return controller.error(error);
      }
      if (chunk.done) {
        if (scanner.answered) end({ kind: 'answered' });
        else if (scanner.lastEventId !== undefined)
          end({ kind: 'resumable', lastEventId: scanner.lastEventId });
        else end({ kind: 'broken', error: broken('the server ended its answer stream') });
        return controller.close();
      }
      seen += chunk.value.byteLength;
      if (seen > maxBytes) {
        const error = new UpstreamError(
          'UPSTREAM_ANSWER_TOO_LARGE',
          `the server's answer exceeded ${maxBytes} bytes; it was cut off`,
        );
        end({ kind: 'broken', error });
        await reader.cancel().catch(() => {});
        return controller.error(error);
      }
      const problem = scanner.feed(decoder.decode(chunk.value, { stream: true }));
      if (problem) {
        const error = new UpstreamError(
          'UPSTREAM_MALFORMED',
          `the server's answer is not a valid MCP event stream: it sent ${problem}; the call was ended`,
        );
        end({ kind: 'broken', error });
        await reader.cancel().catch(() => {});
        return controller.error(error);
      }
      controller.enqueue(chunk.value);
      if (scanner.answered) end({ kind: 'answered' });
    },
    // The reader (the SDK) gave up on the stream itself: the transport is closing.
    cancel: (reason) => {
      ended = true;
      return reader.cancel(reason);
    },
  });
}

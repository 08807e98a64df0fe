import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import type { UpstreamError } from '../ports/errors.js';
import { describeNetworkError, type EventStreamLimits, EventStreamParser } from './answer-stream.js';

const message = (value: unknown) => `data: ${JSON.stringify(value)}\n\n`;
const progressMessage = {
  jsonrpc: '2.0',
  method: 'notifications/progress',
  params: { progressToken: 't', progress: 1 },
};
const answerMessage = { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'é ✓ 𝄞' }] } };
const progress = message(progressMessage);
const answer = message(answerMessage);

/** Feed `chunks` through a parser; what it passed on, the ids it saw, and the first problem. */
function parse(chunks: (string | Buffer)[], limits?: EventStreamLimits) {
  const messages: JSONRPCMessage[] = [];
  const ids: string[] = [];
  const retries: number[] = [];
  const parser = new EventStreamParser(
    {
      onMessage: (m) => messages.push(m),
      onEventId: (id) => ids.push(id),
      onRetry: (ms) => retries.push(ms),
    },
    limits,
  );
  let problem: UpstreamError | undefined;
  for (const chunk of chunks) {
    problem = parser.feed(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
    if (problem) break;
  }
  return { messages, ids, retries, problem, parser };
}

/** The bytes of `text` cut into pieces of `size` bytes (multi-byte characters cut too). */
function pieces(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

describe('EventStreamParser', () => {
  const stream = `: hello\r\nretry: 1500\r\n${progress.replace(/\n/g, '\r\n')}event: other\ndata: not json, not ours\n\nid: 7\rdata:\r\r${answer}`;
  const expected = [progressMessage, answerMessage];

  it('reads the same messages however the bytes are split: at every byte, and in two at every position', () => {
    const whole = parse([stream]);
    expect(whole.problem).toBeUndefined();
    expect(whole.messages).toEqual(expected);
    expect(whole.ids).toEqual(['7']);
    expect(whole.retries).toEqual([1500]);
    expect(parse(pieces(stream, 1)).messages).toEqual(expected);
    const bytes = Buffer.from(stream);
    for (let cut = 1; cut < bytes.length; cut++) {
      const { messages, problem, ids } = parse([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect({ cut, problem, messages, ids }).toEqual({
        cut,
        problem: undefined,
        messages: expected,
        ids: ['7'],
      });
    }
  });

  it('takes LF, CRLF and CR line ends alike, a CRLF split between chunks included, and a leading BOM', () => {
    for (const ending of ['\n', '\r\n', '\r']) {
      const text = `\uFEFF${answer.replace(/\n/g, ending)}`;
      expect(parse(pieces(text, 1)).messages).toEqual([answerMessage]);
    }
    // A CRLF is one line end, not a line end and an empty line (which would dispatch the event
    // half-read), whether it comes in one chunk or split between two.
    const twoLines = `data: {"jsonrpc":"2.0",\r\ndata: "id":3,"result":{}}\r\n\r\n`;
    for (const size of [twoLines.length, 1, 2, 3]) {
      const { messages, problem } = parse(pieces(twoLines, size));
      expect({ size, problem, messages }).toEqual({
        size,
        problem: undefined,
        messages: [{ jsonrpc: '2.0', id: 3, result: {} }],
      });
    }
  });

  it('drops an event that the stream ends without its blank line', () => {
    const { messages, problem } = parse([progress, answer.trimEnd()]);
    expect(problem).toBeUndefined();
    expect(messages).toEqual([progressMessage]);
  });

  it.each([
    [
      'a line that is no event field',
      `${progress}hello world\n`,
      /a line that is not an event field \("hello /,
    ],
    [
      'binary garbage, before any line ends',
      '\u0000\u0001\u0002garbage',
      /a line that is not an event field/,
    ],
    ['an HTML error page', '<html><body>502 Bad Gateway', /a line that is not an event field \("<html>/],
    ['a field name longer than any field', 'datadata: x', /a line that is not an event field \("datada/],
    ['a bare start of a field name', `${progress}dat\n`, /a line that is not an event field \("dat"\)/],
    ['data that is not JSON', 'data: {not json\n\n', /an event whose data is not JSON/],
    ['JSON that is not JSON-RPC', 'data: {"hello":1}\n\n', /an event that is not a JSON-RPC message/],
  ])('fails at once on %s, however it is split', (_what, text, expected) => {
    expect(parse([text]).problem).toMatchObject({
      code: 'UPSTREAM_MALFORMED',
      message: expect.stringMatching(expected),
    });
    // Split, a line is refused as soon as its first bytes cannot start a field (named by those).
    const kind = expected.source.startsWith('an event') ? expected : /a line that is not an event field/;
    for (const chunks of [pieces(text, 1), pieces(text, 3)]) {
      const { problem } = parse(chunks);
      expect(problem).toMatchObject({ code: 'UPSTREAM_MALFORMED', message: expect.stringMatching(kind) });
    }
  });

  it('refuses an event over the per-event cap, in one chunk or many, and passes many small ones', () => {
    const big = `data: ${JSON.stringify({ ...progressMessage, params: { ...progressMessage.params, x: 'x'.repeat(2000) } })}\n\n`;
    for (const chunks of [[big], pieces(big, 100), pieces(big.slice(0, 1500), 100)]) {
      expect(parse(chunks, { maxEventBytes: 1024 }).problem).toMatchObject({
        code: 'UPSTREAM_ANSWER_TOO_LARGE',
        message: "the server's answer exceeded 1024 bytes; it was cut off",
      });
    }
    // A line that never ends is cut off as it grows, not buffered to the end.
    const endless = parse(['data: ', ...Array.from({ length: 20 }, () => 'y'.repeat(100))], {
      maxEventBytes: 1024,
    });
    expect(endless.problem?.code).toBe('UPSTREAM_ANSWER_TOO_LARGE');
    const many = parse(
      Array.from({ length: 50 }, () => progress),
      { maxEventBytes: 1024 },
    );
    expect(many.problem).toBeUndefined();
    expect(many.messages).toHaveLength(50);
  });

  it('refuses a stream over the total cap even when every event is small', () => {
    const { problem, messages } = parse(
      Array.from({ length: 50 }, () => progress),
      { maxTotalBytes: 20 * progress.length },
    );
    expect(problem?.code).toBe('UPSTREAM_ANSWER_TOO_LARGE');
    expect(messages).toHaveLength(20);
  });

  it('ignores an id with NUL, and a retry that is not a number', () => {
    const { ids, retries, parser } = parse(['id: 1\n\nid: a\u0000b\nretry: soon\nretry: 12x\n\n']);
    expect(ids).toEqual(['1']);
    expect(retries).toEqual([]);
    expect(parser.lastEventId).toBe('1');
  });

  it('stays linear on a flood of short lines', () => {
    const { messages, problem } = parse([`${':\n'.repeat(200_000)}${'\r'.repeat(200_000)}${answer}`]);
    expect(problem).toBeUndefined();
    expect(messages).toEqual([answerMessage]);
  });
});

describe('describeNetworkError', () => {
  it('names the errno code on the error or its cause, else the cause text', () => {
    expect(describeNetworkError(Object.assign(new Error('x'), { code: 'ECONNRESET' }))).toBe('ECONNRESET');
    expect(describeNetworkError(new TypeError('fetch failed', { cause: { code: 'ECONNREFUSED' } }))).toBe(
      'ECONNREFUSED',
    );
    expect(describeNetworkError(new Error('x', { cause: new Error('other side hung up') }))).toBe(
      'other side hung up',
    );
    expect(describeNetworkError(new Error('plain'))).toBe('plain');
  });
});

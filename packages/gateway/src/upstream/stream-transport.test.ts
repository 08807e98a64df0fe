import { PassThrough } from 'node:stream';
import type { JSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { droppedLineId } from './line-reader.js';
import { StreamTransport } from './stream-transport.js';

async function open(maxLineBytes: number) {
  const input = new PassThrough();
  const messages: JSONRPCMessage[] = [];
  const errors: string[] = [];
  let closed = false;
  const transport = new StreamTransport(input, new PassThrough(), undefined, maxLineBytes);
  transport.onmessage = (m) => messages.push(m);
  transport.onerror = (e) => errors.push(e.message);
  transport.onclose = () => {
    closed = true;
  };
  await transport.start();
  /** Writes `text` in pieces of `size` bytes, then waits for them to be read. */
  const feed = async (text: string, size = 1000) => {
    for (let i = 0; i < text.length; i += size) input.write(Buffer.from(text.slice(i, i + size)));
    await new Promise((r) => setImmediate(r));
  };
  return { messages, errors, feed, closed: () => closed };
}

const answer = (id: number, text: string) =>
  `${JSON.stringify({ result: { content: [{ type: 'text', text }] }, jsonrpc: '2.0', id })}\n`;

describe('StreamTransport', () => {
  it('fails only the call whose answer is over the cap, and keeps reading the connection', async () => {
    const t = await open(4096);
    await t.feed(answer(7, 'x'.repeat(20_000)) + answer(8, 'fine'), 777);
    expect(t.messages).toEqual([
      {
        jsonrpc: '2.0',
        id: 7,
        error: {
          code: -32603,
          message: "the server's answer exceeded 4096 bytes; it was dropped (the server is kept)",
        },
      },
      { jsonrpc: '2.0', id: 8, result: { content: [{ type: 'text', text: 'fine' }] } },
    ]);
    expect(t.closed()).toBe(false);
    // Id first, as other writers put it; and a line exactly at the cap still passes.
    await t.feed(`{"jsonrpc":"2.0","id":"a-1","result":{"t":"${'y'.repeat(9000)}"}}\n`);
    expect(t.messages.at(-1)).toMatchObject({ id: 'a-1', error: { code: -32603 } });
    const exact = answer(9, 'z'.repeat(100));
    const fits = answer(9, 'z'.repeat(100 + 4096 - exact.length + 1));
    await t.feed(fits);
    expect(t.messages.at(-1)).toMatchObject({ id: 9, result: {} });
  });

  it('reports an oversized line whose id cannot be read, and goes on', async () => {
    const t = await open(1024);
    await t.feed(`{"a":"${'q'.repeat(5000)}","b":1}\n${answer(3, 'ok')}`);
    expect(t.errors).toEqual([
      "the server's answer exceeded 1024 bytes; it was dropped (the server is kept), and whose answer it was is unknown",
    ]);
    expect(t.messages).toEqual([
      { jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'ok' }] } },
    ]);
    expect(t.closed()).toBe(false);
  });

  it('reads messages split anywhere across chunks, several per chunk, and CRLF', async () => {
    const t = await open(1 << 20);
    const text = `${answer(1, 'a').replace('\n', '\r\n')}${answer(2, 'b')}not json\n${answer(3, 'c')}`;
    await t.feed(text, 7);
    expect(t.messages.map((m) => (m as { id: number }).id)).toEqual([1, 2, 3]);
    expect(t.errors).toHaveLength(1);
  });
});

describe('droppedLineId', () => {
  it('reads a top-level id at the start or the end, and nothing nested', () => {
    const b = (s: string) => Buffer.from(s);
    expect(droppedLineId(b('{"jsonrpc":"2.0","id":12,"result":'), b('…'))).toBe(12);
    expect(droppedLineId(b('{"result":{"id":99,'), b('...]},"jsonrpc":"2.0","id":"x"}'))).toBe('x');
    expect(droppedLineId(b('{"result":{"id":99,'), b('"id":5}}'))).toBeUndefined();
  });

  it('once connected, hands plain answers on directly and every other line as the SDK parses it', async () => {
    const input = new PassThrough();
    const direct: unknown[] = [];
    const messages: unknown[] = [];
    const errors: string[] = [];
    const transport = new StreamTransport(input, new PassThrough());
    transport.onmessage = (m) => messages.push(m);
    transport.onerror = (e) => errors.push(e.constructor.name);
    transport.onresponse = (m) => direct.push(m);
    await transport.start();
    const lines = [
      '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}',
      // The SDK's schema drops a bad serverInfo: not the direct path.
      '{"jsonrpc":"2.0","id":2,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":1},"content":[]}}',
      '{"jsonrpc":"2.0","id":3,"result":{"__proto__":{"isError":true},"content":[]}}',
      '{"jsonrpc":"2.0","id":4,"result":[]}',
      '{"jsonrpc":"2.0","id":5,"result":{},"smuggled":1}',
      '{"jsonrpc":"2.0","id":6,"method":"roots/list"}',
      '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}',
      '{"jsonrpc":"2.0","id":7,"error":{"code":-1,"message":"no"}}',
      'not json',
    ];
    input.write(`${lines.join('\n')}\n`);
    await new Promise((r) => setImmediate(r));
    expect(direct).toEqual([{ jsonrpc: '2.0', id: 1, result: { content: [] } }]);
    expect(messages).toEqual([
      { jsonrpc: '2.0', id: 2, result: { _meta: {}, content: [] } },
      { jsonrpc: '2.0', id: 3, result: { content: [] } },
      { jsonrpc: '2.0', id: 6, method: 'roots/list' },
      { jsonrpc: '2.0', method: 'notifications/progress', params: { progressToken: 't', progress: 1 } },
      { jsonrpc: '2.0', id: 7, error: { code: -1, message: 'no' } },
    ]);
    expect(Object.hasOwn((messages[1] as { result: object }).result, '__proto__')).toBe(false);
    expect(errors).toEqual(['ZodError', 'ZodError', 'SyntaxError']);
  });
});

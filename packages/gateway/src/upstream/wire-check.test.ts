import { parseJSONRPCMessage } from '@modelcontextprotocol/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LooseResult, plainResultResponse } from './wire-check.js';

/** Lines a server might send: each taken by the fast path must come out as the SDK's schema hands it on. */
const LINES = [
  '{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"hi"}]}}',
  '{"id":"a","result":{"b":2,"a":1},"jsonrpc":"2.0"}',
  '{"jsonrpc":"2.0","id":7,"result":{}}',
  '{"jsonrpc":"2.0","id":1.5,"result":{}}',
  '{"jsonrpc":"2.0","id":9007199254740993,"result":{}}',
  '{"jsonrpc":"2.0","id":null,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":[]}',
  '{"jsonrpc":"2.0","id":1,"result":null}',
  '{"jsonrpc":"2.0","id":1,"result":"x"}',
  '{"jsonrpc":"2.0","id":1}',
  '{"jsonrpc":"1.0","id":1,"result":{}}',
  '{"jsonrpc":"2.0","id":1,"result":{},"extra":1}',
  '{"jsonrpc":"2.0","id":1,"result":{"__proto__":{"isError":true},"content":[]}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"io.modelcontextprotocol/serverInfo":7},"content":[]}}',
  '{"jsonrpc":"2.0","id":1,"result":{"_meta":{"progressToken":1}}}',
  '{"jsonrpc":"2.0","__proto__":{"id":1},"result":{}}',
  '{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"no"}}',
  '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}',
  '{"jsonrpc":"2.0","id":3,"method":"roots/list"}',
  '[{"jsonrpc":"2.0","id":1,"result":{}}]',
  '"text"',
  'null',
];

function sdk(line: string): unknown {
  try {
    return parseJSONRPCMessage(JSON.parse(line));
  } catch {
    return 'refused';
  }
}

describe('plainResultResponse', () => {
  it('takes only answers the SDK schema hands on unchanged, and hands on the same', () => {
    let taken = 0;
    for (const line of LINES) {
      const fast = plainResultResponse(JSON.parse(line));
      if (fast === undefined) continue;
      taken++;
      // The SDK's response dispatch reads the id and the result; the result is what the pipeline
      // sees and passes on, so its members and their order must be the same.
      const theirs = sdk(line) as { id: unknown; result: unknown };
      expect(fast.id, line).toBe(theirs.id);
      expect(JSON.stringify(fast.result), line).toBe(JSON.stringify(theirs.result));
      expect(fast).toEqual(theirs);
    }
    expect(taken).toBe(3);
  });

  it('leaves anything with _meta, __proto__, an odd id or extra members to the SDK', () => {
    for (const line of LINES.slice(3)) expect(plainResultResponse(JSON.parse(line)), line).toBeUndefined();
  });
});

describe('LooseResult', () => {
  const zod = z.looseObject({});
  const values: unknown[] = [
    {},
    { content: [{ type: 'text', text: 'x' }], isError: false },
    JSON.parse('{"__proto__":{"a":1},"b":2}'),
    [],
    null,
    'x',
    3,
    undefined,
  ];

  it('decides as z.looseObject({}) does, in the same words', async () => {
    for (const value of values) {
      const ours = await LooseResult['~standard'].validate(value);
      const theirs = await zod['~standard'].validate(value);
      expect(JSON.stringify(ours)).toBe(JSON.stringify(theirs));
      expect('issues' in ours && ours.issues !== undefined).toBe(
        'issues' in theirs && theirs.issues !== undefined,
      );
    }
  });
});

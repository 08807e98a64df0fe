import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { upstreamErrorText } from '../serve/pipeline/results.js';
import { validationSentence } from './validation-error.js';

describe('validationSentence', () => {
  const schema = z.object({
    content: z.array(
      z.union([
        z.object({ type: z.literal('text'), text: z.string() }),
        z.object({ type: z.literal('image') }),
      ]),
    ),
    n: z.number(),
  });
  const failure = schema.safeParse({ content: [{ type: 'video' }], n: 'x' }).error!;

  it('turns a zod error into one sentence naming the first problem', () => {
    const sentence = validationSentence(failure)!;
    expect(sentence).toMatch(
      /^the server's answer is not valid MCP \(at content\.0: .+, and 1 more problem\)$/,
    );
    expect(sentence).not.toContain('\n');
    expect(sentence).not.toContain('"code"');
  });

  it('reads the same dump from a message that carries it after a prefix', () => {
    const wrapped = new Error(`MCP error -32603: ${failure.message}`);
    expect(validationSentence(wrapped)).toBe(validationSentence(failure));
  });

  it("is what the model reads when an upstream answer fails the SDK's validation", () => {
    const text = upstreamErrorText(new Error(`MCP error -32603: ${failure.message}`));
    expect(text).toMatch(/^the server's answer is not valid MCP \(at content\.0: /);
    expect(text).not.toContain('invalid_union');
  });

  it('leaves other errors alone', () => {
    expect(validationSentence(new Error('connection refused'))).toBeUndefined();
    expect(validationSentence(new Error('list: [1, 2]'))).toBeUndefined();
    expect(validationSentence('text')).toBeUndefined();
  });
});

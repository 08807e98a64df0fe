import { describe, expect, it } from 'vitest';
import { stringBytes } from './measure.js';

describe('stringBytes', () => {
  it('is the UTF-8 size of the JSON string, whatever the string holds', () => {
    const texts = [
      '',
      'plain ascii',
      'x'.repeat(100_000),
      'quote " inside',
      'backslash \\ inside',
      'controls \u0000 \u001f \n \t \u007f',
      'é ü 中文 😀 \u2028',
      'lone \ud800 surrogate',
    ];
    for (const text of texts) {
      expect(stringBytes(text, Number.MAX_SAFE_INTEGER)).toBe(Buffer.byteLength(JSON.stringify(text)));
    }
  });

  it('refuses a string longer than what is left unread, by its length', () => {
    expect(stringBytes('x'.repeat(50), 10)).toBe(52);
  });
});

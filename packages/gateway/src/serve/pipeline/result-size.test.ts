import { digestOf } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import { measureAndDigest, measureResult } from './result-size.js';

describe('measureAndDigest: the size check and the audit digest from one serialisation', () => {
  const image = Buffer.alloc(3000, 7).toString('base64');
  const cases: Record<string, { content?: unknown; messages?: unknown; contents?: unknown }> = {
    'keys out of order': {
      content: [{ text: 'a', type: 'text' }],
      structuredContent: { z: 1, a: 2 },
    } as never,
    'escapes and non-ASCII': { content: [{ type: 'text', text: '"\\\n\u0001 é 中 😀 \u2028' }] },
    'a __proto__ member': JSON.parse('{"content":[],"__proto__":{"x":"yyyyyyyyyy"}}'),
    'base64 counted decoded': {
      content: [
        { type: 'image', data: image, mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'a:b', blob: image } },
      ],
    },
    'a prompt': { messages: [{ role: 'user', content: { type: 'audio', data: image, mimeType: 'a/b' } }] },
    'a read': { contents: [{ uri: 'a:b', blob: image }] },
  };
  for (const [name, result] of Object.entries(cases)) {
    it(`counts what measureResult counts and digests what digestOf digests: ${name}`, () => {
      const { size, digest } = measureAndDigest(result);
      expect(size).toBe(measureResult(result));
      expect(digest.digest).toBe(digestOf(result));
    });
  }

  it('still counts a result with no canonical form (a lone surrogate), whose digest is null', () => {
    const result = { content: [{ type: 'text', text: `${'x'.repeat(5000)}\ud800` }] };
    const { size, digest } = measureAndDigest(result);
    expect(size).toBe(measureResult(result));
    expect(size).toBeGreaterThan(5000);
    expect(digest.digest).toBeNull();
  });

  it('throws for a result nested too deeply to serialise, as measureResult does', () => {
    const deep = JSON.parse(`{"content":[],"x":${'['.repeat(50_000)}${']'.repeat(50_000)}}`);
    expect(() => measureResult(deep)).toThrow(RangeError);
    expect(() => measureAndDigest(deep)).toThrow(RangeError);
  });
});

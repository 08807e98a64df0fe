import { describe, expect, it } from 'vitest';
import { StderrTail } from './stderr-tail.js';

describe('StderrTail', () => {
  const secret = 'sk-live-0123456789abcdef';

  it('redacts env values wherever they appear', () => {
    const tail = new StderrTail([secret, 'ab']);
    tail.push(Buffer.from(`token=${secret}\nagain ${secret}\nab stays (too short to redact)\n`));
    expect(tail.text()).toBe('token=[redacted]\nagain [redacted]\nab stays (too short to redact)\n');
  });

  it('redacts a secret cut in two where older output was dropped', () => {
    const tail = new StderrTail([secret], 64);
    tail.push(Buffer.from(`${'x'.repeat(100)}${secret.slice(0, 10)}`));
    tail.push(Buffer.from(`${secret.slice(10)}${'y'.repeat(40)}`));
    const kept = tail.text();
    expect(Buffer.byteLength(kept)).toBeLessThanOrEqual(64);
    expect(kept.startsWith('[redacted]')).toBe(true);
    expect(kept).not.toContain(secret.slice(10, 16));
  });

  it('redacts the start of a secret still being written at the end', () => {
    const tail = new StderrTail([secret]);
    tail.push(Buffer.from(`key: ${secret.slice(0, 10)}`));
    expect(tail.text()).toBe('key: [redacted]');
  });
});

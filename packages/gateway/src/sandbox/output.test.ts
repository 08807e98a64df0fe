import { describe, expect, it } from 'vitest';
import { CappedOutput } from './output.js';

describe('CappedOutput', () => {
  it('keeps both streams while they fit', () => {
    const out = new CappedOutput(10);
    expect(out.push('stdout', Buffer.from('abc'))).toBe(true);
    expect(out.push('stderr', Buffer.from('de'))).toBe(true);
    expect(out.text('stdout')).toBe('abc');
    expect(out.text('stderr')).toBe('de');
    expect(out.over).toBe(false);
  });

  it('keeps exactly the cap and says over once one byte more came, counted across streams', () => {
    const out = new CappedOutput(4);
    expect(out.push('stdout', Buffer.from('ab'))).toBe(true);
    expect(out.push('stderr', Buffer.from('cd'))).toBe(true);
    expect(out.push('stdout', Buffer.from('e'))).toBe(false);
    expect(out.text('stdout') + out.text('stderr')).toBe('abcd');
    expect(out.bytesSeen).toBe(5);
  });

  it('cuts a chunk larger than the room left', () => {
    const out = new CappedOutput(3);
    expect(out.push('stdout', Buffer.from('0123456789'))).toBe(false);
    expect(out.text('stdout')).toBe('012');
  });
});

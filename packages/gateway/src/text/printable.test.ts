import { describe, expect, it } from 'vitest';
import { printable } from './printable.js';

describe('printable', () => {
  it('shows terminal escapes, clipboard writes and bidi overrides as \\u{…} escapes', () => {
    expect(printable('ok\u001b[8mhidden\u001b[0m')).toBe('ok\\u{1B}[8mhidden\\u{1B}[0m');
    expect(printable('\u001b]52;c;ZXZpbA==\u0007')).toBe('\\u{1B}]52;c;ZXZpbA==\\u{7}');
    expect(printable('abc\u202edcba')).toBe('abc\\u{202E}dcba');
    expect(printable('\u009b2J')).toBe('\\u{9B}2J');
  });

  it('keeps ordinary text, newlines and tabs', () => {
    expect(printable('Search the docs.\n\tNext line — ünïcode')).toBe(
      'Search the docs.\n\tNext line — ünïcode',
    );
  });
});

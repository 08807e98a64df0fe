import { describe, expect, it } from 'vitest';
import { parseDateTime } from './datetime.js';

describe('parseDateTime (RFC 3339 with an offset)', () => {
  it.each([
    ['2026-11-29T00:00:00Z', Date.UTC(2026, 10, 29)],
    ['2026-11-29t00:00:00z', Date.UTC(2026, 10, 29)],
    ['2026-11-29T01:30:00+01:30', Date.UTC(2026, 10, 29)],
    ['2026-11-28T19:00:00-05:00', Date.UTC(2026, 10, 29)],
    ['2028-02-29T12:00:00.250Z', Date.UTC(2028, 1, 29, 12, 0, 0, 250)],
  ])('reads %s', (text, ms) => {
    expect(parseDateTime(text)).toBe(ms);
  });

  it.each([
    '2026-11-29',
    '2026-11-29T00:00:00',
    '2026-02-29T00:00:00Z',
    '2026-04-31T00:00:00Z',
    '2026-13-01T00:00:00Z',
    '2026-11-29T24:00:00Z',
    '2026-11-29T23:60:00Z',
    '2026-11-29T23:59:60Z',
    '2026-11-29T00:00:00+24:00',
    '2026-11-29 00:00:00Z',
    ' 2026-11-29T00:00:00Z',
    '+002026-11-29T00:00:00Z',
  ])('refuses %s', (text) => {
    expect(parseDateTime(text)).toBeUndefined();
  });
});

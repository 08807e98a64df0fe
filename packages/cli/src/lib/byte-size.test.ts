import { describe, expect, it } from 'vitest';
import { parseByteSize } from './byte-size.js';

describe('parseByteSize', () => {
  it('reads bytes and binary units', () => {
    expect(parseByteSize('0')).toBe(0);
    expect(parseByteSize('1048576')).toBe(1048576);
    expect(parseByteSize('500m')).toBe(500 * 1024 ** 2);
    expect(parseByteSize('10g')).toBe(10 * 1024 ** 3);
    expect(parseByteSize('2GiB')).toBe(2 * 1024 ** 3);
    expect(parseByteSize('1.5k')).toBe(1536);
  });

  it('refuses what is not a size', () => {
    for (const bad of ['', '-1', 'ten', '10x', '1e9', '10 g g', '99999999999999t'])
      expect(parseByteSize(bad)).toBeUndefined();
  });
});

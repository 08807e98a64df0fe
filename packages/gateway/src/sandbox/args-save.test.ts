import { describe, expect, it } from 'vitest';
import { parseCheckpoint, parseRestore, parseRewind, parseSnapshot, parseSnapshotOnly } from './args-save.js';

describe('save and undo arguments', () => {
  it('reads what each tool takes', () => {
    expect(parseCheckpoint({ name: 'work', label: 'before' })).toEqual({ name: 'work', note: 'before' });
    expect(parseRewind({ name: 'work', checkpoint: 'abcd0123' })).toEqual({
      name: 'work',
      checkpoint: 'abcd0123',
    });
    expect(parseSnapshot({ name: 'work', snapshot_name: 'keep' })).toEqual({
      name: 'work',
      snapshot: 'keep',
    });
    expect(parseSnapshotOnly({ snapshot: 'keep' }, 'snapshot_remove')).toBe('keep');
  });

  it('a restore is read as a create: network and mounts as sandbox_create reads them', () => {
    expect(parseRestore({ snapshot: 'keep', name: 'copy' })).toEqual({
      snapshot: 'keep',
      create: { name: 'copy', hosts: [], egressAny: false, mounts: [], persistent: false },
    });
    const open = parseRestore({ snapshot: 'keep', name: 'copy', egress: 'any', command: ['node'] });
    expect(open.create).toMatchObject({ egressAny: true, command: ['node'] });
    expect(() =>
      parseRestore({ snapshot: 'keep', name: 'copy', egress: 'any', hosts: ['a.example'] }),
    ).toThrow(/either hosts/);
    expect(() => parseRestore({ snapshot: 'keep', name: 'copy', image: 'alpine' })).toThrow(
      /no argument "image"/,
    );
  });

  it('refuses hostile or malformed input', () => {
    expect(() => parseRewind({ name: 'work', checkpoint: '../../etc' })).toThrow(/8 hex digits/);
    expect(() => parseRewind({ name: 'work', checkpoint: 'ABCD0123' })).toThrow(/8 hex digits/);
    expect(() => parseSnapshot({ name: 'work', snapshot_name: 'Keep:latest' })).toThrow(
      /snapshot_name must be/,
    );
    expect(() => parseSnapshotOnly({ snapshot: '' }, 'snapshot_remove')).toThrow(/snapshot must be/);
    expect(() => parseCheckpoint({ name: 'work', label: 'x'.repeat(201) })).toThrow(/1-200/);
    expect(() => parseCheckpoint({ name: 'work', label: 'a\0b' })).toThrow(/1-200/);
    expect(() => parseCheckpoint({ name: 'work', extra: 1 })).toThrow(/no argument "extra"/);
  });
});

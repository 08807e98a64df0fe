import { mkdtemp, readFile, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { LABEL, type Owner } from '../runtime/labels.js';
import { homeOwnerId, persistentLabels, usableBy } from './persistence.js';

const me: Owner = { session: 'sess-a', pid: 100, pidStart: '5000', host: 'aaaaaaaaaaaaaaaa' };
const home = { id: 'f'.repeat(32), host: me.host };
const madeBy = (o: Owner, extra: Record<string, string> = {}) => ({
  [LABEL.managed]: '1',
  [LABEL.session]: o.session,
  [LABEL.pid]: String(o.pid),
  [LABEL.pidStart]: o.pidStart,
  [LABEL.host]: o.host,
  [LABEL.sandbox]: 'box',
  ...extra,
});
const earlier: Owner = { ...me, session: 'sess-old', pid: 99, pidStart: '4000' };

describe('usableBy: which sandboxes a gateway may use', () => {
  it("its own, and a persistent one of its home on its host; never another gateway's ordinary one", () => {
    expect(usableBy(madeBy(me), me, undefined)).toBe(true);
    expect(usableBy(madeBy(earlier, persistentLabels(home)), me, home)).toBe(true);
    // Every reaper and sweep selects `ringfence.managed=1`; a persistent sandbox is not that.
    expect(persistentLabels(home)[LABEL.managed]).toBe('persistent');
    expect(usableBy(madeBy(earlier), me, home)).toBe(false);
  });

  it('refuses a persistent one of another home or host, one not managed, one without the sandbox label, and any when persistence is off', () => {
    expect(usableBy(madeBy(earlier, persistentLabels({ ...home, id: 'e'.repeat(32) })), me, home)).toBe(
      false,
    );
    expect(usableBy(madeBy({ ...earlier, host: 'bbbbbbbbbbbbbbbb' }, persistentLabels(home)), me, home)).toBe(
      false,
    );
    expect(usableBy({ ...madeBy(earlier, persistentLabels(home)), [LABEL.managed]: '0' }, me, home)).toBe(
      false,
    );
    const { [LABEL.sandbox]: _, ...unnamed } = madeBy(earlier, persistentLabels(home));
    expect(usableBy(unnamed, me, home)).toBe(false);
    expect(
      usableBy(madeBy(earlier, { ...persistentLabels(home), [LABEL.persistent]: 'true' }), me, home),
    ).toBe(false);
    expect(usableBy(madeBy(earlier, persistentLabels(home)), me, undefined)).toBe(false);
    expect(usableBy(undefined, me, home)).toBe(false);
    // Persistent labels on an object still `ringfence.managed=1`: not made as a persistent sandbox is.
    expect(usableBy(madeBy(earlier, { ...persistentLabels(home), [LABEL.managed]: '1' }), me, home)).toBe(
      false,
    );
  });
});

describe('homeOwnerId', () => {
  it('is made once, random, kept private in the home, and read back the same', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-owner-'));
    const id = await homeOwnerId(dir);
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(await homeOwnerId(dir)).toBe(id);
    expect((await readFile(join(dir, 'sandboxes', 'owner-id'), 'utf8')).trim()).toBe(id);
    expect((await stat(join(dir, 'sandboxes', 'owner-id'))).mode & 0o777).toBe(0o600);
    const other = await mkdtemp(join(tmpdir(), 'rf-owner-'));
    expect(await homeOwnerId(other)).not.toBe(id);
  });
});

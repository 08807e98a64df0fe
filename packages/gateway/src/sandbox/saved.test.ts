import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { currentOwner, LABEL } from '../runtime/labels.js';
import {
  checkpointTag,
  homeId,
  isOurCheckpoint,
  isOurSnapshot,
  SAVED_LABEL,
  savedImages,
  savedLabels,
  snapshotTag,
} from './saved.js';

const session = 'sess-1';
const owner = currentOwner(session);
const home = homeId('/nowhere/home');
const options = { session, sandbox: 'work', baseImage: 'base:1', home };

describe('saved images: labels and ownership', () => {
  it("a checkpoint is this gateway's, a snapshot the home's (no pid a reaper could match)", () => {
    const cp = savedLabels('checkpoint', { ...options, checkpoint: 'abcd0123', note: 'n' });
    expect(isOurCheckpoint(cp, owner, 'work')).toBe(true);
    expect(isOurCheckpoint(cp, owner, 'other')).toBe(false);
    expect(isOurSnapshot(cp, home)).toBe(false);
    const snap = savedLabels('snapshot', { ...options, snapshot: 'keep' });
    expect(snap[LABEL.pid]).toBe('');
    expect(isOurSnapshot(snap, home)).toBe(true);
    expect(isOurCheckpoint(snap, owner)).toBe(false);
    expect(isOurSnapshot(snap, homeId('/another/home'))).toBe(false);
  });

  it('never takes a forged image for its own: another pid, another host, no managed label, no id', () => {
    const cp = savedLabels('checkpoint', { ...options, checkpoint: 'abcd0123' });
    for (const forged of [
      { ...cp, [LABEL.pid]: '1' },
      { ...cp, [LABEL.host]: 'elsewhere' },
      { ...cp, [LABEL.managed]: '0' },
      { ...cp, [SAVED_LABEL.checkpoint]: '' },
      { ...cp, [LABEL.role]: 'sandbox' },
    ])
      expect(isOurCheckpoint(forged, owner, 'work')).toBe(false);
    const snap = savedLabels('snapshot', { ...options, snapshot: 'keep' });
    for (const forged of [
      { ...snap, [SAVED_LABEL.home]: 'not-this-home' },
      { ...snap, [LABEL.server]: 'someone' },
      { ...snap, [LABEL.host]: 'elsewhere' },
      { ...snap, [SAVED_LABEL.snapshot]: '' },
    ])
      expect(isOurSnapshot(forged, home)).toBe(false);
    expect(isOurSnapshot(undefined, home)).toBe(false);
  });

  it('names images under ringfence-saved/ only', () => {
    expect(checkpointTag(session, 'work', 'abcd0123')).toBe(
      'ringfence-saved/checkpoint:sess-1-work-abcd0123',
    );
    expect(snapshotTag(home, 'keep')).toBe(`ringfence-saved/snapshot:${home}-keep`);
    expect(home).toMatch(/^[0-9a-f]{12}$/);
  });

  it("reports each one's size and what it added over its parent, newest first", async () => {
    const cp = savedLabels('checkpoint', { ...options, checkpoint: 'abcd0123' });
    const docker = {
      listImages: async () => [
        {
          Id: 'a',
          Size: 150,
          Created: 2,
          ParentId: 'base',
          Labels: cp,
          RepoTags: ['ringfence-saved/checkpoint:x'],
        },
        {
          Id: 'b',
          Size: 180,
          Created: 3,
          ParentId: 'a',
          Labels: { ...cp, [SAVED_LABEL.checkpoint]: 'ffff0000' },
          RepoTags: ['ringfence-saved/checkpoint:y'],
        },
        { Id: 'forged', Size: 999, Created: 4, Labels: { ...cp, [LABEL.pid]: '1' } },
        // Built FROM a checkpoint by the person: its labels, not its repository.
        { Id: 'built-on', Size: 999, Created: 5, Labels: cp, RepoTags: ['mine:1'] },
        { Id: 'dangling', Size: 999, Created: 6, Labels: cp, RepoTags: ['<none>:<none>'] },
      ],
      // The base image is not ringfence's: not listed, its size read by inspect.
      getImage: (id: string) => ({ inspect: async () => ({ Size: id === 'base' ? 100 : 0 }) }),
    } as unknown as Docker;
    const found = await savedImages(docker, (l) => isOurCheckpoint(l, owner, 'work'));
    expect(found.map((s) => [s.key, s.sizeBytes, s.addedBytes, s.tag])).toEqual([
      ['ffff0000', 180, 30, 'ringfence-saved/checkpoint:y'],
      ['abcd0123', 150, 50, 'ringfence-saved/checkpoint:x'],
    ]);
  });
});

describe('snapshots by their own name only', () => {
  it("a person's image built FROM a snapshot (its labels, another name) is never restored or removed", async () => {
    const { SaveAndUndo } = await import('./checkpoints.js');
    const labels = savedLabels('snapshot', { ...options, snapshot: 'keep' });
    const removed: string[] = [];
    const images = (withOurs: boolean) => [
      { Id: 'sha256:mine', Labels: labels, RepoTags: ['mine:1'], Size: 5 },
      ...(withOurs
        ? [{ Id: 'sha256:ours', Labels: labels, RepoTags: [snapshotTag(home, 'keep')], Size: 7 }]
        : []),
    ];
    const saver = (withOurs: boolean) => {
      const docker = {
        listImages: async () => images(withOurs),
        listContainers: async () => [],
        getImage: (ref: string) => ({
          inspect: async () => images(withOurs).find((i) => i.Id === ref),
          remove: async () => void removed.push(ref),
        }),
      } as unknown as Docker;
      const sandboxes = { homeDir: '/nowhere/home', engine: async () => ({ docker, session }) };
      return new SaveAndUndo(sandboxes as never);
    };
    await expect(saver(false).removeSnapshot('keep')).rejects.toMatchObject({ code: 'SANDBOX_UNKNOWN' });
    expect(removed).toEqual([]);
    expect(await saver(true).removeSnapshot('keep')).toMatchObject({ image: snapshotTag(home, 'keep') });
    expect(removed).toEqual([snapshotTag(home, 'keep')]);
  });
});

import { describe, expect, it } from 'vitest';
import { currentOwner, isPersistent, LABEL, ownedBy } from '../runtime/labels.js';
import { containerProcessLimits } from '../runtime/process-limits.js';
import { parseCreate } from './args.js';
import { forkImageLabels } from './fork.js';
import { savedLabels } from './saved.js';
import { sandboxContainerSpec } from './spec.js';

/**
 * The engine copies an image's labels into every container made from it (the container's own win),
 * and into every image committed from a container. A persistent sandbox's labels must not travel
 * that way into a fork, a restored snapshot or a checkpoint that are this gateway's, or the close,
 * the reaper and the sweep (which leave `ringfence.persistent=1`) would leave them for ever.
 */
const engineMerge = (image: Record<string, string>, own: Record<string, string>) => ({ ...image, ...own });

const persistentSource = {
  [LABEL.managed]: 'persistent',
  [LABEL.persistent]: '1',
  [LABEL.home]: 'f'.repeat(32),
  [LABEL.sandbox]: 'keep',
  [LABEL.role]: 'sandbox',
};
const session = 'sess';
const owner = currentOwner(session);
/** What the reaper and a gateway's close select (reaper.ts, Sandboxes.removeAll). */
const goesWithGateway = (labels: Record<string, string>) => ownedBy(labels, owner) && !isPersistent(labels);

const spec = (name: string) =>
  sandboxContainerSpec(parseCreate({ name, image: 'img:1' }), 'sha256:x', {
    session,
    network: 'none',
    mounts: [],
    processLimits: containerProcessLimits({ nofile: 2048, nproc: 512 }),
  });

describe('labels a sandbox never inherits', () => {
  it("a fork of a persistent sandbox goes with this gateway: its image's and its container's labels", () => {
    const forkImage = engineMerge(persistentSource, forkImageLabels('keep', 'copy', session));
    expect(goesWithGateway(forkImage)).toBe(true);
    const forkContainer = engineMerge(forkImage, spec('copy').Labels!);
    expect(isPersistent(forkContainer)).toBe(false);
    expect(goesWithGateway(forkContainer)).toBe(true);
  });

  it('a sandbox restored from a snapshot of a persistent sandbox, or made from an image labelled persistent, goes with this gateway', () => {
    const snapshot = engineMerge(
      persistentSource,
      savedLabels('snapshot', { session, sandbox: 'keep', baseImage: 'img:1', home: 'h', snapshot: 's' }),
    );
    expect(isPersistent(snapshot)).toBe(false);
    for (const image of [snapshot, persistentSource]) {
      const restored = engineMerge(image, spec('back').Labels!);
      expect(isPersistent(restored)).toBe(false);
      expect(restored[LABEL.home]).toBe('');
      expect(goesWithGateway(restored)).toBe(true);
    }
  });

  it("a checkpoint of a persistent sandbox is this gateway's (it goes at its close, the sweep after)", () => {
    const checkpoint = engineMerge(
      persistentSource,
      savedLabels('checkpoint', { session, sandbox: 'keep', baseImage: 'img:1', home: 'h', checkpoint: 'c' }),
    );
    expect(goesWithGateway(checkpoint)).toBe(true);
  });
});

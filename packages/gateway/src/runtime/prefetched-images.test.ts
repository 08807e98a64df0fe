import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { prefetchImages } from './prefetched-images.js';

/** An engine whose tag answers change: each inspection is counted and answers the tag's id now. */
function engine(ids: Record<string, string>) {
  const asked: string[] = [];
  const docker = {
    getImage: (tag: string) => ({
      inspect: async () => {
        asked.push(tag);
        return { Id: ids[tag] } as Docker.ImageInspectInfo;
      },
    }),
  } as unknown as Docker;
  return { docker, asked };
}

describe('image inspections asked beside the engine probe', () => {
  it('are taken once, by the first start: a restart asks the engine again (a tag may have moved since)', async () => {
    const { docker, asked } = engine({ 'example/docs:1': 'sha256:aaa' });
    const early = prefetchImages(docker, [{ name: 'docs', image: 'example/docs:1' }]);
    expect(asked).toEqual(['example/docs:1']);
    const first = early.take({ name: 'docs', image: 'example/docs:1' });
    expect((await first)?.Id).toBe('sha256:aaa');
    // The second start (a restart) gets nothing early: image-check.ts inspects afresh.
    expect(early.take({ name: 'docs', image: 'example/docs:1' })).toBeUndefined();
  });

  it('are not used for a registration whose image changed since, nor for a server not begun early', async () => {
    const { docker } = engine({ 'example/docs:1': 'sha256:aaa' });
    const early = prefetchImages(docker, [{ name: 'docs', image: 'example/docs:1' }]);
    expect(early.take({ name: 'docs', image: 'example/docs:2' })).toBeUndefined();
    // Spent by that mismatched take too: a later start of the old image asks again as well.
    expect(early.take({ name: 'docs', image: 'example/docs:1' })).toBeUndefined();
    expect(early.take({ name: 'other', image: 'example/docs:1' })).toBeUndefined();
  });
});

import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import { listImages, pullImage } from './images.js';
import type { Sandboxes } from './sandboxes.js';

const ID = `sha256:${'a'.repeat(64)}`;

/** An engine where `here` images exist; a pull makes the image exist and is recorded. */
function fakeSandboxes(images: string[], allowedMcp: string[], here: string[] = []) {
  const pulled: string[] = [];
  const present = new Set(here);
  const docker = {
    getImage: (name: string) => ({
      inspect: async () => {
        if (!present.has(name)) throw Object.assign(new Error('no such image'), { statusCode: 404 });
        return { Id: ID, RepoDigests: [], Size: 1234 };
      },
    }),
    pull: (name: string, _options: unknown, callback: (error: Error | null, stream: unknown) => void) => {
      pulled.push(name);
      present.add(name);
      callback(null, {});
    },
    modem: { followProgress: (_stream: unknown, done: (error: Error | null) => void) => done(null) },
  } as unknown as Docker;
  const sandboxes = {
    images,
    policy: {
      imageRefusal: (image: { name: string }) =>
        allowedMcp.length === 0 || allowedMcp.includes(image.name)
          ? undefined
          : `the policy does not allow the image ${image.name}; allowed_mcp lists: ${allowedMcp.join(', ')}.`,
    },
    engine: async () => ({ docker }),
  } as unknown as Sandboxes;
  return { sandboxes, pulled };
}

describe('image_list', () => {
  it('shows exactly the images the person allowed, present or not, and what the policy says of each', async () => {
    const { sandboxes } = fakeSandboxes(['here:1', 'away:1'], ['here:1'], ['here:1', 'personal:1']);
    expect(await listImages(sandboxes)).toEqual([
      { image: 'here:1', present: true, size: 1234, id: ID, allowed_by_policy: true },
      expect.objectContaining({ image: 'away:1', present: false, allowed_by_policy: false }),
    ]);
  });
});

describe('image_pull', () => {
  it('pulls an image the person allowed and the policy admits', async () => {
    const { sandboxes, pulled } = fakeSandboxes(['reg/img:1'], ['reg/img:1']);
    expect(await pullImage(sandboxes, 'reg/img:1')).toMatchObject({
      image: 'reg/img:1',
      pulled: true,
      size: 1234,
    });
    expect(pulled).toEqual(['reg/img:1']);
  });

  it('never asks the engine to pull one the person did not name, or the policy does not admit', async () => {
    const { sandboxes, pulled } = fakeSandboxes(['reg/img:1', 'reg/other:1'], ['reg/img:1']);
    await expect(pullImage(sandboxes, 'reg/img:2')).rejects.toThrow(
      /not one the person allowed .*--sandbox-image/,
    );
    // Exactly as named: a tag or registry spelled differently is another image.
    await expect(pullImage(sandboxes, 'REG/img:1')).rejects.toThrow(/not one the person allowed/);
    await expect(pullImage(sandboxes, 'reg/other:1')).rejects.toThrow(
      /does not allow the image .*Nothing was pulled/,
    );
    expect(pulled).toEqual([]);
    const none = fakeSandboxes([], []);
    await expect(pullImage(none.sandboxes, 'reg/img:1')).rejects.toThrow(/--sandbox-image IMAGE/);
    expect(none.pulled).toEqual([]);
  });
});

// An inspection asked early (runtime.ts, beside the engine probe) is checked exactly as one asked
// at the start: a tag that moved, an image that is gone, an image the policy refuses.
import type Docker from 'dockerode';
import { describe, expect, it } from 'vitest';
import type { ContainerServerConfig } from '../config/servers.js';
import type { PolicyView } from '../ports/policy.js';
import { checkImage } from './image-check.js';

const config = {
  name: 'docs',
  transport: 'stdio',
  image: 'example/docs:1',
  image_id: `sha256:${'a'.repeat(64)}`,
  egress: { mode: 'deny' },
} as unknown as ContainerServerConfig;

/** An engine that must not be asked: the early answer is the one to check. */
const unasked = {
  getImage: () => {
    throw new Error('the engine was asked again');
  },
} as unknown as Docker;

const answer = (id: string) =>
  Promise.resolve({ Id: id, RepoDigests: [] } as unknown as Docker.ImageInspectInfo);

describe('checkImage with an early inspection', () => {
  it('takes the early answer when the tag still names the registered image', async () => {
    await expect(checkImage(unasked, config, undefined, answer(config.image_id))).resolves.toMatchObject({
      Id: config.image_id,
    });
  });

  it('refuses a tag that moved, as at the start', async () => {
    await expect(
      checkImage(unasked, config, undefined, answer(`sha256:${'b'.repeat(64)}`)),
    ).rejects.toMatchObject({ code: 'IMAGE_MOVED' });
  });

  it('refuses an image that is gone (404), and passes any other engine failure on', async () => {
    const gone = Promise.reject(Object.assign(new Error('no such image'), { statusCode: 404 }));
    await expect(checkImage(unasked, config, undefined, gone)).rejects.toMatchObject({
      code: 'IMAGE_MISSING',
    });
    const broken = Promise.reject(Object.assign(new Error('engine fault'), { statusCode: 500 }));
    await expect(checkImage(unasked, config, undefined, broken)).rejects.toThrow('engine fault');
  });

  it("refuses what the policy refuses, with the policy's reason", async () => {
    const policy = {
      imageRefusal: () => 'example/docs is not in allowed_mcp',
      egressRefusal: () => undefined,
    } as unknown as PolicyView;
    await expect(checkImage(unasked, config, policy, answer(config.image_id))).rejects.toMatchObject({
      code: 'POLICY_REFUSED',
    });
  });
});

import { describe, expect, it } from 'vitest';
import { repoTags } from './build.js';

describe('repoTags', () => {
  it("reads Podman's fully qualified tags as Docker names them", () => {
    expect(
      repoTags({
        RepoTags: [
          'docker.io/ringfence/egress-sidecar:0123456789abcdef',
          'docker.io/library/node:20',
          'ringfence/node-base:1',
        ],
      }),
    ).toEqual(['ringfence/egress-sidecar:0123456789abcdef', 'node:20', 'ringfence/node-base:1']);
  });

  it('keeps another registry or localhost: those name other images', () => {
    expect(
      repoTags({ RepoTags: ['localhost/ringfence/egress-sidecar:1', 'ghcr.io/ringfence/egress-sidecar:1'] }),
    ).toEqual(['localhost/ringfence/egress-sidecar:1', 'ghcr.io/ringfence/egress-sidecar:1']);
    expect(repoTags({ RepoTags: null })).toEqual([]);
  });
});

import type { Upstream } from '../../ports/upstream.js';

/** The resource half of a fake upstream that offers none (its capabilities say so). */
export const NO_RESOURCES: Pick<
  Upstream,
  'listResources' | 'listResourceTemplates' | 'readResource' | 'subscribeResource' | 'onResourceUpdated'
> = {
  listResources: async () => ({ resources: [], problems: [] }),
  listResourceTemplates: async () => ({ resourceTemplates: [], problems: [] }),
  readResource: async () => {
    throw new Error('this fake upstream offers no resources');
  },
  subscribeResource: async () => {},
  onResourceUpdated: () => {},
};

import type Docker from 'dockerode';
import type { ContainerServerConfig } from '../config/servers.js';

export type PrefetchedImages = {
  /** The inspection asked for this server's image at the runtime's start, once; else undefined. */
  take(config: Pick<ContainerServerConfig, 'name' | 'image'>): Promise<Docker.ImageInspectInfo> | undefined;
};

/**
 * One inspection per server about to start, asked now and taken once, by that server's first
 * start of that image (a restart, or a registration changed since, asks the engine again). A
 * failure is the image check's to report, when it takes the answer.
 */
export function prefetchImages(
  docker: Docker,
  servers: readonly Pick<ContainerServerConfig, 'name' | 'image'>[],
): PrefetchedImages {
  const inspected = new Map<string, { image: string; answer: Promise<Docker.ImageInspectInfo> }>();
  for (const { name, image } of servers) {
    const answer = docker.getImage(image).inspect();
    answer.catch(() => {});
    inspected.set(name, { image, answer });
  }
  return {
    take: ({ name, image }) => {
      const found = inspected.get(name);
      if (!found) return undefined;
      inspected.delete(name);
      return found.image === image ? found.answer : undefined;
    },
  };
}

import type Docker from 'dockerode';

/**
 * An engine call that races a container's own exit can fail for a moment and then go through.
 * Docker answers a removal with 409 (a removal already in progress) and Podman with 500 ("could
 * not be stopped … container state improper"). Podman 4.3 also fails a whole container *list*
 * with 500 ("read /proc/<pid>/cgroup: no such process") when one listed container's process ends
 * while it reads it. Asked again a moment later, each goes through. These are the only retries:
 * an answer that is not one of these races is thrown at once.
 */
const ATTEMPTS = 5;
const RETRY_MS = 50;

const statusOf = (error: unknown) => (error as { statusCode?: number }).statusCode;

async function retryRace<T>(
  operation: () => Promise<T>,
  isRace: (status: number | undefined) => boolean,
  retryMs: number,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= ATTEMPTS || !isRace(statusOf(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, retryMs * attempt));
    }
  }
}

/**
 * Removes a container, running or not, so the gateway does not exit leaving it for the reaper.
 * Resolves true when this call removed it, false when it was already gone (404) or still being
 * removed by someone else after the last attempt (409), which is not a failure of ours; anything
 * else is thrown.
 */
export async function removeContainer(container: Docker.Container, retryMs = RETRY_MS): Promise<boolean> {
  try {
    await retryRace(
      () => container.remove({ force: true, v: true }),
      (s) => s === 409 || s === 500,
      retryMs,
    );
    return true;
  } catch (error) {
    const status = statusOf(error);
    if (status === 404 || status === 409) return false;
    throw error;
  }
}

/** Lists containers, asking again when the list raced a container's exit (Podman's 500). */
export function listContainers(
  docker: Docker,
  options: Docker.ContainerListOptions,
  retryMs = RETRY_MS,
): Promise<Docker.ContainerInfo[]> {
  return retryRace(
    () => docker.listContainers(options),
    (s) => s === 500,
    retryMs,
  );
}

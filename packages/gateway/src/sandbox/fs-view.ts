import type Docker from 'dockerode';

/**
 * What the engine's archive API sees of a sandbox, and what it does not: it reads and writes the
 * container's own file system (its layers and its bind mounts), not a tmpfs mounted in it. A
 * sandbox's /tmp is a tmpfs (runtime/container-spec.ts), so a file there is seen by the sandbox's
 * processes and not by these tools, and a file these tools put there would be hidden from the
 * processes under the tmpfs. Such paths are refused, never silently served from beneath.
 */

const under = (path: string, mount: string) => {
  const root = mount.replace(/\/+$/, '') || '/';
  return root === '/' || path === root || path.startsWith(`${root}/`);
};

/** The tmpfs mounts of a container: its HostConfig's and any tmpfs mount the engine lists. */
export function tmpfsMounts(info: Docker.ContainerInspectInfo): string[] {
  const fromHost = Object.keys((info.HostConfig as { Tmpfs?: Record<string, string> }).Tmpfs ?? {});
  const fromMounts = (info.Mounts ?? []).filter((m) => m.Type === 'tmpfs').map((m) => m.Destination);
  return [...new Set([...fromHost, ...fromMounts])];
}

/** The tmpfs `path` lies in (or is), if any. */
export function tmpfsOf(path: string, info: Docker.ContainerInspectInfo): string | undefined {
  return tmpfsMounts(info).find((mount) => under(path, mount));
}

/** The read-only mount `path` lies in (or is), if any: its destination. */
export function readOnlyMountOf(
  path: string,
  mounts: readonly { Destination: string; RW: boolean }[],
): string | undefined {
  return mounts.find((m) => !m.RW && under(path, m.Destination))?.Destination;
}

/** The bind mount `path` lies in (or is), if any: its destination. */
export function bindMountOf(
  path: string,
  mounts: readonly { Destination: string; Type?: string }[],
): string | undefined {
  return mounts.find((m) => m.Type === 'bind' && under(path, m.Destination))?.Destination;
}

/** Kernel file systems in every container: nothing is ever written there. */
export const KERNEL_PATHS = ['/proc', '/sys', '/dev'];

export const kernelPathOf = (path: string) => KERNEL_PATHS.find((root) => under(path, root));

export const tmpfsRefusal = (path: string, tmpfs: string) =>
  `${path} is in ${tmpfs}, a tmpfs: the sandbox's processes see it, but the engine's archive API (which these tools use, so that nothing runs in the sandbox) does not. Use a path outside ${tmpfs} (such as /work/…), or copy it there with sandbox_run.`;

import { type BigIntStats, lstatSync, realpathSync } from 'node:fs';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { RingfenceError } from '@ringfence/policy';
import type { MountRule } from '../config/servers.js';
import type { ResolvedMount } from './container-spec.js';

export class MountError extends RingfenceError<
  'MOUNT_OUTSIDE' | 'MOUNT_ROOT' | 'MOUNT_HOME' | 'MOUNT_MISSING' | 'MOUNT_CHANGED'
> {}

/** A directory mounts may come from, and whether it allows writing. */
export interface WorkspaceRoot {
  readonly path: string;
  readonly writable: boolean;
}

const inside = (child: string, parent: string) =>
  child.startsWith(parent.endsWith(sep) ? parent : parent + sep);

/**
 * Resolve a server's mounts against the workspace roots (the directory `mcp serve` runs in,
 * plus any `--allow-mount DIR[:rw]`). Every path is resolved through links first; it must lie
 * strictly inside a root (never the root itself), and must neither be inside RINGFENCE_HOME nor
 * contain it. A mount is writable only if it asked for `rw` and its root allows writing.
 * Targets are `/workspace/<path relative to its root>`. Each records the device and inode it
 * resolved to, which `verifyMounts` checks again just before the container starts.
 */
export function resolveMounts(
  mounts: readonly MountRule[],
  roots: readonly WorkspaceRoot[],
  home: string,
  real: (path: string) => string = realpathSync,
): ResolvedMount[] {
  const realRoots = roots.map((root) => ({ ...root, path: real(root.path) }));
  let realHome: string;
  try {
    realHome = real(home);
  } catch {
    realHome = resolve(home);
  }
  return mounts.map((mount) => {
    let source: string | undefined;
    let root: WorkspaceRoot | undefined;
    for (const candidate of realRoots) {
      const requested = isAbsolute(mount.path) ? mount.path : resolve(candidate.path, mount.path);
      let resolved: string;
      try {
        resolved = real(requested);
      } catch {
        continue;
      }
      if (resolved === candidate.path) {
        throw new MountError(
          'MOUNT_ROOT',
          `Mount "${mount.path}" is the workspace root itself; mount a subfolder instead.`,
        );
      }
      if (inside(resolved, candidate.path)) {
        source = resolved;
        root = candidate;
        break;
      }
    }
    if (!source || !root) {
      const exists = realRoots.some((r) => {
        try {
          real(isAbsolute(mount.path) ? mount.path : resolve(r.path, mount.path));
          return true;
        } catch {
          return false;
        }
      });
      throw exists
        ? new MountError(
            'MOUNT_OUTSIDE',
            `Mount "${mount.path}" resolves outside the workspace (${realRoots.map((r) => r.path).join(', ')}). Run ringfence mcp serve from the folder that contains it, or add --allow-mount DIR.`,
          )
        : new MountError(
            'MOUNT_MISSING',
            `Mount "${mount.path}" does not exist in the workspace (${realRoots.map((r) => r.path).join(', ')}).`,
          );
    }
    if (source === realHome || inside(source, realHome) || inside(realHome, source)) {
      throw new MountError(
        'MOUNT_HOME',
        `Mount "${mount.path}" would expose RINGFENCE_HOME (${realHome}) to the server; refused. Mount a folder that neither is nor contains it.`,
      );
    }
    const stat = lstatSync(source, { bigint: true });
    if (stat.isSymbolicLink()) throw changed(mount.path, `${source} became a symbolic link`);
    return {
      requested: mount.path,
      source,
      target: `/workspace/${relative(root.path, source).split(sep).join('/')}`,
      readOnly: !(mount.mode === 'rw' && root.writable),
      identity: { dev: stat.dev, ino: stat.ino },
    };
  });
}

const changed = (requested: string, what: string) =>
  new MountError(
    'MOUNT_CHANGED',
    `Mount "${requested}" changed while its server was starting (${what}); the server was not started. Find out what replaced it (a link can expose any folder of yours to the server), then run ringfence mcp serve again.`,
  );

/** Why a resolved mount is no longer what was resolved, or undefined when it still is. */
function mountChange(mount: ResolvedMount): string | undefined {
  const parts = mount.source.split(sep).filter(Boolean);
  let path: string = sep;
  for (const [index, part] of parts.entries()) {
    path = join(path, part);
    let stat: BigIntStats;
    try {
      stat = lstatSync(path, { bigint: true });
    } catch (error) {
      return `${path} is gone (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`;
    }
    // The source was resolved through links, so a link anywhere on its path now was put there
    // since, and the engine would follow it.
    if (stat.isSymbolicLink()) return `${path} became a symbolic link`;
    if (index === parts.length - 1 && (stat.dev !== mount.identity.dev || stat.ino !== mount.identity.ino))
      return `${path} is now another ${stat.isDirectory() ? 'directory' : 'file'}`;
  }
  return undefined;
}

/**
 * The engine resolves a bind source when it starts the container, following links: a folder
 * swapped for a link after `resolveMounts` would mount the link's target. So, with the container
 * created and just before it starts, every source must still have no link on its path and be
 * the same device and inode as when it was resolved; otherwise MOUNT_CHANGED.
 */
export function verifyMounts(mounts: readonly ResolvedMount[]): void {
  for (const mount of mounts) {
    const problem = mountChange(mount);
    if (problem) throw changed(mount.requested, problem);
  }
}

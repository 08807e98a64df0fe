import type Docker from 'dockerode';
import { mayAccess, ownership, type SandboxUser, SEARCH } from './access.js';
import { scanArchive } from './archive-read.js';
import { SandboxError } from './errors.js';
import type { TarEntry } from './tar-read.js';

/** Links followed on one path at most, as the kernel's own limit (ELOOP). */
const MAX_LINKS = 40;

/** The first entry of the engine's archive of `path` (the path itself), or undefined when it is not there. */
export async function entryOf(container: Docker.Container, path: string): Promise<TarEntry | undefined> {
  let stream: NodeJS.ReadableStream;
  try {
    stream = await container.getArchive({ path });
  } catch (error) {
    if ((error as { statusCode?: number }).statusCode === 404) return undefined;
    throw error;
  }
  let first: TarEntry | undefined;
  await scanArchive(stream, (stop) => ({
    entry: (entry) => {
      first ??= entry;
      stop();
      return false;
    },
  }));
  return first;
}

/** `target` (a link's) read from the directory `from`, `.` and `..` applied within the container's root. */
function joined(from: readonly string[], target: string): string[] {
  const out = target.startsWith('/') ? [] : [...from];
  for (const part of target.split('/')) {
    if (part === '' || part === '.') continue;
    if (part === '..') out.pop();
    else out.push(part);
  }
  return out;
}

/**
 * Walks `path` in the sandbox component by component as the engine resolves it (links followed
 * within the container's root), calling `through` with each directory passed on the way (all but
 * the last component, or every one when `whole`). Returns the path with every link resolved, or
 * undefined where a component is not there.
 */
async function walk(
  container: Docker.Container,
  path: string,
  options: { whole: boolean; through?: (dir: string, entry: TarEntry) => void },
): Promise<string | undefined> {
  let rest = path.split('/').filter(Boolean);
  let done: string[] = [];
  let links = 0;
  while (rest.length > (options.whole ? 0 : 1)) {
    const here = `/${[...done, rest[0]].join('/')}`;
    const entry = await entryOf(container, here);
    if (!entry) return undefined;
    if (entry.type === 'symlink') {
      if (++links > MAX_LINKS)
        throw new SandboxError(
          'SANDBOX_PATH',
          `${path} passes through more than ${MAX_LINKS} links; nothing was done.`,
        );
      rest = [...joined(done, entry.linkName.toString('utf8')), ...rest.slice(1)];
      done = [];
      continue;
    }
    if (entry.type === 'directory') options.through?.(here, entry);
    done = [...done, rest[0]!];
    rest = rest.slice(1);
  }
  return `/${[...done, ...rest].join('/')}`;
}

/**
 * Refused unless the sandbox's user may pass through every directory on the way to `path` (search
 * permission), as the kernel would check it for the sandbox's own processes. The engine reads as
 * root and would hand over a file under a directory the user may not enter (a person's private
 * folder in a mount, /root in the image). Links on the way are followed as the engine follows
 * them (within the container's root), and the directories they lead through are checked too.
 */
export async function checkWayTo(
  container: Docker.Container,
  path: string,
  user: SandboxUser,
): Promise<void> {
  // Not there: the read itself says so.
  await walk(container, path, {
    whole: false,
    through: (dir, entry) => {
      if (!mayAccess(entry, user, SEARCH))
        throw new SandboxError(
          'SANDBOX_PATH',
          `the sandbox's user may not enter ${dir} (${ownership(entry)}), so ${path} is not its to read; nothing was read.`,
        );
    },
  });
}

/** Where an existing directory really is in the sandbox, every link on the way resolved (or itself, when gone meanwhile). */
export async function realDirectory(container: Docker.Container, directory: string): Promise<string> {
  return (await walk(container, directory, { whole: true })) ?? directory;
}

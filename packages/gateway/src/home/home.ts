import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** `RINGFENCE_HOME` (trimmed), or `~/.ringfence`: the policy package's resolver, the only one. */
export { ringfenceHome as resolveHome } from '@ringfence/policy';

export interface HomeProblem {
  readonly path: string;
  readonly problem: string;
  /** The shell command that fixes it. */
  readonly fix: string;
}

export interface HomeInspection {
  readonly path: string;
  readonly exists: boolean;
  readonly problems: readonly HomeProblem[];
}

const octal = (mode: number) => `0${(mode & 0o7777).toString(8)}`;
const quote = (path: string) => `'${path.replaceAll("'", `'\\''`)}'`;

/**
 * Check that the home directory is a real directory owned by us with mode 0700 and that every
 * file directly in it is ours and 0600. Nothing is changed; each problem names its fix.
 */
export async function inspectHome(
  path: string,
  uid: number = process.getuid?.() ?? 0,
): Promise<HomeInspection> {
  let info: Awaited<ReturnType<typeof lstat>>;
  try {
    info = await lstat(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, exists: false, problems: [] };
    throw error;
  }
  const problems: HomeProblem[] = [];
  if (info.isSymbolicLink() || !info.isDirectory()) {
    problems.push({
      path,
      problem: `${path} is not a directory (a link or a file)`,
      fix: `mv ${quote(path)} ${quote(`${path}.bak`)} && mkdir -m 700 ${quote(path)}`,
    });
    return { path, exists: true, problems };
  }
  if (info.uid !== uid) {
    problems.push({
      path,
      problem: `${path} is owned by uid ${info.uid}, not by you (uid ${uid})`,
      fix: `chown -R ${uid} ${quote(path)}`,
    });
  }
  if ((info.mode & 0o077) !== 0) {
    problems.push({
      path,
      problem: `${path} has mode ${octal(info.mode)}; other users can reach it`,
      fix: `chmod 700 ${quote(path)}`,
    });
  }
  for (const name of await readdir(path)) {
    const file = join(path, name);
    const entry = await lstat(file);
    if (entry.isDirectory()) continue;
    if (entry.uid !== uid) {
      problems.push({
        path: file,
        problem: `${file} is owned by uid ${entry.uid}, not by you`,
        fix: `chown ${uid} ${quote(file)}`,
      });
    }
    if ((entry.mode & 0o077) !== 0) {
      problems.push({
        path: file,
        problem: `${file} has mode ${octal(entry.mode)}; it must be 0600`,
        fix: `chmod 600 ${quote(file)}`,
      });
    }
  }
  return { path, exists: true, problems };
}

import { constants } from 'node:fs';
import { open, readdir, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { refuse, type VerifyFailure } from '../verify/result.js';

/** Where the installed policy lives: `RINGFENCE_POLICY_DIR`, else `/etc/ringfence`. */
export function installedPolicyDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.RINGFENCE_POLICY_DIR && env.RINGFENCE_POLICY_DIR !== ''
    ? env.RINGFENCE_POLICY_DIR
    : '/etc/ringfence';
}

/** Names inside the installed policy directory. */
export const INSTALLED = {
  policy: 'policy.json',
  root: 'root.json',
  /** Every root version installed, `N.root.json`, so a machine that missed one can catch up. */
  history: 'root-history',
} as const;

function unsafe(
  path: string,
  uid: number,
  mode: number,
  ownerUid: number,
  isDir: boolean,
): VerifyFailure | undefined {
  if (uid !== ownerUid) {
    return refuse(
      'INSTALLED_FILE_UNSAFE',
      `${path} is owned by uid ${uid}, not ${ownerUid === 0 ? 'root' : `uid ${ownerUid}`}, so a user could replace the organisation policy. ` +
        `Run \`sudo chown root:root ${path}\` (or reinstall with \`sudo ringfence policy install\`).`,
    );
  }
  if ((mode & 0o022) !== 0) {
    return refuse(
      'INSTALLED_FILE_UNSAFE',
      `${path} is writable by group or others (mode ${(mode & 0o777).toString(8)}). Run \`sudo chmod go-w ${path}\`.`,
    );
  }
  if (!isDir && (mode & constants.S_IFMT) !== constants.S_IFREG) {
    return refuse(
      'INSTALLED_FILE_UNSAFE',
      `${path} is not a regular file; install the policy with \`ringfence policy install\`.`,
    );
  }
  return undefined;
}

/** Checks that a directory is owned by `ownerUid` and not writable by group or others. */
export async function checkInstalledDir(dir: string, ownerUid: number): Promise<VerifyFailure | undefined> {
  const info = await stat(dir);
  return unsafe(dir, info.uid, info.mode, ownerUid, true);
}

/**
 * Reads an installed file through one descriptor opened without following links, checking owner
 * and mode on that same descriptor, so the file checked is the file read.
 * Returns undefined when the file does not exist.
 */
export async function readInstalledFile(
  path: string,
  ownerUid: number,
): Promise<{ ok: true; text: string } | VerifyFailure | undefined> {
  let handle: Awaited<ReturnType<typeof open>>;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'ELOOP') {
      return refuse(
        'INSTALLED_FILE_UNSAFE',
        `${path} is a symbolic link; install the real file with \`ringfence policy install\`.`,
      );
    }
    return refuse('INSTALLED_READ_FAILED', `Cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    const info = await handle.stat();
    const problem = unsafe(path, info.uid, info.mode, ownerUid, false);
    if (problem) return problem;
    if (info.size > 64 * 1024 * 1024)
      return refuse('INSTALLED_READ_FAILED', `${path} is larger than 64 MiB.`);
    return { ok: true, text: await handle.readFile('utf8') };
  } catch (error) {
    return refuse('INSTALLED_READ_FAILED', `Cannot read ${path}: ${(error as Error).message}`);
  } finally {
    await handle.close();
  }
}

/** Installed root versions above `after`, in order, from the history directory. */
export async function historyVersionsAfter(dir: string, after: number): Promise<number[]> {
  let names: string[];
  try {
    names = await readdir(join(dir, INSTALLED.history));
  } catch {
    return [];
  }
  return names
    .map((name) => /^([1-9][0-9]{0,8})\.root\.json$/.exec(name)?.[1])
    .filter((v): v is string => v !== undefined)
    .map(Number)
    .filter((v) => v > after)
    .sort((a, b) => a - b);
}

/**
 * What the sandbox's own user may do with a file, by the owner, group and mode the engine's
 * archive records. The archive API reads and writes as the engine (root), so without this a tool
 * would hand the assistant a file its sandbox cannot read (a key in the image, a person's private
 * file in a mounted directory) or replace one it cannot write. Only the primary group counts (the
 * supplementary groups of the image's user are not known here): never more than the user has.
 */
export interface SandboxUser {
  readonly uid: number;
  readonly gid: number;
}

export interface Owned {
  readonly uid: number;
  readonly gid: number;
  readonly mode: number;
}

export const READ = 4;
export const WRITE = 2;
export const SEARCH = 1;

/** Whether `user` has every permission in `want` (READ | WRITE | SEARCH) on `file`. */
export function mayAccess(file: Owned, user: SandboxUser, want: number): boolean {
  const bits =
    file.uid === user.uid
      ? (file.mode >> 6) & 7
      : file.gid === user.gid
        ? (file.mode >> 3) & 7
        : file.mode & 7;
  return (bits & want) === want;
}

export const ownership = (file: Owned) =>
  `owner ${file.uid}:${file.gid}, mode ${file.mode.toString(8).padStart(4, '0')}`;

import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ensurePrivateDirectory,
  parseStrictJson,
  RingfenceError,
  withFileLock,
  writeFileAtomic,
} from '@ringfence/policy';

export type StoreErrorCode =
  | 'STORE_CORRUPT'
  | 'STORE_INSECURE'
  | 'STORE_UNREADABLE'
  /**
   * A document does not have the shape its parser expects; the message names the part. Read
   * through a JsonStore it becomes STORE_CORRUPT, naming the file and the way out.
   */
  | 'STORE_SHAPE';

export class StoreError extends RingfenceError<StoreErrorCode> {}

/**
 * One JSON document in RINGFENCE_HOME (0700), written atomically (0600) and changed only under
 * an exclusive lock, so two ringfence processes never lose each other's update. A file that
 * does not parse or has the wrong shape stops whoever reads it (fail closed), naming the file
 * and how to recover; it is never silently replaced.
 */
export class JsonStore<T> {
  readonly path: string;

  constructor(
    readonly home: string,
    readonly fileName: string,
    private readonly parse: (value: unknown) => T,
    private readonly empty: () => T,
    /** What starting over costs, for the damaged-file message. */
    private readonly startingOver = 'to start over',
  ) {
    this.path = join(home, fileName);
  }

  /** The current document, or the empty one when the file does not exist yet. */
  async read(): Promise<T> {
    let text: string;
    try {
      const info = await lstat(this.path);
      if (!info.isFile()) {
        throw new StoreError(
          'STORE_INSECURE',
          `${this.path} is not a regular file. Move it aside and run the command again.`,
        );
      }
      if ((info.mode & 0o077) !== 0) {
        throw new StoreError(
          'STORE_INSECURE',
          `${this.path} is readable or writable by other users (mode 0${(info.mode & 0o777).toString(8)}). Run: chmod 600 '${this.path}'`,
        );
      }
      text = await readFile(this.path, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return this.empty();
      if (error instanceof StoreError) throw error;
      throw new StoreError('STORE_UNREADABLE', `Cannot read ${this.path}: ${(error as Error).message}`, {
        cause: error,
      });
    }
    try {
      return this.parse(parseStrictJson(text));
    } catch (error) {
      throw new StoreError(
        'STORE_CORRUPT',
        `${this.path} is damaged (${(error as Error).message}). Nothing was changed. Correct what is named by hand, restore the file from a backup, or move it aside (mv '${this.path}' '${this.path}.broken') ${this.startingOver}.`,
        { cause: error },
      );
    }
  }

  /** Read, change and write back under the lock; returns what `change` returned. */
  async update<R>(change: (document: T) => R | Promise<R>): Promise<R> {
    await ensurePrivateDirectory(this.home);
    return withFileLock(this.path, async () => {
      const document = await this.read();
      const before = JSON.stringify(document);
      const result = await change(document);
      // Unchanged documents are not rewritten: a server re-listing the same tools costs no write.
      if (JSON.stringify(document) !== before) {
        await writeFileAtomic(this.path, `${JSON.stringify(document, null, 2)}\n`, { mode: 0o600 });
      }
      return result;
    });
  }
}

/** Small shape checks for hand-written validators of stored documents. */
export function expectObject(value: unknown, what: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new StoreError('STORE_SHAPE', `${what} must be an object`);
  return value as Record<string, unknown>;
}

export function expectOnlyKeys(
  value: Record<string, unknown>,
  allowed: readonly string[],
  what: string,
): void {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key)) throw new StoreError('STORE_SHAPE', `${what} has an unknown field "${key}"`);
  }
}

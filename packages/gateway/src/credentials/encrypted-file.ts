import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDirectory, withFileLock, writeFileAtomic } from '@ringfence/policy';
import { expectObject, expectOnlyKeys, JsonStore, StoreError } from '../store/json-store.js';
import type { ValueBackend } from './backend.js';
import { CredentialError } from './errors.js';

export const VALUES_FILE = 'credential-values.json';
export const KEY_FILE = 'credential-values.key';

interface Sealed {
  readonly iv: string;
  readonly tag: string;
  readonly data: string;
}

interface ValuesFile {
  version: 1;
  values: Record<string, Sealed>;
}

function parseValuesFile(value: unknown): ValuesFile {
  const file = expectObject(value, VALUES_FILE);
  expectOnlyKeys(file, ['version', 'values'], VALUES_FILE);
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  const values: Record<string, Sealed> = Object.create(null);
  for (const [name, sealed] of Object.entries(expectObject(file.values, 'values'))) {
    const entry = expectObject(sealed, `values.${name}`);
    expectOnlyKeys(entry, ['iv', 'tag', 'data'], `values.${name}`);
    for (const key of ['iv', 'tag', 'data'] as const)
      if (typeof entry[key] !== 'string')
        throw new StoreError('STORE_SHAPE', `values.${name}.${key} must be a base64 string`);
    values[name] = entry as unknown as Sealed;
  }
  return { version: 1, values };
}

/** The name is the associated data: a sealed value moved to another name does not open. */
const aad = (name: string) => Buffer.from(`ringfence credential ${name}`, 'utf8');

/**
 * The fallback when no OS keyring answers: each value sealed with AES-256-GCM (a fresh 96-bit IV
 * per value, the credential's name as associated data) in `credential-values.json`, under a
 * random 256-bit key kept in a separate file, `credential-values.key` (0600). Both live in
 * RINGFENCE_HOME (0700). What that protects against and what it does not: docs/credentials.md.
 */
export class EncryptedFileBackend implements ValueBackend {
  readonly kind = 'encrypted-file' as const;
  readonly where: string;
  private readonly store: JsonStore<ValuesFile>;
  private readonly keyPath: string;

  constructor(private readonly home: string) {
    this.store = new JsonStore(
      home,
      VALUES_FILE,
      parseValuesFile,
      () => ({ version: 1, values: Object.create(null) }),
      'to start over (every credential then needs ringfence secret set NAME again)',
    );
    this.keyPath = join(home, KEY_FILE);
    // Worded so no path is followed by a word: the shared redactor reads a word after a name like
    // `….key` as its value and would hide it in every printed line.
    this.where = `${this.store.path}, AES-256-GCM, its key in ${this.keyPath}; both files mode 0600`;
  }

  /** The key, or undefined when there is none yet; a key file anyone else can read is refused. */
  private async readKey(): Promise<Buffer | undefined> {
    try {
      const info = await lstat(this.keyPath);
      if (!info.isFile() || (info.mode & 0o077) !== 0)
        throw new CredentialError(
          'CREDENTIAL_BACKEND',
          `${this.keyPath} is not a regular file readable by you only (mode 0${(info.mode & 0o777).toString(8)}). Run: chmod 600 '${this.keyPath}' (and if someone else could read it, rotate every credential: ringfence secret set NAME again).`,
        );
      const key = Buffer.from((await readFile(this.keyPath, 'utf8')).trim(), 'base64');
      if (key.length !== 32)
        throw new CredentialError(
          'CREDENTIAL_DAMAGED',
          `${this.keyPath} does not hold a 256-bit key. Restore it from a backup; without it the values in ${this.store.path} cannot be read (set them again with ringfence secret set).`,
        );
      return key;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  }

  private async keyForWriting(): Promise<Buffer> {
    await ensurePrivateDirectory(this.home);
    return withFileLock(this.keyPath, async () => {
      const existing = await this.readKey();
      if (existing) return existing;
      const key = randomBytes(32);
      await writeFileAtomic(this.keyPath, `${key.toString('base64')}\n`, { mode: 0o600 });
      return key;
    });
  }

  async get(name: string): Promise<string | undefined> {
    const sealed = (await this.store.read()).values[name];
    if (!sealed) return undefined;
    const key = await this.readKey();
    if (!key)
      throw new CredentialError(
        'CREDENTIAL_BACKEND',
        `Credential "${name}" is sealed in ${this.store.path} but its key file ${this.keyPath} is missing. Restore the key file, or set the credential again: ringfence secret set ${name}`,
      );
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(sealed.iv, 'base64'));
      decipher.setAAD(aad(name));
      decipher.setAuthTag(Buffer.from(sealed.tag, 'base64'));
      return Buffer.concat([decipher.update(Buffer.from(sealed.data, 'base64')), decipher.final()]).toString(
        'utf8',
      );
    } catch (error) {
      throw new CredentialError(
        'CREDENTIAL_DAMAGED',
        `Credential "${name}" in ${this.store.path} does not decrypt with the key in ${this.keyPath}: one of the two was changed or swapped. Set it again: ringfence secret set ${name}`,
        { cause: error },
      );
    }
  }

  async set(name: string, value: string): Promise<void> {
    const key = await this.keyForWriting();
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', key, iv);
    cipher.setAAD(aad(name));
    const data = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
    const sealed: Sealed = {
      iv: iv.toString('base64'),
      tag: cipher.getAuthTag().toString('base64'),
      data: data.toString('base64'),
    };
    await this.store.update((file) => {
      file.values[name] = sealed;
    });
  }

  async delete(name: string): Promise<boolean> {
    return this.store.update((file) => {
      const had = name in file.values;
      delete file.values[name];
      return had;
    });
  }
}

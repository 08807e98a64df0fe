import { open, readFile, stat } from 'node:fs/promises';
import { dirname } from 'node:path';
import { checkPublicKey, type Ed25519KeyPair, keyPairFromSeed } from '../crypto/ed25519.js';
import { decodeBase64Strict, encodeBase64 } from '../envelope/base64.js';
import { ensurePrivateDirectory } from '../fs/atomic.js';
import { parseStrictJson } from '../json/strict.js';
import { KeyError } from './errors.js';
import { keyIdOf } from './keyid.js';

/** `NAME.pub`: a public key file. */
export interface PublicKeyFile {
  keytype: 'ed25519';
  keyid: string;
  public: string;
}

/** `NAME.key`: a private key file (mode 0600). */
export interface PrivateKeyFile {
  keytype: 'ed25519';
  keyid: string;
  seed: string;
}

/** A public key read from a file, with its recomputed keyid. */
export interface PublicKey {
  keyid: string;
  publicKey: Uint8Array;
}

function parseKeyFile(
  text: string,
  path: string,
  field: 'public' | 'seed',
): { keyid: string; bytes: Uint8Array } {
  let raw: unknown;
  try {
    raw = parseStrictJson(text, { source: path });
  } catch (error) {
    throw new KeyError(
      'KEY_FILE_INVALID',
      `${path} is not a ringfence key file: ${(error as Error).message}`,
    );
  }
  const record = raw as Record<string, unknown>;
  const keys =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? Object.keys(record).sort() : [];
  const expected = ['keyid', 'keytype', field].sort();
  if (keys.join() !== expected.join() || record.keytype !== 'ed25519' || typeof record.keyid !== 'string') {
    throw new KeyError(
      'KEY_FILE_INVALID',
      `${path} is not a ringfence ${field === 'seed' ? 'private' : 'public'} key file (expected {"keytype":"ed25519","keyid",…,"${field}"}); create one with \`ringfence policy keygen --out NAME\`.`,
    );
  }
  const bytes = decodeBase64Strict(String(record[field]));
  if (bytes?.length !== 32) {
    throw new KeyError('KEY_FILE_INVALID', `${path}: "${field}" must be 32 bytes of base64.`);
  }
  return { keyid: record.keyid, bytes };
}

/** Reads a `NAME.pub` file; the keyid is recomputed and must match the one written in the file. */
export async function readPublicKeyFile(path: string): Promise<PublicKey> {
  const text = await readFile(path, 'utf8').catch((error: Error) => {
    throw new KeyError('KEY_FILE_UNREADABLE', `Cannot read ${path}: ${error.message}`);
  });
  const { keyid, bytes } = parseKeyFile(text, path, 'public');
  if (keyIdOf(bytes) !== keyid) {
    throw new KeyError(
      'KEY_FILE_INVALID',
      `${path}: keyid does not match the key; the file was edited. Regenerate it.`,
    );
  }
  const problem = checkPublicKey(bytes);
  if (problem)
    throw new KeyError('KEY_FILE_INVALID', `${path}: the key is unusable (${problem}). Generate a new one.`);
  return { keyid, publicKey: bytes };
}

/**
 * Reads a `NAME.key` file. Refused when group or others can read it, as ssh does, because a
 * signing key that others can read is no longer the administrator's alone.
 */
export async function readPrivateKeyFile(path: string): Promise<Ed25519KeyPair> {
  const info = await stat(path).catch((error: Error) => {
    throw new KeyError('KEY_FILE_UNREADABLE', `Cannot read ${path}: ${error.message}`);
  });
  if ((info.mode & 0o077) !== 0) {
    throw new KeyError(
      'KEY_FILE_UNSAFE',
      `${path} is accessible by group or others (mode ${(info.mode & 0o777).toString(8)}); run \`chmod 600 ${path}\`.`,
    );
  }
  const { keyid, bytes } = parseKeyFile(await readFile(path, 'utf8'), path, 'seed');
  const pair = keyPairFromSeed(bytes);
  if (keyIdOf(pair.publicKey) !== keyid) {
    throw new KeyError('KEY_FILE_INVALID', `${path}: keyid does not match the seed; the file was edited.`);
  }
  return pair;
}

/** The JSON objects written to `NAME.pub` and `NAME.key` for a key pair. */
export function keyFiles(pair: Ed25519KeyPair): { pub: PublicKeyFile; key: PrivateKeyFile } {
  const keyid = keyIdOf(pair.publicKey);
  return {
    pub: { keytype: 'ed25519', keyid, public: encodeBase64(pair.publicKey) },
    key: { keytype: 'ed25519', keyid, seed: encodeBase64(pair.seed) },
  };
}

/**
 * Writes `PATH.key` (0600) and `PATH.pub` (0644). Refuses to overwrite either: losing a signing
 * key by accident cannot be undone.
 */
export async function writeKeyPair(
  pathPrefix: string,
  pair: Ed25519KeyPair,
): Promise<{ keyid: string; key: string; pub: string }> {
  const files = keyFiles(pair);
  const keyPath = `${pathPrefix}.key`;
  const pubPath = `${pathPrefix}.pub`;
  await ensureParent(keyPath);
  // Check both names first so a clash on the .pub never leaves an orphaned new .key behind.
  for (const path of [keyPath, pubPath]) {
    if (await exists(path)) {
      throw new KeyError(
        'KEY_FILE_EXISTS',
        `${path} already exists; choose another --out or move the old key away first.`,
      );
    }
  }
  for (const [path, body, mode] of [
    [keyPath, files.key, 0o600],
    [pubPath, files.pub, 0o644],
  ] as const) {
    let handle: Awaited<ReturnType<typeof open>>;
    try {
      handle = await open(path, 'wx', mode);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') {
        throw new KeyError(
          'KEY_FILE_EXISTS',
          `${path} already exists; choose another --out or move the old key away first.`,
        );
      }
      throw new KeyError('KEY_FILE_UNREADABLE', `Cannot create ${path}: ${(error as Error).message}`);
    }
    try {
      await handle.writeFile(`${JSON.stringify(body, null, 2)}\n`);
      await handle.chmod(mode);
      await handle.sync();
    } finally {
      await handle.close();
    }
  }
  return { keyid: files.pub.keyid, key: keyPath, pub: pubPath };
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

async function ensureParent(path: string): Promise<void> {
  const dir = dirname(path);
  if (!(await exists(dir))) await ensurePrivateDirectory(dir);
}

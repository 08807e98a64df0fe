import { chmod, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { generateKeyPair } from '../crypto/ed25519.js';
import { readPrivateKeyFile, readPublicKeyFile, writeKeyPair } from './keyfile.js';
import { keyIdOf } from './keyid.js';

describe('key files', () => {
  it('round-trips a key pair and recomputes keyids', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-keys-'));
    const pair = generateKeyPair();
    const written = await writeKeyPair(join(dir, 'admin'), pair);
    expect(written.keyid).toBe(keyIdOf(pair.publicKey));
    expect((await readPublicKeyFile(written.pub)).publicKey).toEqual(pair.publicKey);
    expect((await readPrivateKeyFile(written.key)).publicKey).toEqual(pair.publicKey);
  });

  it('refuses a private key readable by group or others', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-keys-'));
    const written = await writeKeyPair(join(dir, 'admin'), generateKeyPair());
    await chmod(written.key, 0o640);
    await expect(readPrivateKeyFile(written.key)).rejects.toMatchObject({ code: 'KEY_FILE_UNSAFE' });
  });

  it('refuses edited files: wrong keyid, extra fields, duplicate members, short keys', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-keys-'));
    const written = await writeKeyPair(join(dir, 'admin'), generateKeyPair());
    const pub = JSON.parse(await readFile(written.pub, 'utf8'));
    const cases = [
      { ...pub, keyid: '0'.repeat(64) },
      { ...pub, extra: 1 },
      { ...pub, public: 'AAAA' },
      { ...pub, keytype: 'rsa' },
    ];
    for (const [i, body] of cases.entries()) {
      const path = join(dir, `bad${i}.pub`);
      await writeFile(path, JSON.stringify(body));
      await expect(readPublicKeyFile(path)).rejects.toMatchObject({ code: 'KEY_FILE_INVALID' });
    }
    const dup = join(dir, 'dup.pub');
    await writeFile(
      dup,
      `{"keytype":"ed25519","keyid":"${pub.keyid}","public":"${pub.public}","public":"${pub.public}"}`,
    );
    await expect(readPublicKeyFile(dup)).rejects.toMatchObject({ code: 'KEY_FILE_INVALID' });
  });

  it('never overwrites an existing key', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-keys-'));
    await writeKeyPair(join(dir, 'admin'), generateKeyPair());
    const before = await readFile(join(dir, 'admin.key'), 'utf8');
    await expect(writeKeyPair(join(dir, 'admin'), generateKeyPair())).rejects.toMatchObject({
      code: 'KEY_FILE_EXISTS',
    });
    expect(await readFile(join(dir, 'admin.key'), 'utf8')).toBe(before);
    await writeFile(join(dir, 'other.pub'), '{}');
    await expect(writeKeyPair(join(dir, 'other'), generateKeyPair())).rejects.toMatchObject({
      code: 'KEY_FILE_EXISTS',
    });
    await expect(readFile(join(dir, 'other.key'))).rejects.toThrow();
  });
});

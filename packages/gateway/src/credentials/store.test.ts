import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { KEY_FILE, VALUES_FILE } from './encrypted-file.js';
import { backendChoiceFrom, CredentialStore } from './store.js';

const VALUE = 'ghp_StoreTestValue0123456789abcdefABCDEF';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-cred-'));
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

/** Every byte of every file in the home, as one buffer: a value must be in none of them. */
async function homeBytes(): Promise<Buffer> {
  const files = await readdir(home);
  return Buffer.concat(await Promise.all(files.map((f) => readFile(join(home, f)))));
}

describe('CredentialStore over the encrypted file', () => {
  it('stores, reads, lists without values, binds and removes', async () => {
    const store = new CredentialStore(home, 'file');
    const status = await store.set({ name: 'gh', class: 'github', bindTo: ['github'], value: VALUE });
    expect(status.kind).toBe('encrypted-file');
    expect(status.keyringUnavailable).toBe('RINGFENCE_CREDENTIALS=file');
    expect(await store.value('gh')).toBe(VALUE);
    expect(await store.list()).toEqual({
      gh: { class: 'github', bound_to: ['github'], backend: 'encrypted-file' },
    });
    expect((await store.bind('gh', ['ci'])).bound_to).toEqual(['github', 'ci']);
    expect((await store.bind('gh', ['github'], true)).bound_to).toEqual(['ci']);
    expect(await store.all()).toEqual([{ id: 'gh', class: 'github', value: VALUE, boundTo: ['ci'] }]);
    // The value is on disk only sealed: not as text, not as base64, not as hex.
    const bytes = await homeBytes();
    for (const form of [VALUE, Buffer.from(VALUE).toString('base64'), Buffer.from(VALUE).toString('hex')])
      expect(bytes.includes(Buffer.from(form))).toBe(false);
    for (const file of ['credentials.json', VALUES_FILE, KEY_FILE])
      expect((await stat(join(home, file))).mode & 0o777).toBe(0o600);
    await store.remove('gh');
    expect(await store.list()).toEqual({});
    await expect(store.value('gh')).rejects.toMatchObject({ code: 'CREDENTIAL_UNKNOWN' });
  });

  it('unbindServer (mcp rm) takes the server out of every binding, so a new server of that name inherits none', async () => {
    const store = new CredentialStore(home, 'file');
    await store.set({ name: 'a', class: 'generic', bindTo: ['gone', 'kept'], value: 'value-a-123' });
    await store.set({ name: 'b', class: 'generic', bindTo: ['kept'], value: 'value-b-123' });
    expect(await store.unbindServer('gone')).toEqual(['a']);
    expect((await store.list()).a?.bound_to).toEqual(['kept']);
    expect(await store.unbindServer('gone')).toEqual([]);
  });

  it('refuses a bad name, class, binding or an empty value, storing nothing', async () => {
    const store = new CredentialStore(home, 'file');
    const base = { name: 'ok', class: 'generic', bindTo: ['srv'], value: 'v' };
    await expect(store.set({ ...base, name: '../x' })).rejects.toMatchObject({ code: 'CREDENTIAL_USAGE' });
    await expect(store.set({ ...base, class: 'aws-ish' })).rejects.toMatchObject({
      code: 'CREDENTIAL_USAGE',
    });
    await expect(store.set({ ...base, bindTo: ['Bad Name'] })).rejects.toMatchObject({
      code: 'CREDENTIAL_USAGE',
    });
    await expect(store.set({ ...base, value: '' })).rejects.toMatchObject({ code: 'CREDENTIAL_USAGE' });
    expect(await store.list()).toEqual({});
  });

  it('a sealed value swapped to another name, or a changed byte, does not open (and the error names no value)', async () => {
    const store = new CredentialStore(home, 'file');
    await store.set({ name: 'a', class: 'generic', bindTo: [], value: VALUE });
    await store.set({ name: 'b', class: 'generic', bindTo: [], value: 'other-value-1234' });
    const path = join(home, VALUES_FILE);
    const file = JSON.parse(await readFile(path, 'utf8'));
    file.values.b = file.values.a;
    await writeFile(path, JSON.stringify(file), { mode: 0o600 });
    const swapped = await store.value('b').catch((e: Error) => e);
    expect(swapped).toMatchObject({ code: 'CREDENTIAL_DAMAGED' });
    expect(String((swapped as Error).message)).not.toContain(VALUE);
    const data = Buffer.from(file.values.a.data, 'base64');
    data[0] = (data[0] ?? 0) ^ 1;
    file.values.a.data = data.toString('base64');
    await writeFile(path, JSON.stringify(file), { mode: 0o600 });
    await expect(store.value('a')).rejects.toMatchObject({ code: 'CREDENTIAL_DAMAGED' });
  });

  it('refuses a key file others can read, and says when the key is missing', async () => {
    const store = new CredentialStore(home, 'file');
    await store.set({ name: 'a', class: 'generic', bindTo: [], value: VALUE });
    const { chmod } = await import('node:fs/promises');
    await chmod(join(home, KEY_FILE), 0o644);
    await expect(store.value('a')).rejects.toMatchObject({ code: 'CREDENTIAL_BACKEND' });
    await rm(join(home, KEY_FILE));
    await expect(store.value('a')).rejects.toThrow(/key file .* is missing/);
  });

  it('RINGFENCE_CREDENTIALS picks the backend; an unknown choice is refused', () => {
    expect(backendChoiceFrom({})).toBe('auto');
    expect(backendChoiceFrom({ RINGFENCE_CREDENTIALS: 'file' })).toBe('file');
    expect(() => backendChoiceFrom({ RINGFENCE_CREDENTIALS: 'plain' })).toThrow(
      /not one of auto, keyring, file/,
    );
  });

  it('without a Secret Service, auto falls back to the file and says why; keyring refuses', async () => {
    const env = { ...process.env };
    delete process.env.DBUS_SESSION_BUS_ADDRESS;
    try {
      const auto = await new CredentialStore(home, 'auto').backendStatus();
      expect(auto.kind).toBe('encrypted-file');
      expect(auto.keyringUnavailable).toMatch(/no Secret Service answers/);
      await expect(new CredentialStore(home, 'keyring').backendStatus()).rejects.toMatchObject({
        code: 'CREDENTIAL_BACKEND',
      });
    } finally {
      process.env.DBUS_SESSION_BUS_ADDRESS = env.DBUS_SESSION_BUS_ADDRESS;
      if (env.DBUS_SESSION_BUS_ADDRESS === undefined) delete process.env.DBUS_SESSION_BUS_ADDRESS;
    }
  });
});

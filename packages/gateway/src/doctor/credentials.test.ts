import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialStore } from '../credentials/store.js';
import { checkCredentials } from './credentials.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-doctor-cred-'));
});
afterEach(async () => rm(home, { recursive: true, force: true }));

describe('doctor: credential store', () => {
  it('says how many values each backend holds and where new ones go, never a value', async () => {
    await new CredentialStore(home, 'file').set({
      name: 'a',
      class: 'generic',
      bindTo: [],
      value: 'doctorValue01',
    });
    const check = await checkCredentials({ env: { RINGFENCE_HOME: home, RINGFENCE_CREDENTIALS: 'file' } });
    expect(check.status).toBe('ok');
    expect(check.summary).toMatch(
      /^1 credential\(s\): 1 in the encrypted file; new values go to .*credential-values\.json/,
    );
    expect(check.summary).not.toContain('doctorValue01');
  });

  it('warns when values are in the OS keyring and it does not answer now', async () => {
    await mkdir(home, { recursive: true });
    await writeFile(
      join(home, 'credentials.json'),
      JSON.stringify({
        version: 1,
        credentials: { k: { class: 'bearer', bound_to: ['s'], backend: 'secret-service' } },
      }),
      { mode: 0o600 },
    );
    const check = await checkCredentials({ env: { RINGFENCE_HOME: home, RINGFENCE_CREDENTIALS: 'file' } });
    expect(check.status).toBe('warn');
    expect(check.summary).toContain('1 in the OS keyring (Secret Service)');
    expect(check.summary).toContain('does not answer now');
    expect(check.fix).toMatch(/unlock your keyring/);
  });
});

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ContainerServerConfig, HttpServerConfig } from '../config/servers.js';
import { hostsOutsideClass } from './classes.js';
import { checkSecretReferences, resolveSecretReferences } from './references.js';
import { CredentialStore } from './store.js';

const VALUE = 'AKIAREFERENCETEST012';

const contained = (egress: ContainerServerConfig['egress'], name = 'aws'): ContainerServerConfig => ({
  name,
  transport: 'container',
  image: 'x',
  image_id: `sha256:${'0'.repeat(64)}`,
  egress,
  env: { AWS_ACCESS_KEY_ID: '@secret:aws-key', LOG: 'debug' },
});

let home: string;
let store: CredentialStore;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-ref-'));
  store = new CredentialStore(home, 'file');
  await store.set({ name: 'aws-key', class: 'aws', bindTo: ['aws'], value: VALUE });
});
afterEach(async () => {
  await rm(home, { recursive: true, force: true });
});

async function refusal(server: ContainerServerConfig | HttpServerConfig): Promise<string> {
  const error = (await checkSecretReferences(server, store).catch((e: Error) => e)) as Error;
  expect(error).toBeInstanceOf(Error);
  expect(error.message).not.toContain(VALUE);
  return error.message;
}

describe('@secret: references', () => {
  it('a bound credential of a fitting class passes, and resolves only at start', async () => {
    const server = contained({ mode: 'allow', hosts: ['sts.amazonaws.com', '*.s3.amazonaws.com:443'] });
    await checkSecretReferences(server, store);
    const started = await resolveSecretReferences(server, store);
    expect(started.env).toEqual({ AWS_ACCESS_KEY_ID: VALUE, LOG: 'debug' });
    expect(server.env?.AWS_ACCESS_KEY_ID).toBe('@secret:aws-key');
  });

  it('refuses a credential not bound to the server, naming the command that binds it', async () => {
    expect(await refusal(contained({ mode: 'allow', hosts: ['sts.amazonaws.com'] }, 'other'))).toMatch(
      /not bound to server "other".*ringfence secret bind aws-key --server other/,
    );
  });

  it('refuses a credential for a server with no network, with the reason', async () => {
    expect(await refusal(contained({ mode: 'deny' }))).toMatch(
      /no network \(egress deny\).*nowhere legitimate/,
    );
  });

  it('refuses a class for an allowlisted host outside its provider', async () => {
    const message = await refusal(contained({ mode: 'allow', hosts: ['sts.amazonaws.com', 'evil.example'] }));
    expect(message).toMatch(/class aws.*can reach evil\.example/);
    expect(message).not.toMatch(/sts\.amazonaws\.com,/);
  });

  it('a lookalike domain is not the provider', () => {
    expect(
      hostsOutsideClass('aws', ['amazonaws.com.evil.example', 'evilamazonaws.com', '*.amazonaws.com']),
    ).toEqual(['amazonaws.com.evil.example', 'evilamazonaws.com']);
    expect(hostsOutsideClass('github', ['api.github.com:443', 'github.com'])).toEqual([]);
    expect(hostsOutsideClass('generic', ['anything.example'])).toEqual([]);
  });

  it('refuses an unknown credential, and a name that is not one', async () => {
    const server = { ...contained({ mode: 'any' }), env: { X: '@secret:missing' } };
    expect(await refusal(server)).toMatch(/No credential named "missing".*ringfence secret set missing/);
    await expect(
      checkSecretReferences({ ...server, env: { X: '@secret:../x' } }, store),
    ).rejects.toMatchObject({
      code: 'CREDENTIAL_USAGE',
    });
  });

  it('a remote server: the header is checked against the URL host and resolved at connection', async () => {
    await store.set({ name: 'docs-token', class: 'bearer', bindTo: ['docs'], value: 'Bearer tok-123456' });
    const server: HttpServerConfig = {
      name: 'docs',
      transport: 'http',
      url: 'https://mcp.example.com/mcp',
      headers: { Authorization: '@secret:docs-token' },
    };
    await checkSecretReferences(server, store);
    expect((await resolveSecretReferences(server, store)).headers).toEqual({
      Authorization: 'Bearer tok-123456',
    });
    await store.set({ name: 'gh', class: 'github', bindTo: ['docs'], value: 'ghp_x' });
    expect(await refusal({ ...server, headers: { Authorization: '@secret:gh' } })).toMatch(
      /class github.*can reach mcp\.example\.com/,
    );
  });

  it('a binding removed after registration stops the start', async () => {
    const server = contained({ mode: 'allow', hosts: ['sts.amazonaws.com'] });
    await store.bind('aws-key', ['aws'], true);
    await expect(resolveSecretReferences(server, store)).rejects.toMatchObject({
      code: 'CREDENTIAL_NOT_BOUND',
    });
  });
});

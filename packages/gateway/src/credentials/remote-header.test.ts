// A remote server registered with `--header Authorization=@secret:NAME` is sent the stored value
// on the wire, read at connection; the registration (the config RemoteUpstream holds) keeps only
// the reference.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServerConfig } from '../config/servers.js';
import { modernServer } from '../upstream/__fixtures__/modern-http-server.js';
import { RemoteUpstream } from '../upstream/remote.js';
import { resolveSecretReferences } from './references.js';
import { CredentialStore } from './store.js';

const VALUE = 'Bearer remoteHeaderValue0099';
const cleanup: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step().catch(() => {});
});

describe('a remote server with an @secret: header', () => {
  it('gets the stored value on the wire, and never the reference', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rf-remote-secret-'));
    cleanup.push(() => rm(home, { recursive: true, force: true }));
    const store = new CredentialStore(home, 'file');
    await store.set({ name: 'docs-auth', class: 'bearer', bindTo: ['docs'], value: VALUE });
    const server = await modernServer();
    cleanup.push(() => server.close());
    const config: HttpServerConfig = {
      name: 'docs',
      transport: 'http',
      url: server.url,
      headers: { Authorization: '@secret:docs-auth' },
    };
    const upstream = new RemoteUpstream(config, undefined, undefined, undefined, (c) =>
      resolveSecretReferences(c, store),
    );
    cleanup.push(() => upstream.close());
    await upstream.start();
    expect(server.seen.length).toBeGreaterThan(0);
    for (const seen of server.seen) expect(seen.headers.authorization).toBe(VALUE);
  });

  it('does not connect when the credential is no longer bound to it', async () => {
    const home = await mkdtemp(join(tmpdir(), 'rf-remote-secret-'));
    cleanup.push(() => rm(home, { recursive: true, force: true }));
    const store = new CredentialStore(home, 'file');
    await store.set({ name: 'docs-auth', class: 'bearer', bindTo: ['elsewhere'], value: VALUE });
    const server = await modernServer();
    cleanup.push(() => server.close());
    const config: HttpServerConfig = {
      name: 'docs',
      transport: 'http',
      url: server.url,
      headers: { Authorization: '@secret:docs-auth' },
    };
    const upstream = new RemoteUpstream(config, undefined, undefined, undefined, (c) =>
      resolveSecretReferences(c, store),
    );
    cleanup.push(() => upstream.close());
    const error = (await upstream.start().catch((e: Error) => e)) as Error;
    expect(error.message).toMatch(/not bound to server "docs"/);
    expect(error.message).not.toContain('remoteHeaderValue0099');
    expect(server.seen).toEqual([]);
  });
});

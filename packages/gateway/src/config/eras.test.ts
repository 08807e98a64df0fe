import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  EraStore,
  LEGACY_VERDICT_HORIZON_MS,
  MAX_DISCOVER_BYTES,
  parseErasFile,
  registrationDigest,
} from './eras.js';
import type { ContainerServerConfig, HttpServerConfig } from './servers.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-eras-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

const remote: HttpServerConfig = {
  name: 'docs',
  transport: 'http',
  url: 'https://mcp.example.com/mcp',
  headers: { authorization: 'Bearer secret-token-1' },
};
const contained: ContainerServerConfig = {
  name: 'memory',
  transport: 'container',
  image: 'x/memory:1',
  image_id: `sha256:${'a'.repeat(64)}`,
  egress: { mode: 'deny' },
  env: { API_KEY: 'k1' },
};
const discover = { supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, resultType: 'complete' };

describe('EraStore', () => {
  it('keeps a verdict per registration and gives it back', async () => {
    const store = new EraStore(home);
    await store.remember(remote, { era: 'modern', discover });
    await store.remember(contained, { era: 'legacy' });
    expect(await store.recall(remote)).toMatchObject({ era: 'modern', discover });
    expect(await store.recall(contained)).toMatchObject({ era: 'legacy' });
  });

  it('keeps how a 2026 server serves its 2025 clients, for its own registration only', async () => {
    const store = new EraStore(home);
    await store.remember(remote, { era: 'modern', discover });
    await store.remember(contained, { era: 'legacy' });
    await store.noteLegacyClients(remote, '2025');
    await store.noteLegacyClients(contained, '2025');
    await store.noteLegacyClients({ ...remote, url: 'https://other.example.com/mcp' }, '2026');
    expect(await store.recall(remote)).toMatchObject({ era: 'modern', legacy_clients: '2025' });
    expect(await store.recall(contained)).not.toHaveProperty('legacy_clients');
    // Read back from the file as it was written, and refused when it is not one of the two.
    const again = new EraStore(home);
    expect((await again.all()).docs).toMatchObject({ legacy_clients: '2025' });
    const file = JSON.parse(await readFile(again.path, 'utf8'));
    file.servers.docs.legacy_clients = 'both';
    expect(() => parseErasFile(file)).toThrow(/legacy_clients must be "2025" or "2026"/);
  });

  it('never stores a header or env value, only a digest of them', async () => {
    const store = new EraStore(home);
    await store.remember(remote, { era: 'legacy' });
    await store.remember(contained, { era: 'legacy' });
    const text = await readFile(store.path, 'utf8');
    expect(text).not.toContain('secret-token-1');
    expect(text).not.toContain('k1');
  });

  it('a changed credential, URL, image, command or env is another server: no verdict', async () => {
    const store = new EraStore(home);
    await store.remember(remote, { era: 'modern', discover });
    await store.remember(contained, { era: 'legacy' });
    expect(await store.recall({ ...remote, headers: { authorization: 'Bearer other' } })).toBeUndefined();
    expect(await store.recall({ ...remote, url: 'https://mcp.example.com/other' })).toBeUndefined();
    expect(await store.recall({ ...contained, image_id: `sha256:${'b'.repeat(64)}` })).toBeUndefined();
    expect(await store.recall({ ...contained, command: ['--x'] })).toBeUndefined();
    expect(await store.recall({ ...contained, env: { API_KEY: 'k2' } })).toBeUndefined();
    // Header order and case of the keys do not matter to the digest of the same registration.
    expect(registrationDigest({ ...remote, headers: { b: '1', a: '2' } })).toBe(
      registrationDigest({ ...remote, headers: { a: '2', b: '1' } }),
    );
  });

  it('a 2025 verdict is probed again after the horizon; a 2026 one needs none', async () => {
    const store = new EraStore(home);
    const then = Date.now();
    await store.remember(contained, { era: 'legacy' }, then);
    await store.remember(remote, { era: 'modern', discover }, then);
    const later = then + LEGACY_VERDICT_HORIZON_MS + 1;
    expect(await store.recall(contained, later)).toBeUndefined();
    expect(await store.recall(remote, later)).toMatchObject({ era: 'modern' });
  });

  it('a verdict dated in the future is not trusted (a hand-edited file would never be probed again)', async () => {
    const store = new EraStore(home);
    const now = Date.now();
    await store.remember(contained, { era: 'legacy' }, now + 365 * 24 * 3_600_000);
    expect(await store.recall(contained, now)).toBeUndefined();
    await store.remember(contained, { era: 'legacy' }, now + 60_000);
    expect(await store.recall(contained, now)).toMatchObject({ era: 'legacy' });
  });

  it('an oversized discover result is not kept (the next start probes)', async () => {
    const store = new EraStore(home);
    await store.remember(remote, {
      era: 'modern',
      discover: { ...discover, instructions: 'x'.repeat(MAX_DISCOVER_BYTES) },
    });
    expect(await store.recall(remote)).toBeUndefined();
  });

  it('refuses a damaged file by name', () => {
    expect(() =>
      parseErasFile({ version: 1, servers: { docs: { era: 'modern', registration: 'x', checked_at: '' } } }),
    ).toThrow(/servers.docs: registration/);
    expect(() =>
      parseErasFile({
        version: 1,
        servers: {
          docs: {
            era: 'legacy',
            registration: `sha256:${'a'.repeat(64)}`,
            checked_at: '2026-01-01',
            extra: 1,
          },
        },
      }),
    ).toThrow();
    expect(() => parseErasFile({ version: 2, servers: {} })).toThrow(/version 2/);
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EraStore } from '../config/eras.js';
import { type HttpServerConfig, ServerStore } from '../config/servers.js';
import { checkEras } from './eras.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-eras-doctor-'));
});
afterEach(() => rm(home, { recursive: true, force: true }));

const remote = (name: string, headers?: Record<string, string>): HttpServerConfig => ({
  name,
  transport: 'http',
  url: `http://127.0.0.1:9/${name}`,
  ...(headers ? { headers } : {}),
});

describe('doctor: each upstream era', () => {
  it('names each server with its era, or says when it is probed', async () => {
    const servers = new ServerStore(home);
    for (const name of ['docs', 'memory', 'notes']) await servers.add(remote(name));
    const eras = new EraStore(home);
    await eras.remember(remote('docs'), { era: 'modern', discover: { supportedVersions: ['2026-07-28'] } });
    await eras.remember(remote('memory'), { era: 'legacy' });
    const check = await checkEras({ env: { RINGFENCE_HOME: home } });
    expect(check.status).toBe('ok');
    expect(check.summary).toMatch(/docs: MCP 2026-07-28 \(modern, server\/discover; since \d{4}-\d\d-\d\d\)/);
    expect(check.summary).toMatch(/memory: MCP 2025 \(legacy, initialize; since /);
    expect(check.summary).toContain('notes: not probed yet (at its next start)');
  });

  it('says how a 2026 server serves 2025 clients, once learnt', async () => {
    const servers = new ServerStore(home);
    for (const name of ['both', 'modern']) await servers.add(remote(name));
    const eras = new EraStore(home);
    for (const name of ['both', 'modern'])
      await eras.remember(remote(name), { era: 'modern', discover: { supportedVersions: ['2026-07-28'] } });
    await eras.noteLegacyClients(remote('both'), '2025');
    await eras.noteLegacyClients(remote('modern'), '2026');
    const { summary } = await checkEras({ env: { RINGFENCE_HOME: home } });
    expect(summary).toMatch(/both: MCP 2026-07-28 \(modern, [^)]*\) \(2025 to 2025 clients\)/);
    expect(summary).toMatch(/modern: MCP 2026-07-28 \(modern, [^)]*\) \(2026-07-28 to 2025 clients too/);
  });

  it('a verdict for another registration (a changed credential) is not shown as the era', async () => {
    const servers = new ServerStore(home);
    await servers.add(remote('docs', { authorization: 'Bearer new' }));
    await new EraStore(home).remember(remote('docs', { authorization: 'Bearer old' }), { era: 'legacy' });
    const check = await checkEras({ env: { RINGFENCE_HOME: home } });
    expect(check.summary).toBe(
      'docs: registration changed since it was probed (probed again at its next start)',
    );
  });

  it('a damaged verdict file warns and names the way out, and the doctor still passes', async () => {
    await new ServerStore(home).add(remote('docs'));
    await writeFile(join(home, 'upstream-eras.json'), '{"version":1,"servers":{"docs":{"era":"future"}}}', {
      mode: 0o600,
    });
    const check = await checkEras({ env: { RINGFENCE_HOME: home } });
    expect(check).toMatchObject({ status: 'warn', required: false });
    expect(check.fix).toContain('upstream-eras.json.broken');
  });
});

// The console's HTTP guard without a browser: the token, the cookie, Host, Origin, methods, the
// loopback rule, and that answering creates no file. The browser test (test/e2e/console.test.ts)
// checks the same from a real page.
import { type FSWatcher, watch } from 'node:fs';
import { mkdir, mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../audit/log.js';
import { CONSOLE_CSP, type RunningConsole, startConsole } from './server.js';

const TOKEN = 'console-unit-token-0123456789';

function get(url: string, headers: Record<string, string> = {}, method = 'GET') {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: string;
  }>((resolve, reject) => {
    const req = request(url, { method, headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

let dir: string;
let home: string;
let running: RunningConsole;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-console-server-'));
  home = join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  const log = await AuditLog.open({ path: join(home, 'audit.jsonl'), session: 's' });
  await log.append({ type: 'gateway.start', refs: { pid: 1 } });
  await log.close();
  const assets = join(dir, 'assets');
  await mkdir(assets);
  for (const file of ['index.html', 'console.js', 'console.css']) await writeFile(join(assets, file), file);
  running = await startConsole({ home, address: '127.0.0.1:0', token: TOKEN, assetsDir: assets });
});
afterEach(async () => {
  await running.close();
  await rm(dir, { recursive: true, force: true });
});

/** The token exchanged as a browser does: the cookie it is given and the page address it is sent to. */
async function login(): Promise<{ cookie: string; page: string }> {
  const answer = await get(`${running.origin}/?token=${TOKEN}`);
  expect(answer.status).toBe(303);
  const page = answer.headers.location as string;
  expect(page).toMatch(/^\/s\/[A-Za-z0-9_-]{43}\/$/);
  const port = new URL(running.origin).port;
  const [set] = answer.headers['set-cookie'] as string[];
  expect(set).toBe(`${set!.split(';')[0]}; HttpOnly; SameSite=Strict; Path=${page}`);
  expect(set).toMatch(new RegExp(`^ringfence_console_${port}=[A-Za-z0-9_-]{43};`));
  expect(set).not.toContain(TOKEN);
  return { cookie: set!.split(';')[0]!, page: `${running.origin}${page}` };
}

describe('ringfence console: who may load it', () => {
  it('answers nothing without the cookie, and gives one only for the right token', async () => {
    for (const path of ['/', '/console.js', '/api/overview', '/api/entries', '/api/chain', '/api/events'])
      expect((await get(`${running.origin}${path}`)).status, path).toBe(401);
    const wrong = await get(`${running.origin}/?token=${TOKEN}x`);
    expect(wrong.status).toBe(401);
    expect(wrong.headers['set-cookie']).toBeUndefined();
    const { cookie, page } = await login();
    const shown = await get(page, { cookie });
    expect(shown.status).toBe(200);
    expect(shown.body).toBe('index.html');
    expect(shown.headers['content-security-policy']).toBe(CONSOLE_CSP);
    expect((await get(`${page}console.js`, { cookie })).body).toBe('console.js');
    expect((await get(`${page}api/chain`, { cookie })).status).toBe(200);
    // Without its slash the page address is sent to itself with one (relative URLs need it).
    const bare = await get(page.slice(0, -1), { cookie });
    expect([bare.status, bare.headers.location]).toEqual([308, new URL(page).pathname]);
    const port = new URL(running.origin).port;
    expect((await get(page, { cookie: `ringfence_console_${port}=guess` })).status).toBe(401);
  });

  it('refuses another Host or Origin even with the cookie or the token, and every method but GET', async () => {
    const { cookie, page } = await login();
    const port = new URL(running.origin).port;
    const host = await get(`${page}api/overview`, { cookie, host: `rebound.example:${port}` });
    expect(host.status).toBe(403);
    const token = await get(`${running.origin}/?token=${TOKEN}`, { host: `rebound.example:${port}` });
    expect(token.status).toBe(403);
    expect(token.headers['set-cookie']).toBeUndefined();
    for (const origin of ['http://evil.example', `https://127.0.0.1:${port}`, 'null'])
      expect((await get(`${page}api/overview`, { cookie, origin })).status, origin).toBe(403);
    expect((await get(`${page}api/overview`, { cookie, origin: running.origin })).status).toBe(200);
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS'])
      expect((await get(`${page}api/overview`, { cookie }, method)).status, method).toBe(405);
  });

  it('listens on loopback only unless told otherwise', async () => {
    await expect(startConsole({ home, address: '0.0.0.0:0' })).rejects.toMatchObject({
      code: 'LISTEN_NOT_LOOPBACK',
    });
  });

  it('creates no file while it reads the home and verifies the chain (no lock file either)', async () => {
    const { cookie, page } = await login();
    const changes: string[] = [];
    const watcher: FSWatcher = watch(home, (event, file) => changes.push(`${event} ${file}`));
    try {
      const chain = JSON.parse((await get(`${page}api/chain`, { cookie })).body);
      expect(chain).toMatchObject({ ok: true, entries: 1 });
      for (const path of ['api/overview', 'api/entries?after=0'])
        expect((await get(`${page}${path}`, { cookie })).status, path).toBe(200);
      // fs.watch reports asynchronously. A late event can only make this test miss a write, never
      // fail without one; the browser test watches a whole visit as well.
      await new Promise((resolve) => setTimeout(resolve, 200));
    } finally {
      watcher.close();
    }
    expect(changes).toEqual([]);
  });

  it('says on the page when the log it follows was replaced', async () => {
    const { cookie, page: address } = await login();
    const other = join(dir, 'other.jsonl');
    const log = await AuditLog.open({ path: other, session: 't' });
    await log.append({ type: 'gateway.start', refs: { pid: 2 } });
    await log.close();
    await rename(other, join(home, 'audit.jsonl'));
    const page = async () => JSON.parse((await get(`${address}api/entries?after=0`, { cookie })).body);
    await expect
      .poll(async () => (await page()).notice, { timeout: 15_000 })
      .toMatch(/was replaced or cut short/);
    expect((await page()).entries.map((e: { session: string }) => e.session)).toEqual(['s', 't']);
  });
});

// Issue 21.7: cookies are not scoped by port, so another server of 127.0.0.1 the person visits
// may get the console's cookie and replay it, from a script, with any Host, Origin or path it
// likes. The cookie alone must unlock nothing: not the page, not one byte of the home.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AuditLog } from '../audit/log.js';
import { type RunningConsole, startConsole } from './server.js';

const TOKEN = 'console-replay-token-0123456789';

function get(url: string, headers: Record<string, string> = {}) {
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: string;
  }>((resolve, reject) => {
    const req = request(url, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => {
        body += chunk.toString();
        // An event stream never ends: what it sent at once is enough.
        if (res.headers['content-type'] === 'text/event-stream') res.destroy();
      });
      res.on('close', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

let dir: string;
let home: string;
let running: RunningConsole;
let port: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-console-replay-'));
  home = join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  const log = await AuditLog.open({ path: join(home, 'audit.jsonl'), session: 'replay-session-marker' });
  await log.append({ type: 'gateway.start', refs: { pid: 1 } });
  await log.close();
  const assets = join(dir, 'assets');
  await mkdir(assets);
  for (const file of ['index.html', 'console.js', 'console.css'])
    await writeFile(join(assets, file), `${file}-bytes`);
  running = await startConsole({ home, address: '127.0.0.1:0', token: TOKEN, assetsDir: assets });
  port = new URL(running.origin).port;
});
afterEach(async () => {
  await running.close();
  await rm(dir, { recursive: true, force: true });
});

async function exchange() {
  const answer = await get(`${running.origin}/?token=${TOKEN}`);
  const set = (answer.headers['set-cookie'] as string[])[0]!;
  return {
    pair: set.split(';')[0]!,
    value: set.split(';')[0]!.split('=').slice(1).join('='),
    page: answer.headers.location as string,
  };
}

/** Everything a replayer could ask for, with nothing but the cookie (and what it can guess). */
const guesses = (value: string) => [
  '/',
  '/index.html',
  '/console.js',
  '/console.css',
  '/api/overview',
  '/api/entries?after=0',
  '/api/chain',
  '/api/events',
  '/s/',
  '/s//',
  '/s/api/overview',
  `/s/${value}/`,
  `/s/${value}/api/overview`,
  '/s/guess/api/chain',
  '/s/%2e%2e/api/overview',
];

/** Nothing of the home may be in a refusal: not its path, the audit log, or the page. */
function revealsNothing(answer: { status: number; body: string }, what: string) {
  expect(answer.status, what).toBe(401);
  for (const secret of [
    home,
    'replay-session-marker',
    'gateway.start',
    'index.html-bytes',
    'console.js-bytes',
  ])
    expect(answer.body, what).not.toContain(secret);
}

describe('a console cookie replayed from elsewhere unlocks nothing', () => {
  it('the cookie alone, from a script on another port, with its own or the console’s Origin', async () => {
    const { pair, value } = await exchange();
    const origins = [undefined, `http://127.0.0.1:${Number(port) + 1}`, running.origin];
    for (const path of guesses(value))
      for (const origin of origins) {
        const headers: Record<string, string> = { cookie: pair, ...(origin ? { origin } : {}) };
        const answer = await get(`${running.origin}${path}`, headers);
        if (origin && origin !== running.origin) expect(answer.status, `${path} from ${origin}`).toBe(403);
        else revealsNothing(answer, `${path} with the cookie alone`);
      }
    // Under the name the console used before, too.
    revealsNothing(await get(`${running.origin}/`, { cookie: `ringfence_console=${value}` }), 'old name');
  });

  it('a page address without its own cookie: alone, with another session’s cookie, or another console’s', async () => {
    const first = await exchange();
    const second = await exchange();
    expect(second.page).not.toBe(first.page);
    revealsNothing(await get(`${running.origin}${first.page}api/overview`), 'page key alone');
    revealsNothing(
      await get(`${running.origin}${first.page}api/overview`, { cookie: second.pair }),
      "another session's cookie",
    );
    const other = await startConsole({
      home,
      address: '127.0.0.1:0',
      token: TOKEN,
      assetsDir: join(dir, 'assets'),
    });
    try {
      const theirs = await get(`${other.origin}/?token=${TOKEN}`);
      const theirPair = (theirs.headers['set-cookie'] as string[])[0]!.split(';')[0]!;
      expect(theirPair.startsWith(`ringfence_console_${new URL(other.origin).port}=`)).toBe(true);
      // Another console's session, even under this console's cookie name, is not this one's.
      const renamed = `ringfence_console_${port}=${theirPair.split('=').slice(1).join('=')}`;
      revealsNothing(
        await get(`${running.origin}${theirs.headers.location as string}api/overview`, { cookie: renamed }),
        "another console's session",
      );
    } finally {
      await other.close();
    }
    // Both pairs still work for their own browser.
    for (const { pair, page } of [first, second])
      expect((await get(`${running.origin}${page}api/overview`, { cookie: pair })).status).toBe(200);
  });

  it('the right pair, sent by a page of another port or site (Fetch Metadata), is refused', async () => {
    const { pair, page } = await exchange();
    for (const site of ['same-site', 'cross-site']) {
      const answer = await get(`${running.origin}${page}api/overview`, {
        cookie: pair,
        'sec-fetch-site': site,
      });
      expect(answer.status, site).toBe(403);
      expect(answer.body).not.toContain(home);
    }
    for (const site of ['same-origin', 'none'])
      expect(
        (await get(`${running.origin}${page}api/overview`, { cookie: pair, 'sec-fetch-site': site })).status,
      ).toBe(200);
  });

  it('a cookie of the same name planted by another port does not lock the page out', async () => {
    const { pair, page } = await exchange();
    const planted = `ringfence_console_${port}=planted-by-another-port`;
    for (const cookie of [`${planted}; ${pair}`, `${pair}; ${planted}`])
      expect((await get(`${running.origin}${page}api/chain`, { cookie })).status).toBe(200);
  });
});

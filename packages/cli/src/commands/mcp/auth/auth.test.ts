import { chmod, mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { OAuthTokenStore } from '@ringfence/gateway/remote-auth';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import {
  type AuthServer,
  driveBrowser,
  type ResourceServer,
  startAuthServer,
  startResourceServer,
} from '../../../../../gateway/src/remote-auth/__fixtures__/oidc.js';

const root = new URL('../../../..', import.meta.url).pathname;
let dir: string;
let home: string;
const saved = { ...process.env };
let as: AuthServer;
let rs: ResourceServer;

beforeAll(async () => {
  as = await startAuthServer();
  rs = await startResourceServer([as.issuer]);
});
afterAll(async () => {
  await rs.close();
  await as.close();
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-auth-'));
  home = join(dir, 'home');
  process.env.RINGFENCE_HOME = home;
  process.env.RINGFENCE_POLICY_DIR = join(dir, 'etc');
  // The "browser": writes the URL it is given where the test picks it up and plays the person.
  const browser = join(dir, 'browser.sh');
  await writeFile(browser, `#!/bin/sh\nprintf '%s' "$1" > "${join(dir, 'opened')}"\n`);
  await chmod(browser, 0o755);
  process.env.BROWSER = browser;
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** Plays the person once the "browser" was opened. */
async function personLogsIn(): Promise<void> {
  for (let i = 0; i < 500; i++) {
    const url = await readFile(join(dir, 'opened'), 'utf8').catch(() => '');
    if (url) return void (await driveBrowser(url));
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('the browser was never opened');
}

/** Every output and every file in the home but the token store must be free of these. */
async function expectNoSecrets(outputs: string[], secrets: (string | undefined)[]) {
  const texts = [...outputs];
  for (const file of await readdir(home))
    if (file !== 'oauth-tokens.json') texts.push(await readFile(join(home, file), 'utf8').catch(() => ''));
  for (const secret of secrets.filter((s): s is string => !!s))
    for (const text of texts) expect(text.includes(secret)).toBe(false);
}

describe('ringfence mcp add --oauth, mcp auth login|status|logout, mcp rm', () => {
  it('registers, logs in through the browser, shows status by digest, logs out with revocation', async () => {
    const add = await runCommand(
      ['mcp', 'add', 'files', '--url', rs.url, '--oauth', '--scope', 'files:read'],
      { root },
    );
    expect(add.error).toBeUndefined();
    expect(add.stdout).toContain('log in with: ringfence mcp auth login files');
    const servers = JSON.parse(await readFile(join(home, 'mcp-servers.json'), 'utf8'));
    expect(servers.servers[0].oauth).toEqual({ scope: 'files:read' });

    const before = await runCommand(['mcp', 'auth', 'status', '--json'], { root });
    expect(before.result).toMatchObject({ servers: [{ name: 'files', logged_in: false }] });

    const [loggedIn] = await Promise.all([
      runCommand(['mcp', 'auth', 'login', 'files'], { root }),
      personLogsIn(),
    ]);
    expect(loggedIn.error).toBeUndefined();
    expect(loggedIn.stdout).toMatch(
      new RegExp(`Logged in to files at ${as.issuer} \\(client: dynamic; scope: files:read;`),
    );
    expect(loggedIn.stderr).toContain(await readFile(join(dir, 'opened'), 'utf8'));
    const entry = (await new OAuthTokenStore(home).get('files'))!;

    const status = await runCommand(['mcp', 'auth', 'status', 'files', '--json'], { root });
    expect(status.result).toMatchObject({
      servers: [
        { name: 'files', logged_in: true, issuer: as.issuer, client_via: 'dynamic', refresh_token: true },
      ],
    });
    const text = await runCommand(['mcp', 'auth', 'status'], { root });
    expect(text.stdout).toMatch(/token +sha256:[0-9a-f]{16}/);
    expect(text.stdout).toMatch(/readable by you only \(mode 0600\): \S+\/oauth-tokens\.json/);

    const logout = await runCommand(['mcp', 'auth', 'logout', 'files'], { root });
    expect(logout.stdout).toContain('Revoked at');
    expect(logout.stdout).toContain('Forgot the tokens of files');
    expect(await new OAuthTokenStore(home).get('files')).toBeUndefined();
    await expectNoSecrets(
      [add, before, loggedIn, status, text, logout].flatMap((r) => [
        r.stdout,
        r.stderr,
        JSON.stringify(r.result ?? null),
      ]),
      [entry.tokens!.access_token, entry.tokens!.refresh_token],
    );
  });

  it('mcp add --login logs in at once; mcp rm forgets the tokens', async () => {
    const [add] = await Promise.all([
      runCommand(['mcp', 'add', 'files', '--url', rs.url, '--oauth', '--scope', 'files:read', '--login'], {
        root,
      }),
      personLogsIn(),
    ]);
    expect(add.error).toBeUndefined();
    expect(add.stdout).toContain('Logged in to files');
    expect(await new OAuthTokenStore(home).get('files')).toBeDefined();
    const removed = await runCommand(['mcp', 'rm', 'files'], { root });
    expect(removed.stdout).toContain('forgot its OAuth tokens');
    expect(await new OAuthTokenStore(home).get('files')).toBeUndefined();
  });

  it('refuses a login for a server not registered for OAuth, and flags that need --oauth', async () => {
    await runCommand(['mcp', 'add', 'plain', '--url', rs.url], { root });
    const { error } = await runCommand(['mcp', 'auth', 'login', 'plain'], { root });
    expect(error).toMatchObject({ message: expect.stringContaining('not registered for OAuth login') });
    const flag = await runCommand(['mcp', 'add', 'x', '--url', rs.url, '--client-id', 'c'], { root });
    expect(flag.error?.message).toMatch(/--oauth/);
  });

  it('an installed policy that does not verify stops the login (fail closed)', async () => {
    await runCommand(['mcp', 'add', 'files', '--url', rs.url, '--oauth'], { root });
    await mkdir(join(dir, 'etc'), { recursive: true });
    await writeFile(join(dir, 'etc', 'policy.json'), '{"payloadType":"x"}');
    const { error } = await runCommand(['mcp', 'auth', 'login', 'files', '--no-browser'], { root });
    expect(error).toMatchObject({
      message: expect.stringContaining('No OAuth login runs without a valid policy'),
    });
  });
});

import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type HttpServerConfig, ServerStore, validateRemoteUrl, validateServerName } from './servers.js';

const remote = (name: string, url = 'https://mcp.example.com/mcp'): HttpServerConfig => ({
  name,
  transport: 'http',
  url,
});

describe('server names and URLs', () => {
  it.each(['a', 'docs', 'my-server-2', 'x'.repeat(32)])('accepts %s', (name) =>
    expect(() => validateServerName(name)).not.toThrow(),
  );
  it.each(['', '-a', 'A', 'a_b', 'x'.repeat(33), 'ringfence', 'a b', '../x'])('refuses %j', (name) =>
    expect(() => validateServerName(name)).toThrow(/server name|reserved/),
  );
  it.each([
    'https://mcp.example.com/mcp',
    'http://127.0.0.1:3001/mcp',
    'http://localhost:8080/mcp',
    'http://[::1]:9/mcp',
  ])('accepts %s', (url) => expect(() => validateRemoteUrl(url)).not.toThrow());
  it.each([
    ['http://mcp.example.com/mcp', /must use https/],
    ['http://10.0.0.1/mcp', /must use https/],
    ['http://127.0.0.1.example.com/mcp', /must use https/],
    ['ftp://x/mcp', /must use https/],
    ['https://user:pw@x/mcp', /credentials in a header/],
    ['not a url', /not a URL/],
  ])('refuses %s', (url, message) => expect(() => validateRemoteUrl(url)).toThrow(message));
});

describe('ServerStore', () => {
  let home: string;
  beforeEach(async () => {
    home = join(await mkdtemp(join(tmpdir(), 'rf-config-')), 'home');
  });
  afterEach(() => rm(join(home, '..'), { recursive: true, force: true }));

  it('adds, lists in order, refuses duplicates, removes; 0700 home, 0600 file', async () => {
    const store = new ServerStore(home);
    await store.add(remote('b'));
    await store.add(remote('a'));
    await expect(store.add(remote('a'))).rejects.toMatchObject({
      code: 'SERVER_EXISTS',
      message: expect.stringContaining('ringfence mcp rm a'),
    });
    expect((await store.list()).map((s) => s.name)).toEqual(['b', 'a']);
    await store.remove('b');
    expect((await store.list()).map((s) => s.name)).toEqual(['a']);
    await expect(store.remove('b')).rejects.toMatchObject({ code: 'SERVER_UNKNOWN' });
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    expect((await stat(store.path)).mode & 0o777).toBe(0o600);
  });

  it.each([
    ['not JSON', '{"version":1,'],
    ['a duplicate key', '{"version":1,"servers":[],"servers":[]}'],
    [
      'an unknown field',
      '{"version":1,"servers":[{"name":"a","transport":"http","url":"https://x/mcp","evil":1}]}',
    ],
    ['a plain-http remote', '{"version":1,"servers":[{"name":"a","transport":"http","url":"http://x/mcp"}]}'],
    ['a wrong version', '{"version":2,"servers":[]}'],
  ])('fails closed on %s, naming the file and the recovery', async (_label, content) => {
    const store = new ServerStore(home);
    await store.add(remote('a'));
    await writeFile(store.path, content, { mode: 0o600 });
    await expect(store.list()).rejects.toMatchObject({
      code: 'STORE_CORRUPT',
      message: expect.stringContaining(store.path),
    });
  });

  it('two processes adding at once lose nothing', async () => {
    const script = `
      import { ServerStore } from '@ringfence/gateway';
      const [home, prefix] = process.argv.slice(1);
      const store = new ServerStore(home);
      for (let i = 0; i < 15; i++) await store.add({ name: prefix + i, transport: 'http', url: 'https://x.example/mcp' });
    `;
    const run = (prefix: string) =>
      promisify(execFile)(process.execPath, ['--input-type=module', '-e', script, home, prefix], {
        cwd: join(__dirname, '..', '..'),
      });
    await Promise.all([run('p'), run('q')]);
    const names = (await new ServerStore(home).list()).map((s) => s.name);
    expect(names).toHaveLength(30);
    expect(new Set(names).size).toBe(30);
  });
});

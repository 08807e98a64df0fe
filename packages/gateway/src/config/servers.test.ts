import { execFile } from 'node:child_process';
import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ContainerServerConfig,
  type EgressRule,
  type HttpServerConfig,
  parseServersFile,
  ServerStore,
  validateEgressRule,
  validateRemoteUrl,
  validateServerName,
} from './servers.js';

const remote = (name: string, url = 'https://mcp.example.com/mcp'): HttpServerConfig => ({
  name,
  transport: 'http',
  url,
});

const contained = (name: string, egress: EgressRule): ContainerServerConfig => ({
  name,
  transport: 'container',
  image: 'example/server:1',
  image_id: `sha256:${'a'.repeat(64)}`,
  egress,
});

const CLI = { hosts: '--egress-allow', addresses: '--egress-allow-address' };

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
      import { ServerStore } from '@ringfence/gateway/config';
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

describe('validateEgressRule', () => {
  it.each<EgressRule>([
    { mode: 'allow', hosts: ['api.example.com', '*.example.org', 'api.example.com:8443'] },
    { mode: 'allow', hosts: ['a.test'], addresses: ['10.20.0.0/16', 'fd00::/8', '192.0.2.7'] },
    { mode: 'deny' },
    { mode: 'any' },
  ])('accepts %j', (rule) => expect(() => validateEgressRule(rule, CLI)).not.toThrow());

  it.each([
    [
      { mode: 'allow', hosts: ['a.test', '10.0.0.1'] },
      '--egress-allow "10.0.0.1" is refused: --allow "10.0.0.1": IP addresses cannot be allowed by name',
    ],
    [
      { mode: 'allow', hosts: ['0x7f.1'] },
      '--egress-allow "0x7f.1" is refused: --allow "0x7f.1": IP addresses',
    ],
    [
      { mode: 'allow', hosts: ['[::1]:443'] },
      '--egress-allow "[::1]:443" is refused: --allow "[::1]:443": IP addresses',
    ],
    [{ mode: 'allow', hosts: [''] }, '--egress-allow "" is refused: --allow "": not a valid host name'],
    [{ mode: 'allow', hosts: ['a.test:0'] }, 'the port must be a number from 1 to 65535'],
    [
      { mode: 'allow', hosts: ['a.test'], addresses: ['999.1.1.1/99'] },
      '--egress-allow-address "999.1.1.1/99" is refused: "999.1.1.1/99" is not an address range',
    ],
    [{ mode: 'allow', hosts: ['a.test'], addresses: ['10.0.0.0/33'] }, '"10.0.0.0/33" is refused'],
    [{ mode: 'allow', hosts: ['a.test'], addresses: ['::1/129'] }, '"::1/129" is refused'],
    [{ mode: 'allow', hosts: ['a.test'], addresses: [''] }, '--egress-allow-address "" is refused'],
  ] as const)('refuses %j with SERVER_EGRESS, the proxy message and what to do', (rule, message) => {
    let error: { code?: string; message?: string; cause?: { code?: string } } = {};
    try {
      validateEgressRule(rule as EgressRule, CLI);
    } catch (e) {
      error = e as typeof error;
    }
    expect(error.code).toBe('SERVER_EGRESS');
    expect(error.message).toContain(message);
    expect(error.message).toMatch(/Give (a host name|an address range)/);
    expect(error.cause?.code).toMatch(/^EGRESS_BAD_(ALLOW_ENTRY|CIDR)$/);
  });

  it('names the entry by position when given a prefix', () => {
    expect(() =>
      validateEgressRule({ mode: 'allow', hosts: ['ok.test'], addresses: ['10.0.0.0/8', 'x'] }, 'rule "r"'),
    ).toThrow('rule "r" egress.addresses[1] "x" is refused');
  });

  it('refuses an allow rule with no hosts: the sidecar would not start', () => {
    expect(() => validateEgressRule({ mode: 'allow', hosts: [] }, CLI)).toThrow(
      expect.objectContaining({
        code: 'SERVER_EGRESS',
        message: expect.stringContaining('--egress-allow is empty'),
      }),
    );
  });
});

describe('mcp-servers.json egress entries', () => {
  let home: string;
  beforeEach(async () => {
    home = join(await mkdtemp(join(tmpdir(), 'rf-config-')), 'home');
  });
  afterEach(() => rm(join(home, '..'), { recursive: true, force: true }));

  const handWritten = (bad: EgressRule) =>
    JSON.stringify({
      version: 1,
      servers: [
        remote('docs'),
        contained('good', { mode: 'allow', hosts: ['api.example.com'], addresses: ['10.20.0.0/16'] }),
        contained('tampered', bad),
      ],
    });

  it.each([
    [
      { mode: 'allow', hosts: ['api.example.com', '10.0.0.1'] },
      'mcp-servers.json servers[2] ("tampered") egress.hosts[1] "10.0.0.1" is refused: --allow "10.0.0.1": IP addresses cannot be allowed by name',
    ],
    [
      { mode: 'allow', hosts: ['api.example.com'], addresses: ['999.1.1.1/99'] },
      'mcp-servers.json servers[2] ("tampered") egress.addresses[0] "999.1.1.1/99" is refused: "999.1.1.1/99" is not an address range',
    ],
    [{ mode: 'allow' }, 'mcp-servers.json servers[2] ("tampered") egress.hosts is empty'],
  ] as const)(
    'a hand-edited %j is refused at load, naming the file, the index and the server',
    async (bad, message) => {
      const store = new ServerStore(home);
      await store.add(remote('seed'));
      await writeFile(store.path, handWritten(bad as EgressRule), { mode: 0o600 });
      const error = await store.list().then(
        () => undefined,
        (e: unknown) => e as { code: string; message: string; cause: { code: string; message: string } },
      );
      expect(error?.code).toBe('STORE_CORRUPT');
      expect(error?.message).toContain(store.path);
      expect(error?.message).toContain(message);
      expect(error?.cause.code).toBe('SERVER_EGRESS');
      expect(error?.cause.message).toContain(message);
      // The same file with the entry repaired loads.
      await writeFile(store.path, handWritten({ mode: 'allow', hosts: ['api.example.com'] }), {
        mode: 0o600,
      });
      expect((await store.list()).map((s) => s.name)).toEqual(['docs', 'good', 'tampered']);
    },
  );

  it('add refuses a bad egress entry with SERVER_EGRESS and registers nothing', async () => {
    const store = new ServerStore(home);
    await expect(store.add(contained('x', { mode: 'allow', hosts: ['10.0.0.1'] }))).rejects.toMatchObject({
      code: 'SERVER_EGRESS',
      message: expect.stringContaining('server "x" egress.hosts[0] "10.0.0.1" is refused'),
    });
    await expect(
      store.add(contained('y', { mode: 'allow', hosts: ['a.test'], addresses: ['10.0.0.0/33'] })),
    ).rejects.toMatchObject({
      code: 'SERVER_EGRESS',
      message: expect.stringContaining('server "y" egress.addresses[0] "10.0.0.0/33" is refused'),
    });
    expect(await store.list()).toEqual([]);
  });
});

describe('field errors are coded', () => {
  it.each([
    [{ version: 2, servers: [] }, 'version 2 is not supported (expected 1)'],
    [{ version: 1, servers: {} }, 'servers must be a list'],
    [{ version: 1, servers: [{ name: 7 }] }, 'servers[0].name must be a string'],
    [
      { version: 1, servers: [{ name: 'a', transport: 'ftp' }] },
      'servers[0].transport must be "container" or "http"',
    ],
    [
      { version: 1, servers: [{ ...contained('a', { mode: 'deny' }), image_id: 'sha256:x' }] },
      'servers[0].image_id must be sha256:<64 hex>',
    ],
    [
      { version: 1, servers: [contained('a', { mode: 'maybe' as 'deny' })] },
      'servers[0].egress.mode must be deny, allow or any',
    ],
    [
      { version: 1, servers: [contained('a', { mode: 'allow', hosts: [7 as unknown as string] })] },
      'servers[0].egress.hosts must be a list of strings',
    ],
    [{ version: 1, servers: [remote('a'), remote('a')] }, 'server "a" is listed twice'],
  ])('%j: SERVER_FIELD, same text as before', (file, message) => {
    expect(() => parseServersFile(file)).toThrow(expect.objectContaining({ code: 'SERVER_FIELD', message }));
  });

  it('protocol is "2025" or absent; anything else is refused with the command that fixes it', () => {
    expect(
      parseServersFile({ version: 1, servers: [{ ...remote('a'), protocol: '2025' }] }).servers[0],
    ).toMatchObject({
      protocol: '2025',
    });
    expect(() => parseServersFile({ version: 1, servers: [{ ...remote('a'), protocol: '2026' }] })).toThrow(
      expect.objectContaining({
        code: 'SERVER_FIELD',
        message: expect.stringContaining('protocol must be "2025"'),
      }),
    );
  });

  it('oauth.client_metadata_url must be https with a path (it is the client_id)', () => {
    const withUrl = (url: string) => ({
      version: 1,
      servers: [{ ...remote('a'), oauth: { client_metadata_url: url } }],
    });
    expect(parseServersFile(withUrl('https://org.example/ringfence/client.json')).servers[0]).toMatchObject({
      oauth: { client_metadata_url: 'https://org.example/ringfence/client.json' },
    });
    for (const bad of [
      'http://127.0.0.1/client.json',
      'https://org.example/',
      'not a url',
      'https://u:p@org.example/c.json',
    ])
      expect(() => parseServersFile(withUrl(bad))).toThrow(
        expect.objectContaining({
          code: 'SERVER_FIELD',
          message: expect.stringContaining('client_metadata_url must be an https URL'),
        }),
      );
  });

  it('add still says which flags to check for a field error', async () => {
    const home = join(await mkdtemp(join(tmpdir(), 'rf-config-')), 'home');
    try {
      await expect(
        new ServerStore(home).add({ ...contained('a', { mode: 'deny' }), image_id: 'nope' }),
      ).rejects.toMatchObject({
        code: 'SERVER_FIELD',
        message:
          'The server entry is not valid: servers[0].image_id must be sha256:<64 hex>. Check the flags against: ringfence mcp add --help',
      });
    } finally {
      await rm(join(home, '..'), { recursive: true, force: true });
    }
  });
});

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
let home: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-ls-'));
  home = join(dir, 'home');
  process.env.RINGFENCE_HOME = home;
  process.env.RINGFENCE_POLICY_DIR = join(dir, 'etc');
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('ringfence mcp ls --logs', () => {
  it("shows a server's stderr line by line, each marked as its, with nothing raw in it", async () => {
    await mkdir(join(home, 'logs'), { recursive: true, mode: 0o700 });
    const server = {
      name: 'evil',
      transport: 'container',
      image: 'evil:1',
      image_id: `sha256:${'a'.repeat(64)}`,
      egress: { mode: 'deny' },
    };
    await writeFile(join(home, 'mcp-servers.json'), JSON.stringify({ version: 1, servers: [server] }), {
      mode: 0o600,
    });
    const tag = (c: string) => String.fromCodePoint(0xe0000 + c.charCodeAt(0));
    await writeFile(
      join(home, 'logs', 'evil.stderr'),
      `starting\r\u001b[2Kready\u001b[8m\nok${tag('h')}${tag('i')}\u202e\u001b]52;c;ZXZpbA==\u0007\n`,
    );
    const { stdout, error } = await runCommand(['mcp', 'ls', '--logs'], { root });
    expect(error).toBeUndefined();
    const lines = stdout.trimEnd().split('\n');
    expect(lines.slice(-3)).toEqual([
      'evil  container  evil:1  egress deny  not seen yet',
      '    | starting\\u{D}\\u{1B}[2Kready\\u{1B}[8m',
      '    | ok\\u{E0068}\\u{E0069}\\u{202E}\\u{1B}]52;c;ZXZpbA==\\u{7}',
    ]);
    expect(stdout).not.toMatch(/[\r\u001b\u0007\u202e\u{e0000}-\u{e007f}]/u);
  });
});

describe('ringfence mcp ls', () => {
  it('shows a container image reference redacted, in text and --json: it may carry userinfo', async () => {
    await mkdir(home, { recursive: true, mode: 0o700 });
    const server = {
      name: 'img',
      transport: 'container',
      image: 'u:hunter2Secret@registry.example.com/img:1',
      image_id: `sha256:${'a'.repeat(64)}`,
      egress: { mode: 'deny' },
    };
    await writeFile(join(home, 'mcp-servers.json'), JSON.stringify({ version: 1, servers: [server] }), {
      mode: 0o600,
    });
    const { stdout, error } = await runCommand(['mcp', 'ls'], { root });
    expect(error).toBeUndefined();
    expect(stdout).toContain('img  container  ***@registry.example.com/img:1  egress deny');
    const json = await runCommand(['mcp', 'ls', '--json'], { root });
    expect(json.stdout).not.toContain('hunter2Secret');
    expect(stdout).not.toContain('hunter2Secret');
  });

  it('shows what a server may ask the client, where its fence is shown, and nothing for one that may not', async () => {
    await mkdir(home, { recursive: true, mode: 0o700 });
    const servers = [
      {
        name: 'writer',
        transport: 'http',
        url: 'https://w.example/mcp',
        allow_sampling: true,
        allow_elicitation: true,
      },
      { name: 'forms', transport: 'http', url: 'https://f.example/mcp', allow_elicitation: true },
      { name: 'plain', transport: 'http', url: 'https://p.example/mcp' },
    ];
    await writeFile(join(home, 'mcp-servers.json'), JSON.stringify({ version: 1, servers }), { mode: 0o600 });
    const { stdout, error } = await runCommand(['mcp', 'ls'], { root });
    expect(error).toBeUndefined();
    expect(stdout).toContain(
      'writer  http  https://w.example/mcp  may ask sampling, elicitation (if the policy allows)  not seen yet',
    );
    expect(stdout).toContain(
      'forms  http  https://f.example/mcp  may ask elicitation (if the policy allows)  not seen yet',
    );
    expect(stdout).toContain('plain  http  https://p.example/mcp  not seen yet');
    // The era each speaks, once probed (upstream-eras.json), for this very registration only.
    const { EraStore } = await import('@ringfence/gateway/config');
    const eras = new EraStore(home);
    await eras.remember(servers[2] as never, {
      era: 'modern',
      discover: { supportedVersions: ['2026-07-28'] },
    });
    await eras.remember({ ...servers[1], headers: { authorization: 'other' } } as never, { era: 'legacy' });
    const probed = await runCommand(['mcp', 'ls'], { root });
    expect(probed.stdout).toContain(
      'plain  http  https://p.example/mcp  speaks MCP 2026-07-28  not seen yet',
    );
    expect(probed.stdout).toContain(
      'forms  http  https://f.example/mcp  may ask elicitation (if the policy allows)  not seen yet',
    );
    const json = await runCommand(['mcp', 'ls', '--json'], { root });
    expect(JSON.parse(json.stdout).servers.map((s: { asks: string[] }) => s.asks)).toEqual([
      ['sampling', 'elicitation'],
      ['elicitation'],
      [],
    ]);
  });
});

describe('ringfence mcp ls shows no secret of a remote URL (issue 21.6)', () => {
  it("hides what a server's stderr prints of its credentials (--logs, text and --json)", async () => {
    await mkdir(join(home, 'logs'), { recursive: true, mode: 0o700 });
    const server = {
      name: 'chatty',
      transport: 'container',
      image: 'chatty:1',
      image_id: `sha256:${'b'.repeat(64)}`,
      egress: { mode: 'deny' },
    };
    await writeFile(join(home, 'mcp-servers.json'), JSON.stringify({ version: 1, servers: [server] }), {
      mode: 0o600,
    });
    await writeFile(
      join(home, 'logs', 'chatty.stderr'),
      'connecting to https://u:logPw0001@api.example/v1?api_key=logKey0002\nsent Authorization: Bearer logBearer0003\nready\n',
    );
    const text = await runCommand(['mcp', 'ls', '--logs'], { root });
    const json = await runCommand(['mcp', 'ls', '--logs', '--json'], { root });
    for (const output of [text.stdout, json.stdout])
      expect(output).not.toMatch(/logPw0001|logKey0002|logBearer0003/);
    expect(text.stdout).toContain('    | connecting to https://***@api.example/v1?api_key=***');
  });

  it('hides credential parameters, fragments and token-looking path segments, in text and --json', async () => {
    await mkdir(home, { recursive: true, mode: 0o700 });
    const secrets = ['apiKeySecret0001', 'sigSecret0002', 'fragSecret0003', 'Xy12Ab34Cd56Ef78Gh90Ij12Kl34'];
    const servers = [
      {
        name: 'keyed',
        transport: 'http',
        url: `https://k.example/hooks/${secrets[3]}/mcp?region=eu&api_key=${secrets[0]}&SIG=${secrets[1]}#token=${secrets[2]}`,
      },
    ];
    await writeFile(join(home, 'mcp-servers.json'), JSON.stringify({ version: 1, servers }), { mode: 0o600 });
    const text = await runCommand(['mcp', 'ls'], { root });
    expect(text.error).toBeUndefined();
    const json = await runCommand(['mcp', 'ls', '--json'], { root });
    for (const secret of secrets) {
      expect(text.stdout).not.toContain(secret);
      expect(json.stdout).not.toContain(secret);
    }
    expect(text.stdout).toContain(
      'keyed  http  https://k.example/hooks/***/mcp?region=eu&api_key=***&SIG=***#token=***',
    );
  });
});

describe('ringfence mcp ls, an OAuth registration', () => {
  it('says whether its login is due and the command, and never the token', async () => {
    await mkdir(home, { recursive: true, mode: 0o700 });
    const remote = (name: string) => ({
      name,
      transport: 'http',
      url: `https://${name}.example.test/mcp`,
      oauth: {},
    });
    await writeFile(
      join(home, 'mcp-servers.json'),
      JSON.stringify({ version: 1, servers: [remote('wiki'), remote('tracker')] }),
      { mode: 0o600 },
    );
    const login = {
      resource: 'https://wiki.example.test/mcp',
      resource_origin: 'https://wiki.example.test',
      authorization_server: {
        issuer: 'https://as.example.test',
        authorization_endpoint: 'https://as.example.test/authorize',
        token_endpoint: 'https://as.example.test/token',
      },
      client: { client_id: 'c', via: 'dynamic' },
      tokens: {
        access_token: 'AT-secret-wiki',
        token_type: 'Bearer',
        refresh_token: 'RT-secret',
        obtained_at: 1,
      },
    };
    await writeFile(
      join(home, 'oauth-tokens.json'),
      JSON.stringify({ version: 1, servers: { wiki: login } }),
      {
        mode: 0o600,
      },
    );
    const { stdout, error } = await runCommand(['mcp', 'ls'], { root });
    expect(error).toBeUndefined();
    expect(stdout).toMatch(
      /wiki {2}http .*\n {4}oauth: wiki: logged in \(token sha256:[0-9a-f]{16}, no expiry given\)/,
    );
    expect(stdout).toContain(
      '    oauth: tracker needs an OAuth login and none was made yet. Log in (a browser opens) with: ringfence mcp auth login tracker',
    );
    const json = await runCommand(['mcp', 'ls', '--json'], { root });
    const rows = JSON.parse(json.stdout).servers as { name: string; oauth: { login_needed: boolean } }[];
    expect(rows.map((r) => [r.name, r.oauth.login_needed])).toEqual([
      ['wiki', false],
      ['tracker', true],
    ]);
    expect(`${stdout}${json.stdout}`).not.toMatch(/AT-secret|RT-secret/);
  });
});

import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { parseAllowEntry, parseCidr } from '@ringfence/egress-proxy/contract';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
let servers: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-mcp-add-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  process.env.RINGFENCE_POLICY_DIR = join(dir, 'policy');
  // No engine answers here: a refusal that needed one would name the engine instead.
  process.env.DOCKER_HOST = `unix://${join(dir, 'no-engine.sock')}`;
  servers = join(dir, 'home', 'mcp-servers.json');
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** The egress proxy's own refusal of a value, as its parser words it. */
function proxyMessage(parse: () => unknown): string {
  try {
    parse();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the proxy accepted it');
}

const exitOf = (error: unknown) => (error as { oclif?: { exit?: number } } | undefined)?.oclif?.exit;

describe('ringfence mcp add refuses egress the proxy would refuse', () => {
  it('a range that is not one: exit 1, the proxy message, no servers file', async () => {
    const { error } = await runCommand(
      [
        'mcp',
        'add',
        'x',
        '--image',
        'example/img:1',
        '--egress-allow-address',
        '999.1.1.1/99',
        '--egress-allow',
        'api.example.com',
      ],
      { root },
    );
    expect(exitOf(error)).toBe(1);
    expect(error?.message).toMatch(/^--egress-allow-address "999\.1\.1\.1\/99" is refused: /);
    expect(error?.message).toContain(proxyMessage(() => parseCidr('999.1.1.1/99')));
    await expect(readFile(servers)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a bad range with no host at all: the proxy message, not a usage error, and no servers file', async () => {
    const { error } = await runCommand(
      ['mcp', 'add', 'x', '--image', 'IMG', '--egress-allow-address', '999.1.1.1/99'],
      { root },
    );
    expect(exitOf(error)).toBe(1);
    expect(error?.message).toMatch(/^--egress-allow-address "999\.1\.1\.1\/99" is refused: /);
    expect(error?.message).toContain(proxyMessage(() => parseCidr('999.1.1.1/99')));
    await expect(readFile(servers)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('an IP address as a host: exit 1, the proxy message, the servers file unchanged', async () => {
    const first = await runCommand(['mcp', 'add', 'docs', '--url', 'https://mcp.example.com/mcp'], { root });
    expect(first.error).toBeUndefined();
    const before = await readFile(servers, 'utf8');
    const { error } = await runCommand(
      ['mcp', 'add', 'x', '--image', 'example/img:1', '--egress-allow', '10.0.0.1'],
      { root },
    );
    expect(exitOf(error)).toBe(1);
    expect(error?.message).toMatch(/^--egress-allow "10\.0\.0\.1" is refused: /);
    expect(error?.message).toContain(proxyMessage(() => parseAllowEntry('10.0.0.1')));
    expect(await readFile(servers, 'utf8')).toBe(before);
  });
});

describe('ringfence mcp add', () => {
  it('registers a remote server and says how to see its tools', async () => {
    const { stdout, error } = await runCommand(
      ['mcp', 'add', 'docs', '--url', 'https://mcp.example.com/mcp', '--header', 'Authorization=token-t'],
      { root },
    );
    expect(error).toBeUndefined();
    expect(stdout).toContain('Registered docs (remote mcp.example.com).');
    expect(JSON.parse(await readFile(servers, 'utf8'))).toMatchObject({
      servers: [{ name: 'docs', transport: 'http', headers: { Authorization: 'token-t' } }],
    });
  });

  it('stores --call-timeout, --call-ceiling and --max-result-mb in the entry', async () => {
    const { error } = await runCommand(
      [
        'mcp',
        'add',
        'render',
        '--url',
        'https://render.example.com/mcp',
        '--call-timeout',
        '120',
        '--call-ceiling',
        '1800',
        '--max-result-mb',
        '12',
      ],
      { root },
    );
    expect(error).toBeUndefined();
    expect(JSON.parse(await readFile(servers, 'utf8')).servers[0]).toMatchObject({
      timeouts: { call_seconds: 120, ceiling_seconds: 1800 },
      max_result_mb: 12,
    });
  });

  it('flags that do not describe one server are a usage error (exit 2) and write nothing', async () => {
    for (const args of [
      ['mcp', 'add', 'x'],
      ['mcp', 'add', 'x', '--image', 'example/img:1', '--header', 'A=b'],
      ['mcp', 'add', 'x', '--image', 'example/img:1', '--env', 'NOVALUE'],
      [
        'mcp',
        'add',
        'x',
        '--url',
        'https://a.example.com/mcp',
        '--call-timeout',
        '90',
        '--call-ceiling',
        '30',
      ],
      ['mcp', 'add', 'x', '--url', 'https://a.example.com/mcp', '--max-result-mb', '100'],
    ]) {
      const { error } = await runCommand(args, { root });
      expect(exitOf(error), args.join(' ')).toBe(2);
      expect((error as { code?: string }).code).toBe('REGISTRATION_USAGE');
    }
    await expect(readFile(servers)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a token in the command after -- is refused before the engine is asked, never repeated, nothing written', async () => {
    const token = ['ghp_', 'Pos1tionalSecret0123456789abcdefAB'].join('');
    for (const tail of [['--token', token], [`--token=${token}`]]) {
      const { error, stdout, stderr } = await runCommand(
        ['mcp', 'add', 'x', '--image', 'example/img:1', '--', ...tail],
        { root },
      );
      expect(exitOf(error)).toBe(2);
      expect((error as { code?: string }).code).toBe('REGISTRATION_USAGE');
      expect((error as Error).message).toMatch(/carries a credential .*-e VAR=@secret:NAME/);
      expect((error as Error).message + stdout + stderr).not.toContain(token);
    }
    await expect(readFile(servers)).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('a valid contained server reaches the engine, and its absence is the refusal', async () => {
    const { error } = await runCommand(['mcp', 'add', 'x', '--image', 'example/img:1'], { root });
    expect(exitOf(error)).toBe(1);
    expect((error as { code?: string }).code).toBe('ENGINE_UNREACHABLE');
    await expect(readFile(servers)).rejects.toMatchObject({ code: 'ENOENT' });
  });
});

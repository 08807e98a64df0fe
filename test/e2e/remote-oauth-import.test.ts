// Issue 23: `ringfence client import` of a Claude Desktop config whose entry runs
// `npx -y mcp-remote URL` (the bridge that logs in by OAuth for clients that cannot), through to a
// working call: the import registers the URL behind OAuth and says a login is due with the
// command; that command, run as printed, logs in through the provider's pages in chromium; the
// rewritten client entry (`mcp serve --only NAME`) then calls the server's tool. Real processes,
// loopback only; nothing is fetched from npm (mcp-remote is never run).
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, firstText, freshHome } from '../helpers/mcp.js';
import {
  codeOf,
  leaked,
  loginThroughBrowser,
  type OAuthWorld,
  readableFiles,
  requireChromium,
  rf,
  startOAuthWorld,
  transcript,
} from '../helpers/oauth.js';
import { stopAll } from '../helpers/processes.js';

describe('client import of an npx mcp-remote entry, through to a working call', () => {
  let home: string;
  let world: OAuthWorld;
  let config: string;

  beforeAll(async () => {
    requireChromium();
    home = await freshHome();
    world = await startOAuthWorld();
    config = join(await mkdtemp(join(tmpdir(), 'rf-e2e-client-')), 'claude_desktop_config.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: {
          'Team Notes': {
            command: 'npx',
            args: ['-y', 'mcp-remote@0.1.29', world.notes.url, '--transport', 'http-first'],
          },
        },
      }),
    );
  });
  afterAll(async () => {
    await stopAll();
    await world?.close();
  });

  it('registers the URL behind OAuth, says the login is due, and the printed command makes it work', async () => {
    const imported = await rf(['client', 'import', 'claude-desktop', '--config', config], home);
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stdout).toContain('Team Notes  imported as team-notes');
    expect(imported.stdout).toContain('login due: ringfence mcp auth login team-notes');
    const servers = JSON.parse(await readFile(join(home, 'mcp-servers.json'), 'utf8'));
    expect(servers.servers).toEqual([
      expect.objectContaining({ name: 'team-notes', transport: 'http', url: world.notes.url, oauth: {} }),
    ]);

    // The client's rewritten entry starts `mcp serve --only team-notes`: before the login, it says so (stderr).
    const entry = JSON.parse(await readFile(config, 'utf8')).mcpServers['Team Notes'];
    expect(entry.args.slice(-4)).toEqual(['mcp', 'serve', '--only', 'team-notes']);
    const before = await connectStdio(home, {}, {}, { args: ['--only', 'team-notes'] });
    // Nothing of it is pinned yet: the client is shown ringfence's login_needed tool, which names the command.
    expect((await before.client.listTools()).tools.map((t) => t.name)).toEqual(['login_needed']);
    const told = await before.client.callTool({ name: 'login_needed', arguments: {} });
    expect(told.isError).toBe(true);
    expect(firstText(told)).toContain('ringfence mcp auth login team-notes');
    transcript.push(before.stderr());
    expect(before.stderr()).toContain('ringfence mcp auth login team-notes');
    await before.close();

    const done = await loginThroughBrowser(home, 'team-notes', world.as.issuer);
    expect(done.code, done.stderr).toBe(0);
    const after = await connectStdio(home, {}, {}, { args: ['--only', 'team-notes'] });
    const read = await after.client.callTool({ name: 'read_note', arguments: { id: '3' } });
    transcript.push(after.stderr());
    await after.close();
    expect(firstText(read)).toBe('note 3: hello from behind OAuth');

    const secrets = [...world.as.issued, codeOf(done.browser?.url) ?? ''];
    expect(
      leaked(`${transcript.join('\n')}\n${JSON.stringify(read)}\n${await readableFiles(home)}`, secrets),
    ).toEqual([]);
    expect((await rf(['audit', 'verify'], home)).code).toBe(0);
  });
});

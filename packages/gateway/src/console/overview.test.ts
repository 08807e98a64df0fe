import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readOverview } from './overview.js';

const digest = (c: string) => `sha256:${c.repeat(64)}`;
const at = '2026-11-30T10:00:00.000Z';
const schema = { type: 'object', properties: { q: { type: 'string' } } };

let dir: string;
let home: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-console-'));
  home = join(dir, 'home');
  await mkdir(home, { mode: 0o700 });
  await writeFile(
    join(home, 'mcp-servers.json'),
    JSON.stringify({
      version: 1,
      servers: [
        {
          name: 'docs',
          transport: 'http',
          url: 'https://mcp.example.com/hooks/Xy12Ab34Cd56Ef78Gh90Ij12/mcp?region=eu&key=hunter2&SIGNATURE=hunter4#access_token=hunter5',
          headers: { Authorization: 'Bearer hunter3' },
        },
      ],
    }),
    { mode: 0o600 },
  );
  await writeFile(
    join(home, 'mcp-pins.json'),
    JSON.stringify({
      version: 1,
      servers: {
        docs: {
          tools: {
            search: {
              digest: digest('a'),
              pinned_at: at,
              definition: { name: 'search', description: 'Search.', inputSchema: schema },
            },
          },
          pending: {
            search: {
              digest: digest('b'),
              seen_at: at,
              kind: 'changed',
              definition: { name: 'search', description: 'Search.\u202e\u200b', inputSchema: schema },
            },
            'a b': {
              digest: digest('c'),
              seen_at: at,
              kind: 'new',
              definition: { name: 'a b', description: '<script>x</script>', inputSchema: schema },
            },
          },
          pending_prompts: {
            greet: {
              digest: digest('d'),
              seen_at: at,
              kind: 'new',
              definition: { name: 'greet', description: 'Say hello.' },
            },
          },
          pending_instructions: {
            instructions: {
              digest: digest('f'),
              seen_at: at,
              kind: 'new',
              definition: { instructions: 'Search first.' },
            },
          },
        },
      },
    }),
    { mode: 0o600 },
  );
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('console overview', () => {
  it('renders server text before it leaves the server, and never sends credentials', async () => {
    const overview = await readOverview(home, undefined);
    const sent = JSON.stringify(overview);
    expect(sent).not.toMatch(/hunter[2-5]|Xy12Ab34Cd56Ef78Gh90Ij12/);
    expect(overview.servers[0]!.target.text).toBe(
      'https://mcp.example.com/hooks/***/mcp?region=eu&key=***&SIGNATURE=***#access_token=***',
    );
    const search = overview.reviews.find((r) => r.name.text === 'search')!;
    expect(search.after.description).toEqual({ text: 'Search.\\u{202E}\\u{200B}', escaped: 2 });
    expect(search.before?.description.text).toBe('Search.');
    expect(/[\u202e\u200b]/.test(sent)).toBe(false);
  });

  it('shows a container image reference redacted: it may carry userinfo', async () => {
    const image = {
      name: 'img',
      transport: 'container',
      image: 'u:hunter2Secret@registry.example.com/img:1',
      image_id: digest('e'),
      egress: { mode: 'deny' },
    };
    await writeFile(join(home, 'mcp-servers.json'), JSON.stringify({ version: 1, servers: [image] }), {
      mode: 0o600,
    });
    const overview = await readOverview(home, undefined);
    expect(JSON.stringify(overview)).not.toContain('hunter2Secret');
    expect(overview.servers[0]!.target.text).toBe('***@registry.example.com/img:1');
  });

  it('lists every pending kind with the command that approves it at a terminal', async () => {
    const overview = await readOverview(home, undefined);
    const commands = Object.fromEntries(
      overview.reviews.map((r) => [`${r.definition} ${r.name.text}`, r.commands]),
    );
    expect(commands).toEqual({
      'tool a\\u{20}b': ['ringfence mcp pins diff docs', 'ringfence mcp pins approve docs'],
      'tool search': ['ringfence mcp pins diff docs', 'ringfence mcp pins approve docs search'],
      'prompt greet': ['ringfence mcp pins diff docs', 'ringfence mcp pins approve docs --prompt greet'],
      'instructions instructions': [
        'ringfence mcp pins diff docs',
        'ringfence mcp pins approve docs --instructions',
      ],
    });
    const instructions = overview.reviews.find((r) => r.definition === 'instructions')!;
    expect(instructions.after.description.text).toBe('Search first.');
    expect(instructions.after.rest.text).toBe('{}');
    expect(overview.policy.state).toBe('none');
    expect(overview.servers[0]!.state.text).toBe('never started');
  });
});

import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { repoRoot, ringfence } from '../helpers/cli.js';
import { docker, probeImage } from '../helpers/containers.js';
import { connectStdio, freshHome, startToolServer } from '../helpers/mcp.js';
import { install, makeOrg, type Org, policyDocument, signPolicy } from '../helpers/policy.js';

// `mcp serve` as an AI client starts it (`ringfence mcp serve`) runs from the bundle with its code
// cache (packages/cli/scripts/bundle.mjs, src/lib/code-cache.ts); `ringfence mcp:serve` names the
// same command in a form the fast path does not take, so oclif runs it: both must say the same.
const BUNDLE = `file://${repoRoot}packages/cli/dist/bundle/serve.cjs`;
const CACHED = `mcp serve: fast path ${BUNDLE}, code cache accepted`;
const WORKER_CACHED = 'schema worker loaded, code cache accepted';
const WORKER_EARLY = 'schema worker: the pool took the one started early';
const TRACE = { RINGFENCE_STARTUP_TRACE: '1' };
const TOOK = 'mcp serve: the fast path took the command line';

/** stderr without the start-up trace lines (they differ between the two paths by design). */
const reports = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => !line.startsWith('ringfence: start-up '))
    .join('\n');

describe('mcp serve from the bundle', () => {
  let home: string;
  let policyDir: string;
  let org: Org;
  let upstream: Awaited<ReturnType<typeof startToolServer>>;
  const env = () => ({ RINGFENCE_HOME: home, RINGFENCE_POLICY_DIR: policyDir, ...TRACE });

  beforeAll(async () => {
    home = await freshHome();
    const dir = join(home, '..');
    policyDir = join(dir, 'etc');
    await mkdir(policyDir, { recursive: true });
    org = await makeOrg(join(dir, 'org'));
    const tools = join(dir, 'tools.json');
    await writeFile(
      tools,
      JSON.stringify([{ name: 'echo', description: 'Echo.', inputSchema: { type: 'object' } }]),
    );
    await writeFile(join(dir, 'behaviours.json'), '{}');
    upstream = await startToolServer(tools, join(dir, 'behaviours.json'));
    const added = await ringfence(['mcp', 'add', 'up', '--url', upstream.url], env());
    expect(added.code, added.stderr).toBe(0);
  });

  afterAll(() => upstream?.stop());

  it.each([
    [[], 'up_echo'],
    [['--only', 'up', '--session', 'e2e-fast-path'], 'echo'],
  ])('is what bin/run.js runs for `mcp serve %j`, and it serves the pinned tools', async (args, name) => {
    const served = await connectStdio(home, env(), {}, { args });
    try {
      const { tools } = await served.client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual([name]);
      expect(served.stderr()).toContain(CACHED);
      expect(served.stderr()).toContain(TOOK);
      expect(served.stderr()).toContain(WORKER_EARLY);
      // The worker's stderr reaches this process on its own channel, maybe after the listing.
      await vi.waitFor(() => expect(served.stderr()).toContain(WORKER_CACHED), { timeout: 10_000 });
    } finally {
      await served.close();
    }
  });

  it('still refuses a policy whose signature does not verify, as the oclif command does', async () => {
    const signed = await signPolicy(org, policyDocument({}), 'policy');
    await install(signed, org, env());
    const installed = join(policyDir, 'policy.json');
    const original = await readFile(installed, 'utf8');
    const envelope = JSON.parse(original) as { payload: string };
    const payload = Buffer.from(envelope.payload, 'base64')
      .toString('utf8')
      .replace('"e2e-corp"', '"e2e-corq"');
    await writeFile(
      installed,
      JSON.stringify({ ...envelope, payload: Buffer.from(payload).toString('base64') }),
    );
    try {
      const fast = await ringfence(['mcp', 'serve'], env());
      expect(fast.stderr).toContain(CACHED);
      expect(fast.stderr).toContain(TOOK);
      expect(fast.code).toBe(1);
      expect(fast.stdout).toBe('');
      expect(fast.stderr).toMatch(
        /^ringfence: The installed organisation policy is refused \(POLICY_SIGNATURES_INSUFFICIENT\): .* The gateway does not start without a valid policy once one is installed\. Check it with: ringfence doctor$/m,
      );
      const oclif = await ringfence(['mcp:serve'], env());
      expect(oclif.stderr).not.toContain('fast path');
      expect({ code: fast.code, stderr: reports(fast.stderr) }).toEqual({
        code: oclif.code,
        stderr: reports(oclif.stderr),
      });
    } finally {
      await writeFile(installed, original);
    }
  });

  it.each([
    [['--no-such-flag']],
    [['--session', 'Not_A_Session']],
    [['--max-sessions', '0']],
    [['--session-idle', 'soon']],
    [['--http']],
  ])('hands %j to oclif, which refuses it as before (exit 2)', async (args) => {
    const fast = await ringfence(['mcp', 'serve', ...args], env());
    const oclif = await ringfence(['mcp:serve', ...args], env());
    expect(fast.code).toBe(2);
    expect(fast.stdout).toBe('');
    expect(fast.stderr).not.toContain(TOOK);
    expect({ code: fast.code, stderr: reports(fast.stderr) }).toEqual({
      code: oclif.code,
      stderr: reports(oclif.stderr),
    });
  });

  describe('from a copy of the installation whose code caches are damaged', () => {
    // The caches of a copy (bin/, dist/, package.json; node_modules linked for oclif): the
    // repository's own build is shared by every test and is not to be touched.
    let copy: string;
    const caches = ['serve.cjs.cache', 'schema-worker.cjs.cache'];
    const originals = new Map<string, Buffer>();
    beforeAll(async () => {
      copy = await mkdtemp(join(tmpdir(), 'rf-e2e-install-'));
      for (const part of ['bin', 'dist', 'package.json'])
        await cp(join(repoRoot, 'packages/cli', part), join(copy, part), { recursive: true });
      await symlink(join(repoRoot, 'node_modules'), join(copy, 'node_modules'));
      for (const name of caches) originals.set(name, await readFile(join(copy, 'dist/bundle', name)));
    });
    afterAll(() => rm(copy, { recursive: true, force: true }));

    it.each([
      [
        'corrupt',
        (data: Buffer) => Buffer.concat([data.subarray(0, 64), Buffer.alloc(data.length - 64, 0x5a)]),
        'not the one the bundle names',
      ],
      ['truncated', (data: Buffer) => data.subarray(0, 4096), 'not the one the bundle names'],
      [
        'one bit off',
        (data: Buffer) => {
          const flipped = Buffer.from(data);
          flipped[flipped.length >> 1]! ^= 0x10;
          return flipped;
        },
        'not the one the bundle names',
      ],
      ['absent', undefined, 'absent'],
    ] as const)(
      'serves the pinned tools when both caches are %s, compiling from source',
      async (_, damage, state) => {
        for (const name of caches) {
          const path = join(copy, 'dist/bundle', name);
          await rm(path, { force: true });
          if (damage) await writeFile(path, damage(originals.get(name)!));
        }
        const served = await connectStdio(home, env(), {}, { bin: join(copy, 'bin/run.js') });
        try {
          const { tools } = await served.client.listTools();
          expect(tools.map((tool) => tool.name)).toEqual(['up_echo']);
          expect(served.stderr()).toContain(
            `mcp serve: fast path file://${copy}/dist/bundle/serve.cjs, code cache ${state}`,
          );
          await vi.waitFor(
            () => expect(served.stderr()).toContain(`schema worker loaded, code cache ${state}`),
            {
              timeout: 10_000,
            },
          );
        } finally {
          await served.close();
        }
      },
    );
  });

  it('hands --help to oclif', async () => {
    const help = await ringfence(['mcp', 'serve', '--help'], env());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Serve every registered server to an AI client as one MCP server');
    expect(help.stdout).toContain('--allow-mount');
  });
});

describe('mcp serve with a container server, from the bundle', () => {
  /** The engine's container events for one session between two moments (seconds). */
  async function containerEvents(session: string, since: number, until: number): Promise<string> {
    const stream = (await docker.getEvents({
      since,
      until,
      filters: { type: ['container'], label: [`ringfence.session=${session}`] },
    })) as NodeJS.ReadableStream;
    let text = '';
    for await (const chunk of stream) text += chunk.toString();
    return text;
  }

  it('starts no container when RINGFENCE_AGENT_TOKEN is the token of no agent', async () => {
    const home = await freshHome();
    const added = await ringfence(['mcp', 'add', 'probe', '--image', await probeImage()], {
      RINGFENCE_HOME: home,
    });
    expect(added.code, added.stderr).toBe(0);
    const session = `e2e-agent-${Date.now().toString(36)}`;
    const since = Math.floor(Date.now() / 1000) - 1;
    const refused = await ringfence(['mcp', 'serve', '--session', session], {
      RINGFENCE_HOME: home,
      RINGFENCE_AGENT_TOKEN: 'rfa_not-an-agent',
      ...TRACE,
    });
    expect(refused.stderr).toContain(TOOK);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^ringfence: RINGFENCE_AGENT_TOKEN is not the token of any agent; nothing was served\. See the agents with: ringfence agent ls$/m,
    );
    // The control: the same session served with no token does create its container.
    const served = await connectStdio(home, { ...TRACE }, {}, { args: ['--session', `${session}-ok`] });
    await served.client.listTools();
    await served.close();
    const until = Math.ceil(Date.now() / 1000) + 1;
    expect(await containerEvents(session, since, until)).toBe('');
    expect(await containerEvents(`${session}-ok`, since, until)).toContain('"create"');
  });
});

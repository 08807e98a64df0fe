import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot, ringfence } from '../helpers/cli.js';
import { connectStdio, freshHome, startToolServer } from '../helpers/mcp.js';
import { install, makeOrg, type Org, policyDocument, signPolicy } from '../helpers/policy.js';

// `mcp serve` as an AI client starts it (`ringfence mcp serve`) runs from the bundle
// (packages/cli/scripts/bundle.mjs); `ringfence mcp:serve` names the same command in a form the
// fast path does not take, so oclif runs it: both must say the same things.
const BUNDLE = `file://${repoRoot}packages/cli/dist/bundle/serve.js`;
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
      expect(served.stderr()).toContain(`mcp serve: fast path ${BUNDLE}`);
      expect(served.stderr()).toContain(TOOK);
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
      expect(fast.stderr).toContain(`mcp serve: fast path ${BUNDLE}`);
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

  it('hands --help to oclif', async () => {
    const help = await ringfence(['mcp', 'serve', '--help'], env());
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Serve every registered server to an AI client as one MCP server');
    expect(help.stdout).toContain('--allow-mount');
  });
});

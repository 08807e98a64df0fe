import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
const saved = { ...process.env };

const SOURCE = `_type: ringfence/policy
spec_version: 1
name: cli-test
version: 3
issued_at: 2026-01-01T00:00:00Z
expires: 2099-01-01T00:00:00Z
default_action: allow
mcp:
  - server: github
    allow_tools: [list_issues]
rules:
  - id: prod
    match: {server: github}
    when: [{arg: /repo, glob: "corp/prod-*"}]
    action: deny
`;

async function run(args: string[]) {
  process.exitCode = undefined;
  const result = await runCommand(args, { root });
  const exit = result.error
    ? ((result.error as { oclif?: { exit?: number } }).oclif?.exit ?? 1)
    : (process.exitCode ?? 0);
  process.exitCode = undefined;
  return { ...result, exit };
}

const p = (name: string) => join(dir, name);

async function setup(source = SOURCE) {
  for (const name of ['root', 'pol', 'pol2'])
    expect((await run(['policy', 'keygen', '--out', p(`keys/${name}`)])).exit).toBe(0);
  const init = await run([
    'policy',
    'root',
    'init',
    '--root-key',
    p('keys/root.pub'),
    '--root-threshold',
    '1',
    '--policy-key',
    p('keys/pol.pub'),
    '--policy-threshold',
    '1',
    '--expires',
    '2099-12-31',
    '--sign',
    p('keys/root.key'),
    '--out',
    p('root.json'),
  ]);
  expect(init.exit).toBe(0);
  await writeFile(p('policy.yaml'), source);
  expect(
    (await run(['policy', 'sign', p('policy.yaml'), '--key', p('keys/pol.key'), '--out', p('policy.json')]))
      .exit,
  ).toBe(0);
}

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-policy-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  process.env.RINGFENCE_POLICY_DIR = join(dir, 'etc');
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

describe('ringfence policy', () => {
  it('keygen writes a 0600 private key and a public key, prints the keyid, and never overwrites', async () => {
    const first = await run(['policy', 'keygen', '--out', p('k/admin')]);
    expect(first.exit).toBe(0);
    const pub = JSON.parse(await readFile(p('k/admin.pub'), 'utf8'));
    expect(first.stdout.trim()).toBe(pub.keyid);
    expect(pub).toMatchObject({ keytype: 'ed25519' });
    expect((await stat(p('k/admin.key'))).mode & 0o777).toBe(0o600);
    const again = await run(['policy', 'keygen', '--out', p('k/admin')]);
    expect(again.exit).toBe(1);
    expect(again.error?.message).toMatch(/already exists/);
  });

  it('root init refuses to replace an existing root unless --force', async () => {
    await setup();
    const args = [
      'policy',
      'root',
      'init',
      '--root-key',
      p('keys/root.pub'),
      '--root-threshold',
      '1',
      '--policy-key',
      p('keys/pol2.pub'),
      '--policy-threshold',
      '1',
      '--expires',
      '2099-12-31',
      '--sign',
      p('keys/root.key'),
      '--out',
      p('root.json'),
    ];
    const before = await readFile(p('root.json'), 'utf8');
    const refused = await run(args);
    expect(refused.exit).toBe(1);
    expect(refused.error?.message).toMatch(/already exists.*--previous/s);
    expect(await readFile(p('root.json'), 'utf8')).toBe(before);
    expect((await run([...args, '--force'])).exit).toBe(0);
    expect(await readFile(p('root.json'), 'utf8')).not.toBe(before);
  });

  it('root init → sign → verify, text and --json', async () => {
    await setup();
    const text = await run(['policy', 'verify', p('policy.json'), '--root', p('root.json')]);
    expect(text.exit).toBe(0);
    expect(text.stdout).toMatch(/^OK .*policy cli-test version 3/m);
    const json = await run(['policy', 'verify', p('policy.json'), '--root', p('root.json'), '--json']);
    expect(JSON.parse(json.stdout)).toMatchObject({
      ok: true,
      name: 'cli-test',
      version: 3,
      root_version: 1,
    });
  });

  it('verify exits 1 with a reason code on a tampered policy', async () => {
    await setup();
    const envelope = JSON.parse(await readFile(p('policy.json'), 'utf8'));
    const payload = Buffer.from(envelope.payload, 'base64')
      .toString('utf8')
      .replace('"version":3', '"version":4');
    envelope.payload = Buffer.from(payload).toString('base64');
    await writeFile(p('tampered.json'), JSON.stringify(envelope));
    const json = await run(['policy', 'verify', p('tampered.json'), '--root', p('root.json'), '--json']);
    expect(json.exit).toBe(1);
    expect(JSON.parse(json.stdout)).toMatchObject({ ok: false, code: 'POLICY_SIGNATURES_INSUFFICIENT' });
    const text = await run(['policy', 'verify', p('tampered.json'), '--root', p('root.json')]);
    expect(text.exit).toBe(1);
    expect(text.stderr).toMatch(/FAIL .*POLICY_SIGNATURES_INSUFFICIENT/);
  });

  it('verify several files: each reported, exit 1 when any fails, --json gives every result', async () => {
    await setup();
    const envelope = JSON.parse(await readFile(p('policy.json'), 'utf8'));
    envelope.signatures = [];
    await writeFile(p('unsigned.json'), JSON.stringify(envelope));
    const all = [p('policy.json'), p('unsigned.json'), p('missing.json')];
    const text = await run(['policy', 'verify', ...all, '--root', p('root.json')]);
    expect(text.exit).toBe(1);
    expect(text.stdout).toContain(`OK ${p('policy.json')}: policy cli-test version 3`);
    expect(text.stdout).toContain('1 of 3 policies verify.');
    expect(text.stderr).toContain(`FAIL ${p('unsigned.json')}: `);
    expect(text.stderr).toContain(`FAIL ${p('missing.json')}: FILE_UNREADABLE`);
    const json = await run(['policy', 'verify', ...all, '--root', p('root.json'), '--json']);
    expect(json.exit).toBe(1);
    const report = JSON.parse(json.stdout);
    expect(report.ok).toBe(false);
    expect(report.results.map((r: { file: string; ok: boolean }) => [r.file, r.ok])).toEqual([
      [p('policy.json'), true],
      [p('unsigned.json'), false],
      [p('missing.json'), false],
    ]);
    const good = await run([
      'policy',
      'verify',
      p('policy.json'),
      p('policy.json'),
      '--root',
      p('root.json'),
      '--json',
    ]);
    expect(good.exit).toBe(0);
    expect(JSON.parse(good.stdout)).toMatchObject({ ok: true, results: [{ ok: true }, { ok: true }] });
  });

  it('verify --min-days-valid fails a policy that expires sooner', async () => {
    await setup();
    await writeFile(
      p('soon.yaml'),
      SOURCE.replace('2099-01-01', new Date(Date.now() + 5 * 86_400_000).toISOString().slice(0, 10)),
    );
    await run(['policy', 'sign', p('soon.yaml'), '--key', p('keys/pol.key'), '--out', p('soon.json')]);
    expect(
      (await run(['policy', 'verify', p('soon.json'), '--root', p('root.json'), '--min-days-valid', '3']))
        .exit,
    ).toBe(0);
    const late = await run([
      'policy',
      'verify',
      p('soon.json'),
      '--root',
      p('root.json'),
      '--min-days-valid',
      '30',
      '--json',
    ]);
    expect(late.exit).toBe(1);
    expect(JSON.parse(late.stdout)).toMatchObject({ code: 'POLICY_EXPIRES_SOON' });
  });

  it('usage errors exit 2', async () => {
    expect((await run(['policy', 'verify', 'x.json'])).exit).toBe(2);
    expect((await run(['policy', 'keygen'])).exit).toBe(2);
  });

  it('sign refuses an invalid source before signing', async () => {
    await setup();
    await writeFile(p('bad.yaml'), `${SOURCE}surprise: true\n`);
    const result = await run([
      'policy',
      'sign',
      p('bad.yaml'),
      '--key',
      p('keys/pol.key'),
      '--out',
      p('bad.json'),
    ]);
    expect(result.exit).toBe(1);
    expect(result.error?.message).toMatch(/unknown field "surprise"/);
  });

  it('show summarises a verified policy and shows nothing from one that fails', async () => {
    await setup();
    const shown = await run(['policy', 'show', p('policy.json'), '--root', p('root.json')]);
    expect(shown.exit).toBe(0);
    expect(shown.stdout).toContain('Policy cli-test version 3 (verified)');
    expect(shown.stdout).toMatch(/prod: deny when server=github and \/repo matches "corp\/prod-\*"/);
    expect(shown.stdout).toMatch(/otherwise: allow/);
    const wrongRoot = await run(['policy', 'show', p('policy.json'), '--root', p('policy.json')]);
    expect(wrongRoot.exit).toBe(1);
    expect(wrongRoot.stdout).not.toContain('cli-test');
  });

  it("show renders the author's free text: a reason cannot add a line or hide the rest", async () => {
    await setup(
      SOURCE.replace(
        '    action: deny\n',
        '    action: deny\n    reason: "fine\\n  otherwise: deny\\e[8m\\u202e"\n  - id: agent\n    match: {agent: "ci\\u200bbot"}\n    action: allow\n',
      ),
    );
    const shown = await run(['policy', 'show', p('policy.json'), '--root', p('root.json')]);
    expect(shown.exit).toBe(0);
    expect(shown.stdout).toContain('(fine\\u{A}  otherwise: deny\\u{1B}[8m\\u{202E})');
    expect(shown.stdout).toContain('2. agent: allow when agent=ci\\u{200B}bot');
    expect(shown.stdout.split('\n').filter((line) => line.includes('otherwise: '))).toHaveLength(2);
    expect(shown.stdout.split('\n').filter((line) => line.startsWith('  otherwise: '))).toEqual([
      '  otherwise: allow',
    ]);
    expect(shown.stdout).not.toMatch(/[\u001b\u200b\u202e]/);
  });

  it('co-signing with sign adds a signature to meet a threshold', async () => {
    await setup();
    await run([
      'policy',
      'root',
      'init',
      '--root-key',
      p('keys/root.pub'),
      '--root-threshold',
      '1',
      '--policy-key',
      p('keys/pol.pub'),
      '--policy-key',
      p('keys/pol2.pub'),
      '--policy-threshold',
      '2',
      '--expires',
      '2099-12-31',
      '--sign',
      p('keys/root.key'),
      '--out',
      p('root2of2.json'),
    ]);
    const one = await run(['policy', 'verify', p('policy.json'), '--root', p('root2of2.json'), '--json']);
    expect(JSON.parse(one.stdout)).toMatchObject({ ok: false, code: 'POLICY_SIGNATURES_INSUFFICIENT' });
    expect(
      (
        await run([
          'policy',
          'sign',
          p('policy.json'),
          '--key',
          p('keys/pol2.key'),
          '--out',
          p('policy.json'),
        ])
      ).exit,
    ).toBe(0);
    const two = await run(['policy', 'verify', p('policy.json'), '--root', p('root2of2.json'), '--json']);
    expect(JSON.parse(two.stdout)).toMatchObject({ ok: true });
  });

  it('root init --previous rotates keys and verify follows the chain', async () => {
    await setup();
    await run(['policy', 'keygen', '--out', p('keys/root-new')]);
    const base = [
      'policy',
      'root',
      'init',
      '--previous',
      p('root.json'),
      '--root-key',
      p('keys/root-new.pub'),
      '--root-threshold',
      '1',
      '--policy-key',
      p('keys/pol.pub'),
      '--policy-threshold',
      '1',
      '--expires',
      '2099-12-31',
      '--out',
      p('root.v2.json'),
    ];
    const newOnly = await run([...base, '--sign', p('keys/root-new.key')]);
    expect(newOnly.exit).toBe(1);
    expect(newOnly.error?.message).toContain('ROOT_ROTATION_UNSIGNED');
    // Two signers on two machines: the first writes a partial root, the second co-signs it.
    expect((await run([...base, '--sign', p('keys/root-new.key'), '--partial'])).exit).toBe(0);
    const partial = await run([
      'policy',
      'verify',
      p('policy.json'),
      '--root',
      p('root.json'),
      '--root',
      p('root.v2.json'),
      '--json',
    ]);
    expect(JSON.parse(partial.stdout)).toMatchObject({ ok: false, code: 'ROOT_ROTATION_UNSIGNED' });
    expect(
      (
        await run([
          'policy',
          'sign',
          p('root.v2.json'),
          '--key',
          p('keys/root.key'),
          '--out',
          p('root.v2.json'),
        ])
      ).exit,
    ).toBe(0);
    const chain = await run([
      'policy',
      'verify',
      p('policy.json'),
      '--root',
      p('root.json'),
      '--root',
      p('root.v2.json'),
      '--json',
    ]);
    expect(JSON.parse(chain.stdout)).toMatchObject({ ok: true, root_version: 2 });
  });

  it('install writes the policy and refuses a rollback afterwards', async () => {
    await setup();
    const installed = await run(['policy', 'install', p('policy.json'), '--root', p('root.json')]);
    expect(installed.exit).toBe(0);
    expect(await readFile(p('etc/policy.json'), 'utf8')).toBe(await readFile(p('policy.json'), 'utf8'));
    await writeFile(p('old.yaml'), SOURCE.replace('version: 3', 'version: 2'));
    await run(['policy', 'sign', p('old.yaml'), '--key', p('keys/pol.key'), '--out', p('old.json')]);
    const rollback = await run(['policy', 'install', p('old.json'), '--root', p('root.json'), '--json']);
    expect(rollback.exit).toBe(1);
    expect(JSON.parse(rollback.stdout)).toMatchObject({ ok: false, code: 'POLICY_ROLLBACK' });
  });
});

// Issue 27: arguments are egress, results are ingress, through a real SDK client on
// `ringfence mcp serve` and real contained servers that count what reached them.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ringfence } from '../helpers/cli.js';
import { removeTestContainers, secretsImage } from '../helpers/containers.js';
import { connectStdio, firstText, freshHome, type ServedClient } from '../helpers/mcp.js';

// The deployer's credential, registered with it (`-e`): a stored AWS-style key bound to it alone.
const STORED_KEY = ['AKIA', 'R1NGF3NC3ST0R3D7'].join('');
const STORED_SECRET = ['k7Qz', 'W2vLp9Xr4Tm8Bn3Jc6Hd1Fs5Gy0Ae', 'Ku2Pi'].join('');
// A key of a format ringfence knows, stored nowhere.
const UNSTORED = ['ghp', '_', 'Unst0r3dK3yN3v3rB0und1234567890ab'].join('');
// What the fixture's `leak` answers with (test/fixtures/secrets-server.mjs).
const LEAKED = [
  ['AKIA', 'ZXCVBNMASDFGHJKL'].join(''),
  ['ghp', '_', 'R1ngf3nc3T3stT0k3nAbCdEfGh1234567890'].join(''),
];

describe('credentials: arguments are egress, results are ingress (real client, contained servers)', () => {
  let home: string;
  let served: ServedClient;

  beforeAll(async () => {
    home = await freshHome();
    const image = await secretsImage();
    const env = { RINGFENCE_HOME: home };
    const deployer = await ringfence(
      [
        'mcp',
        'add',
        'deployer',
        '--image',
        image,
        '--egress-allow',
        'api.deploy.test',
        '-e',
        `AWS_ACCESS_KEY_ID=${STORED_KEY}`,
        '-e',
        `AWS_SECRET_ACCESS_KEY=${STORED_SECRET}`,
      ],
      env,
    );
    expect(deployer.code, deployer.stderr).toBe(0);
    const notes = await ringfence(
      ['mcp', 'add', 'notes', '--image', image, '--egress-allow', 'api.notes.test'],
      env,
    );
    expect(notes.code, notes.stderr).toBe(0);
    served = await connectStdio(home);
  }, 240_000);

  afterAll(async () => {
    await served?.close().catch(() => {});
    await removeTestContainers();
  });

  const call = (name: string, args: Record<string, unknown> = {}) =>
    served.client.callTool({ name, arguments: args });
  const reached = async (server: string) =>
    (JSON.parse(firstText(await call(`${server}_received`))) as { received: number }).received;
  const audit = async () =>
    (await readFile(join(home, 'audit.jsonl'), 'utf8'))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { type: string; refs: Record<string, unknown> });
  const poisoned = (value: string) => ({ note: 'hello', options: { sync: true, meta: [{ note: value }] } });

  it('a stored AWS key in a nested field, to a server it is not bound to: refused, audited by class, nothing reaches it', async () => {
    const result = await call(
      'notes_save_note',
      poisoned(`[default]\naws_access_key_id = ${STORED_KEY}\naws_secret_access_key = ${STORED_SECRET}\n`),
    );
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(
      /^ringfence refused notes\/save_note: the arguments carry a secret \(aws, at \/options\/meta\/0\/note\)/,
    );
    expect(firstText(result)).toMatch(/not bound to notes/);
    expect(await reached('notes')).toBe(0);
    const refused = (await audit()).findLast((e) => e.type === 'mcp.decision' && e.refs.tool === 'save_note');
    expect(refused?.refs).toMatchObject({ allowed: false, server: 'notes', rule: 'egress-secrets' });
    expect(refused?.refs.secrets).toMatch(
      /^aws \(credential deployer:env:AWS_[A-Z_]+\) at \/options\/meta\/0\/note/,
    );
  });

  it('a key of a known format never stored: refused the same way, nothing reaches the server', async () => {
    const result = await call('notes_save_note', poisoned(`token: ${UNSTORED}`));
    expect(result.isError).toBe(true);
    expect(firstText(result)).toMatch(
      /carry a secret \(github, at \/options\/meta\/0\/note\) and no stored credential binds a key like this to notes/,
    );
    expect(await reached('notes')).toBe(0);
    const refused = (await audit()).findLast((e) => e.type === 'mcp.decision' && e.refs.tool === 'save_note');
    expect(refused?.refs.secrets).toBe('github at /options/meta/0/note');
  });

  it('base64 and split variants of the stored key are refused too', async () => {
    for (const args of [
      poisoned(Buffer.from(`key=${STORED_KEY}`).toString('base64')),
      { note: 'x', options: { parts: [STORED_KEY.slice(0, 9), STORED_KEY.slice(9)] } },
    ]) {
      const result = await call('notes_save_note', args);
      expect(result.isError, firstText(result)).toBe(true);
    }
    expect(await reached('notes')).toBe(0);
  });

  it('the same key to the server it is bound to goes through', async () => {
    const result = await call('deployer_save_note', poisoned(STORED_KEY));
    expect(result.isError, firstText(result)).toBeFalsy();
    expect(await reached('deployer')).toBe(1);
  });

  it('keys in a result are replaced by markers naming their class before the client sees them; counted', async () => {
    for (const server of ['notes', 'deployer']) {
      const result = await call(`${server}_leak`);
      expect(result.isError, firstText(result)).toBeFalsy();
      const shown = JSON.stringify(result);
      for (const value of [...LEAKED, STORED_KEY]) expect(shown).not.toContain(value);
      expect(shown).toContain('[ringfence: github key removed]');
      expect(shown).toContain('[ringfence: aws key removed]');
      // The structuredContent and its text twin were redacted alike: the structured copy is kept.
      expect(result.structuredContent).toMatchObject({
        config: { tokens: ['[ringfence: github key removed]'] },
      });
    }
    const results = (await audit()).filter((e) => e.type === 'mcp.result' && e.refs.tool === 'leak');
    expect(results.length).toBeGreaterThanOrEqual(1);
    expect(results[0]!.refs).toMatchObject({ redacted: 4, redacted_classes: 'aws,github' });
  });

  it('no value in the audit log, its tail or the gateway output, searched byte for byte; the log verifies', async () => {
    await served.close();
    const verified = await ringfence(['audit', 'verify'], { RINGFENCE_HOME: home });
    expect(verified.code, verified.stderr + verified.stdout).toBe(0);
    const tail = await ringfence(['audit', 'tail', '-n', '100'], { RINGFENCE_HOME: home });
    expect(tail.stdout).toMatch(/secrets=\(github at \/options\/meta\/0\/note\)/);
    expect(tail.stdout).toMatch(/redacted=4 \(aws,github\)/);
    const log = await readFile(join(home, 'audit.jsonl'));
    for (const value of [STORED_KEY, STORED_SECRET, UNSTORED, ...LEAKED]) {
      expect(log.includes(Buffer.from(value)), value.slice(0, 4)).toBe(false);
      expect(served.stderr().includes(value), value.slice(0, 4)).toBe(false);
      expect(tail.stdout.includes(value), value.slice(0, 4)).toBe(false);
    }
  });
});

import { chmod, chown, mkdir, mkdtemp, readdir, readFile, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { basePolicy, NOW, policyText, rootPayload, rootText, testKey } from '../testing/fixtures.js';
import { installPolicy } from './install.js';
import { loadInstalledPolicy } from './load.js';

const uid = process.getuid?.() ?? 0;
const k1 = testKey(1);
const k3 = testKey(3);
const rootV1 = rootText(rootPayload({ version: 1 }), [k1]);
const rootV2 = rootText(rootPayload({ version: 2, rootKeys: [k3] }), [k1, k3]);

async function fresh() {
  const base = await mkdtemp(join(tmpdir(), 'rf-installed-'));
  await chmod(base, 0o755);
  return { dir: join(base, 'etc-ringfence'), home: join(base, 'home') };
}

function codeOf(result: { ok: boolean; code?: string }): string {
  return result.ok ? 'ok' : result.code!;
}

describe('installed policy', () => {
  it('reports no policy when nothing is installed', async () => {
    const { dir, home } = await fresh();
    expect(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid })).toMatchObject({
      ok: true,
      present: false,
    });
  });

  it('installs, then loads, and records the versions seen (0600 state in a 0700 home)', async () => {
    const { dir, home } = await fresh();
    const installed = await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    expect(codeOf(installed)).toBe('ok');
    expect((await stat(join(dir, 'policy.json'))).mode & 0o777).toBe(0o644);
    const loaded = await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid });
    expect(loaded).toMatchObject({ ok: true, present: true });
    const state = JSON.parse(await readFile(join(home, 'policy-state.json'), 'utf8'));
    expect(state.policies['example-corp'].version).toBe(7);
    expect(state.root.version).toBe(1);
    expect((await stat(join(home, 'policy-state.json'))).mode & 0o777).toBe(0o600);
    expect((await stat(home)).mode & 0o777).toBe(0o700);
  });

  it('refuses to fall back to "no policy" once one was accepted (a removed file, an empty override)', async () => {
    const { dir, home } = await fresh();
    const installed = await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    expect(codeOf(installed)).toBe('ok');
    const emptyDir = join(dir, '..', 'empty');
    await mkdir(emptyDir);
    const result = await loadInstalledPolicy({ dir: emptyDir, home, now: NOW, ownerUid: uid });
    expect(codeOf(result)).toBe('INSTALLED_POLICY_MISSING');
    expect(result.ok ? '' : result.message).toContain('example-corp version 7');
  });

  it('keeps rollback protection for a policy named like an Object.prototype member', async () => {
    const { dir, home } = await fresh();
    const named = (version: number) => policyText(basePolicy({ name: 'constructor', version }));
    expect(
      codeOf(
        await installPolicy({
          policyText: named(5),
          rootTexts: [rootV1],
          dir,
          home,
          now: NOW,
          ownerUid: uid,
        }),
      ),
    ).toBe('ok');
    expect(
      codeOf(
        await installPolicy({
          policyText: named(1),
          rootTexts: [rootV1],
          dir,
          home,
          now: NOW,
          ownerUid: uid,
        }),
      ),
    ).toBe('POLICY_ROLLBACK');
  });

  it('a damaged state file with no policy installed refuses, as everywhere else', async () => {
    const { dir, home } = await fresh();
    await mkdir(home, { recursive: true, mode: 0o700 });
    await writeFile(join(home, 'policy-state.json'), '{"version":1,', { mode: 0o600 });
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe(
      'STATE_UNREADABLE',
    );
  });

  it('refuses a group-writable policy file, root file or directory, saying how to fix it', async () => {
    const { dir, home } = await fresh();
    await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    for (const target of [join(dir, 'policy.json'), join(dir, 'root.json'), dir]) {
      const before = (await stat(target)).mode & 0o777;
      await chmod(target, before | 0o020);
      const result = await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid });
      expect(codeOf(result)).toBe('INSTALLED_FILE_UNSAFE');
      if (!result.ok) expect(result.message).toContain('chmod go-w');
      await chmod(target, before);
      expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe('ok');
    }
    await chmod(join(dir, 'policy.json'), 0o646);
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe(
      'INSTALLED_FILE_UNSAFE',
    );
  });

  it.runIf(uid === 0)('refuses files not owned by root', async () => {
    const { dir, home } = await fresh();
    await installPolicy({ policyText: policyText(), rootTexts: [rootV1], dir, home, now: NOW });
    await chown(join(dir, 'policy.json'), 4242, 4242);
    const result = await loadInstalledPolicy({ dir, home, now: NOW });
    expect(codeOf(result)).toBe('INSTALLED_FILE_UNSAFE');
    if (!result.ok) expect(result.message).toContain('chown root:root');
  });

  it('refuses a symbolic link in place of the policy', async () => {
    const { dir, home } = await fresh();
    await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    await writeFile(join(dir, 'real.json'), policyText(), { mode: 0o644 });
    const { rename, unlink } = await import('node:fs/promises');
    await unlink(join(dir, 'policy.json'));
    await symlink(join(dir, 'real.json'), join(dir, 'policy.json'));
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe(
      'INSTALLED_FILE_UNSAFE',
    );
    await unlink(join(dir, 'policy.json'));
    await rename(join(dir, 'real.json'), join(dir, 'policy.json'));
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe('ok');
  });

  it('refuses a policy without its root', async () => {
    const { dir, home } = await fresh();
    await mkdir(dir, { mode: 0o755 });
    await writeFile(join(dir, 'policy.json'), policyText(), { mode: 0o644 });
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe(
      'INSTALLED_ROOT_MISSING',
    );
  });

  it('refuses an older policy, or the same version with other bytes, after a newer one was seen', async () => {
    const { dir, home } = await fresh();
    await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe('ok');
    await writeFile(join(dir, 'policy.json'), policyText(basePolicy({ version: 6 })));
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe('POLICY_ROLLBACK');
    await writeFile(join(dir, 'policy.json'), policyText(basePolicy({ default_action: 'deny' })));
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe(
      'POLICY_VERSION_CONFLICT',
    );
    expect(
      codeOf(
        await installPolicy({
          policyText: policyText(basePolicy({ version: 6 })),
          rootTexts: [rootV1],
          dir,
          home,
          now: NOW,
          ownerUid: uid,
        }),
      ),
    ).toBe('POLICY_ROLLBACK');
    await writeFile(join(dir, 'policy.json'), policyText(basePolicy({ version: 8 })));
    expect(codeOf(await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid }))).toBe('ok');
  });

  it('follows a root rotation one version at a time, for machines that saw the old root', async () => {
    const { dir, home } = await fresh();
    const otherUser = join(home, '..', 'other-home');
    await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    expect(codeOf(await loadInstalledPolicy({ dir, home: otherUser, now: NOW, ownerUid: uid }))).toBe('ok');
    // The admin rotates: root v2 (signed by old and new keys) and a policy under it.
    const next = policyText(basePolicy({ version: 8 }));
    expect(
      codeOf(
        await installPolicy({ policyText: next, rootTexts: [rootV2], dir, home, now: NOW, ownerUid: uid }),
      ),
    ).toBe('ok');
    expect((await readdir(join(dir, 'root-history'))).sort()).toEqual(['1.root.json', '2.root.json']);
    // Another user's state still trusts v1; it reaches v2 through root-history.
    expect(codeOf(await loadInstalledPolicy({ dir, home: otherUser, now: NOW, ownerUid: uid }))).toBe('ok');
    const state = JSON.parse(await readFile(join(otherUser, 'policy-state.json'), 'utf8'));
    expect(state.root.version).toBe(2);
    // The whole history may be given again: roots up to the trusted one are skipped.
    const v9 = policyText(basePolicy({ version: 9 }));
    expect(
      codeOf(
        await installPolicy({
          policyText: v9,
          rootTexts: [rootV1, rootV2],
          dir,
          home,
          now: NOW,
          ownerUid: uid,
        }),
      ),
    ).toBe('ok');
    // A root v2 signed only by the new key would not have been accepted.
    const { dir: dir2, home: home2 } = await fresh();
    await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir: dir2,
      home: home2,
      now: NOW,
      ownerUid: uid,
    });
    const newOnly = rootText(rootPayload({ version: 2, rootKeys: [k3] }), [k3]);
    expect(
      codeOf(
        await installPolicy({
          policyText: next,
          rootTexts: [newOnly],
          dir: dir2,
          home: home2,
          now: NOW,
          ownerUid: uid,
        }),
      ),
    ).toBe('ROOT_ROTATION_UNSIGNED');
  });

  it('fails closed on a damaged state file', async () => {
    const { dir, home } = await fresh();
    await installPolicy({
      policyText: policyText(),
      rootTexts: [rootV1],
      dir,
      home,
      now: NOW,
      ownerUid: uid,
    });
    await writeFile(join(home, 'policy-state.json'), '{"version":1,"policies":{},"policies":{}}');
    const result = await loadInstalledPolicy({ dir, home, now: NOW, ownerUid: uid });
    expect(codeOf(result)).toBe('STATE_UNREADABLE');
  });
});

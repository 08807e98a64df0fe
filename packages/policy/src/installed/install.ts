import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../fs/atomic.js';
import { type VerifiedPolicy, verifyPolicy } from '../policy/verify.js';
import { fromTrusted, verifyRootChain } from '../root/root.js';
import { recordAccepted, ringfenceHome, trustedRootFromState, updatePolicyState } from '../state/state.js';
import { refuse, type VerifyResult } from '../verify/result.js';
import { INSTALLED, installedPolicyDir, readInstalledFile } from './files.js';

/** Options for {@link installPolicy}. */
export interface InstallPolicyOptions {
  /** Text of the signed policy. */
  policyText: string;
  /** Texts of the root envelopes, oldest first (usually one; several when rotating). */
  rootTexts: string[];
  /** Default: `RINGFENCE_POLICY_DIR`, else `/etc/ringfence`. */
  dir?: string;
  /** Default: `RINGFENCE_HOME`, else `~/.ringfence`. */
  home?: string;
  now?: number;
  /** Owner the existing installed root must have to be trusted as the anchor. Default 0. */
  ownerUid?: number;
}

/**
 * Verifies a policy and its root chain against what this machine already trusts, then writes
 * them atomically (mode 0644) into the installed directory, keeping every root version in
 * `root-history/` so other users' gateways can follow a rotation one version at a time, and
 * records the versions in policy-state.json. Verification failures are returned, not thrown;
 * file-system errors (e.g. not running as root) are thrown as `FsError`.
 */
export async function installPolicy(
  options: InstallPolicyOptions,
): Promise<VerifyResult<VerifiedPolicy & { dir: string }>> {
  const dir = options.dir ?? installedPolicyDir();
  const home = options.home ?? ringfenceHome();
  const now = options.now ?? Date.now();
  return updatePolicyState<VerifyResult<VerifiedPolicy & { dir: string }>>(home, async (state) => {
    let trusted = trustedRootFromState(state);
    if (!trusted) {
      // A fresh machine with a root already installed trusts that one before a new file.
      const existing = await readInstalledFile(join(dir, INSTALLED.root), options.ownerUid ?? 0);
      if (existing?.ok) {
        // Expiry is not checked on the anchor (now: 0): only the newest root in the chain must be current.
        const anchor = verifyRootChain([existing.text], { now: 0 });
        if (anchor.ok) trusted = anchor.root;
      }
    }
    if (options.rootTexts.length === 0)
      return { result: refuse('ROOT_MISSING', 'No trust root was given; pass --root root.json.') };
    const rootTexts = fromTrusted(options.rootTexts, trusted);
    const root = verifyRootChain(rootTexts, trusted ? { now, trusted } : { now });
    if (!root.ok) return { result: root };
    const policy = verifyPolicy(options.policyText, {
      root: root.root,
      now,
      seen: (name) => state.policies[name],
    });
    if (!policy.ok) return { result: policy };

    await mkdir(join(dir, INSTALLED.history), { recursive: true, mode: 0o755 });
    await chmod(dir, 0o755);
    for (const [i, text] of rootTexts.entries()) {
      await writeFileAtomic(join(dir, INSTALLED.history, `${root.versions[i]}.root.json`), text, {
        mode: 0o644,
      });
    }
    await writeFileAtomic(join(dir, INSTALLED.root), rootTexts.at(-1)!, { mode: 0o644 });
    await writeFileAtomic(join(dir, INSTALLED.policy), options.policyText, { mode: 0o644 });
    const next = recordAccepted(state, root.root, { ...policy.policy, digest: policy.digest }, now);
    return { result: { ...policy, dir }, state: next };
  });
}

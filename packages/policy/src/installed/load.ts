import { join } from 'node:path';
import { type VerifiedPolicy, verifyPolicy } from '../policy/verify.js';
import { type TrustedRoot, verifyRootChain } from '../root/root.js';
import {
  type PolicyState,
  policyStatePath,
  readPolicyState,
  recordAccepted,
  ringfenceHome,
  trustedRootFromState,
  updatePolicyState,
} from '../state/state.js';
import { refuse, type VerifyFailure, type VerifyResult } from '../verify/result.js';
import {
  checkInstalledDir,
  historyVersionsAfter,
  INSTALLED,
  installedPolicyDir,
  readInstalledFile,
} from './files.js';

/** Options for {@link loadInstalledPolicy}. */
export interface LoadInstalledOptions {
  /** Default: `RINGFENCE_POLICY_DIR`, else `/etc/ringfence`. */
  dir?: string;
  /** Default: `RINGFENCE_HOME`, else `~/.ringfence`. */
  home?: string;
  /** Fixed instant for the whole verification (epoch ms). Default: now. */
  now?: number;
  /** Required owner of the installed files. Default 0 (root). */
  ownerUid?: number;
  /** Record the accepted versions in policy-state.json (rollback protection). Default true. */
  recordState?: boolean;
}

/** The outcome of loading the installed policy: absent, verified, or refused with a reason. */
export type InstalledPolicyResult =
  | { ok: true; present: false; dir: string }
  | ({ ok: true; present: true; dir: string } & VerifiedPolicy)
  | VerifyFailure;

/**
 * Loads and verifies the organisation policy installed on this machine. No policy installed is
 * not an error (`present: false`); a policy that is present but fails any check is refused with
 * a reason, and the caller must stop (fail closed). Files must be owned by root and not writable
 * by group or others; so must their directory. The trusted root is the one recorded in
 * policy-state.json, else the installed root.json itself; newer installed root versions are
 * applied one at a time from `root-history/`. Accepted versions are recorded under a lock.
 * Never throws.
 */
export async function loadInstalledPolicy(
  options: LoadInstalledOptions = {},
): Promise<InstalledPolicyResult> {
  const dir = options.dir ?? installedPolicyDir();
  const home = options.home ?? ringfenceHome();
  const now = options.now ?? Date.now();
  const ownerUid = options.ownerUid ?? 0;
  try {
    const policyFile = await readInstalledFile(join(dir, INSTALLED.policy), ownerUid);
    const rootFile = await readInstalledFile(join(dir, INSTALLED.root), ownerUid);
    if (!policyFile && !rootFile) {
      // A machine that has accepted a policy does not quietly drop to "no policy": a removed file,
      // or RINGFENCE_POLICY_DIR pointed at an empty directory, must not switch the rules off.
      // A damaged state file refuses here as everywhere else: it may be what recorded the policy.
      let state: PolicyState;
      try {
        state = await readPolicyState(home);
      } catch (error) {
        return refuse(
          'STATE_UNREADABLE',
          `${policyStatePath(home)} cannot be read (${(error as Error).message}); restore it or reinstall the policy with \`sudo ringfence policy install POLICY --root ROOT\`.`,
        );
      }
      const seen = Object.entries(state.policies);
      if (seen.length > 0) {
        const [name, last] = seen[0]!;
        return refuse(
          'INSTALLED_POLICY_MISSING',
          `No policy is installed in ${dir}, but this machine accepted policy ${name} version ${last.version} before (recorded in ${policyStatePath(home)}). Reinstall it with \`sudo ringfence policy install POLICY --root ROOT\`; if it was removed on purpose, delete that state file.`,
        );
      }
      return { ok: true, present: false, dir };
    }
    if (policyFile && !policyFile.ok) return policyFile;
    if (rootFile && !rootFile.ok) return rootFile;
    if (!rootFile) {
      return refuse(
        'INSTALLED_ROOT_MISSING',
        `${join(dir, INSTALLED.policy)} is installed without ${INSTALLED.root}; reinstall with \`sudo ringfence policy install POLICY --root ROOT\`.`,
      );
    }
    if (!policyFile) {
      return refuse(
        'INSTALLED_ROOT_MISSING',
        `${join(dir, INSTALLED.root)} is installed without ${INSTALLED.policy}; install a policy with \`sudo ringfence policy install POLICY --root ROOT\`.`,
      );
    }
    const dirProblem = await checkInstalledDir(dir, ownerUid);
    if (dirProblem) return dirProblem;

    const decide = async (state: PolicyState) => {
      const trusted = trustedRootFromState(state);
      const chain: string[] = [];
      if (trusted) {
        for (const version of await historyVersionsAfter(dir, trusted.version)) {
          const path = join(dir, INSTALLED.history, `${version}.root.json`);
          const file = await readInstalledFile(path, ownerUid);
          if (!file) break;
          if (!file.ok) return { result: file };
          chain.push(file.text);
        }
      }
      chain.push(rootFile.text);
      const result = verifyInstalled(policyFile.text, chain, trusted, state, now);
      if (!result.ok || options.recordState === false) return { result };
      return {
        result,
        state: recordAccepted(state, result.root, { ...result.policy, digest: result.digest }, now),
      };
    };

    const outcome =
      options.recordState === false
        ? (await decide(await readPolicyState(home))).result
        : await updatePolicyState(home, async (state) => {
            const { result, state: next } = await decide(state);
            return { result, state: next && changed(state, next) ? next : undefined };
          });
    if (!outcome.ok) return outcome;
    return { ...outcome, present: true, dir };
  } catch (error) {
    const code =
      (error as { code?: string }).code === 'STATE_UNREADABLE' ? 'STATE_UNREADABLE' : 'INSTALLED_READ_FAILED';
    return refuse(code, (error as Error).message);
  }
}

function verifyInstalled(
  policyText: string,
  rootTexts: string[],
  trusted: TrustedRoot | undefined,
  state: PolicyState,
  now: number,
): VerifyResult<VerifiedPolicy> {
  const root = verifyRootChain(rootTexts, trusted ? { now, trusted } : { now });
  if (!root.ok) return root;
  return verifyPolicy(policyText, {
    root: root.root,
    now,
    // Own entries only: a policy named `constructor` must not find Object.prototype's.
    seen: (name) => (Object.hasOwn(state.policies, name) ? state.policies[name] : undefined),
  });
}

function changed(before: PolicyState, after: PolicyState): boolean {
  return JSON.stringify(before) !== JSON.stringify(after);
}

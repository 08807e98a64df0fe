import { readFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { digestOf } from '../canonical/canonicalize.js';
import { RingfenceError } from '../errors.js';
import { ensurePrivateDirectory, writeFileAtomic } from '../fs/atomic.js';
import { withFileLock } from '../fs/lock.js';
import { parseStrictJson } from '../json/strict.js';
import { parseDateTime } from '../policy/datetime.js';
import type { SeenPolicyVersion } from '../policy/verify.js';
import { checkRootPayload, type RootPayload, type TrustedRoot } from '../root/root.js';

/** Codes raised when policy-state.json cannot be used. */
export type StateErrorCode = 'STATE_UNREADABLE';

/** policy-state.json is damaged or unreadable. */
export class StateError extends RingfenceError<StateErrorCode> {}

/**
 * `RINGFENCE_HOME/policy-state.json`: what this machine has already accepted, so that an older
 * policy or root cannot be replayed. `root.payload` is kept whole because the next root version
 * must be checked against its keys.
 */
export interface PolicyState {
  version: 1;
  root?: { version: number; digest: string; payload: RootPayload };
  policies: Record<string, SeenPolicyVersion & { seen_at: string }>;
}

/**
 * `RINGFENCE_HOME` (surrounding whitespace trimmed; blank counts as unset), else `~/.ringfence`.
 * The one home resolver: the gateway and the CLI use it too (as `resolveHome`).
 */
export function ringfenceHome(env: NodeJS.ProcessEnv = process.env): string {
  const configured = env.RINGFENCE_HOME?.trim();
  return configured ? configured : join(homedir(), '.ringfence');
}

/** Path of the state file inside a ringfence home. */
export function policyStatePath(home: string): string {
  return join(home, 'policy-state.json');
}

const EMPTY: PolicyState = { version: 1, policies: {} };

/** Reads the state; a missing file is an empty state, a damaged one is an error (fail closed). */
export async function readPolicyState(home: string): Promise<PolicyState> {
  const path = policyStatePath(home);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return structuredClone(EMPTY);
    throw new StateError('STATE_UNREADABLE', `Cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return checkState(parseStrictJson(text, { source: path }));
  } catch (error) {
    throw new StateError(
      'STATE_UNREADABLE',
      `${path} is damaged (${(error as Error).message}). It records the policy versions this machine accepted; ` +
        'restore it from a backup, or delete it to trust the installed policy afresh.',
    );
  }
}

function checkState(value: unknown): PolicyState {
  const v = value as Partial<PolicyState>;
  if (
    typeof v !== 'object' ||
    v === null ||
    v.version !== 1 ||
    typeof v.policies !== 'object' ||
    v.policies === null
  ) {
    throw new Error('unexpected contents');
  }
  for (const entry of Object.values(v.policies)) {
    if (!Number.isSafeInteger(entry?.version) || typeof entry?.digest !== 'string')
      throw new Error('bad policy entry');
  }
  if (v.root !== undefined) {
    const checked = checkRootPayload(v.root.payload);
    if (!checked.ok || v.root.version !== checked.root.version || v.root.digest !== digestOf(checked.root)) {
      throw new Error('bad root entry');
    }
  }
  return v as PolicyState;
}

/** The trusted root recorded in the state, if any. */
export function trustedRootFromState(state: PolicyState): TrustedRoot | undefined {
  if (!state.root) return undefined;
  return {
    payload: state.root.payload,
    digest: state.root.digest,
    version: state.root.version,
    expiresAt: parseDateTime(state.root.payload.expires)!,
  };
}

/**
 * Read-modify-write of policy-state.json under an exclusive lock, written atomically with mode
 * 0600 in a 0700 home, so two processes accepting policies at once lose no update. `change`
 * returns the new state, or `undefined` to leave the file untouched.
 */
export async function updatePolicyState<T>(
  home: string,
  change: (
    state: PolicyState,
  ) => Promise<{ state?: PolicyState; result: T }> | { state?: PolicyState; result: T },
): Promise<T> {
  await ensurePrivateDirectory(home);
  const path = policyStatePath(home);
  return withFileLock(path, async () => {
    const current = await readPolicyState(home);
    const { state, result } = await change(current);
    if (state) await writeFileAtomic(path, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    return result;
  });
}

/** The state after accepting a verified root and policy (versions only move forward). */
export function recordAccepted(
  state: PolicyState,
  root: TrustedRoot,
  policy: { name: string; version: number; digest: string },
  now: number,
): PolicyState {
  const next: PolicyState = { ...state, policies: { ...state.policies } };
  if (!state.root || root.version > state.root.version) {
    next.root = { version: root.version, digest: root.digest, payload: root.payload };
  }
  const seen = Object.hasOwn(state.policies, policy.name) ? state.policies[policy.name] : undefined;
  if (!seen || policy.version > seen.version) {
    next.policies[policy.name] = {
      version: policy.version,
      digest: policy.digest,
      seen_at: new Date(now).toISOString(),
    };
  }
  return next;
}

import { readFile } from 'node:fs/promises';
import { type VerifiedPolicy, verifyPolicy } from '../policy/verify.js';
import { verifyRootChain } from '../root/root.js';
import { refuse, type VerifyResult } from '../verify/result.js';

/** Options for {@link verifyPolicyFiles}. */
export interface VerifyPolicyFilesOptions {
  policyPath: string;
  /** Root envelopes, oldest first; the first is the anchor. */
  rootPaths: string[];
  /** Default: now. One instant for the whole check. */
  now?: number;
  minDaysValid?: number;
}

/**
 * Stateless verification of files on disk (what `ringfence policy verify` and CI run): reads the
 * root chain and the policy and verifies them with one fixed `now`. No rollback state is read
 * or written. Never throws.
 */
export async function verifyPolicyFiles(
  options: VerifyPolicyFilesOptions,
): Promise<VerifyResult<VerifiedPolicy>> {
  const now = options.now ?? Date.now();
  const rootTexts: string[] = [];
  for (const path of options.rootPaths) {
    const text = await readText(path);
    if (typeof text !== 'string') return text;
    rootTexts.push(text);
  }
  const policyText = await readText(options.policyPath);
  if (typeof policyText !== 'string') return policyText;
  const root = verifyRootChain(rootTexts, { now });
  if (!root.ok) return root;
  const verifyOptions =
    options.minDaysValid === undefined
      ? { root: root.root, now }
      : { root: root.root, now, minDaysValid: options.minDaysValid };
  return verifyPolicy(policyText, verifyOptions);
}

async function readText(path: string): Promise<string | ReturnType<typeof refuse>> {
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    return refuse('FILE_UNREADABLE', `Cannot read ${path}: ${(error as Error).message}`);
  }
}

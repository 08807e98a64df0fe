import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LABEL, MANAGED_PERSISTENT, type Owner, ownedBy } from '../runtime/labels.js';

/**
 * Who may use a persistent sandbox once the gateway that made it has ended: any later gateway of
 * the same ringfence home on the same host. The home is named by a random id kept in it
 * (`sandboxes/owner-id`, 0600), never by its path: two homes never share one by accident, and a
 * container of the person's own would have to copy a sandbox's labels on purpose to be taken
 * for one (anyone who can do that can drive the engine anyway).
 */
export interface HomeOwner {
  readonly id: string;
  readonly host: string;
}

const OWNER_ID = /^[0-9a-f]{32}$/;

/** The home's owner id, made on first need. */
export async function homeOwnerId(home: string): Promise<string> {
  const dir = join(home, 'sandboxes');
  const file = join(dir, 'owner-id');
  const existing = (await readFile(file, 'utf8').catch(() => '')).trim();
  if (OWNER_ID.test(existing)) return existing;
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const made = randomBytes(16).toString('hex');
  // `wx`: two gateways starting together keep the first one's id.
  await writeFile(file, `${made}\n`, { mode: 0o600, flag: 'wx' }).catch(() => {});
  const kept = (await readFile(file, 'utf8')).trim();
  return OWNER_ID.test(kept) ? kept : made;
}

/**
 * The labels that make every object of a sandbox outlive its gateway, owned by the home. They
 * replace `ringfence.managed=1` (MANAGED_PERSISTENT), which every reaper and sweep selects.
 */
export const persistentLabels = (owner: HomeOwner): Record<string, string> => ({
  [LABEL.managed]: MANAGED_PERSISTENT,
  [LABEL.persistent]: '1',
  [LABEL.home]: owner.id,
});

/** The engine pre-filter of a sandbox's objects by its `ringfence.managed` value. */
export const managedFilter = (persistent: boolean): string =>
  `${LABEL.managed}=${persistent ? MANAGED_PERSISTENT : '1'}`;

/** Whether an object is a sandbox's, of either kind (gateway-bound or persistent). */
export const isSandboxObject = (labels: Record<string, string> | undefined): boolean =>
  labels?.[LABEL.sandbox] !== undefined &&
  (labels[LABEL.managed] === '1' ||
    (labels[LABEL.managed] === MANAGED_PERSISTENT && labels[LABEL.persistent] === '1'));

/**
 * Whether a sandbox object is this gateway's to use: made by this very process (its owner labels),
 * or persistent and of this home on this host (made by an earlier gateway of the same person).
 */
export function usableBy(
  labels: Record<string, string> | undefined,
  process: Owner,
  home: HomeOwner | undefined,
): boolean {
  if (labels?.[LABEL.sandbox] === undefined) return false;
  if (ownedBy(labels, process)) return true;
  return (
    home !== undefined &&
    labels[LABEL.managed] === MANAGED_PERSISTENT &&
    labels[LABEL.persistent] === '1' &&
    labels[LABEL.home] === home.id &&
    labels[LABEL.host] === home.host
  );
}

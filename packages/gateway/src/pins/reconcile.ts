import { canonicalize, escapePointerToken, RingfenceError } from '@ringfence/policy';
import type { PinnableDefinition } from './fingerprint.js';
import { DEFINITION_KINDS, type DefinitionKind, textMember } from './kinds.js';
import {
  emptyServerPins,
  type PendingRecord,
  type PinRecord,
  type PinStore,
  pendingOf,
  pinnedOf,
  type ServerPins,
  setPending,
  setPinned,
} from './store.js';

export type PinErrorCode =
  | 'PIN_NOTHING_PENDING'
  | 'PIN_MOVED'
  /** The organisation policy pins this server: local approvals and resets are refused. */
  | 'PIN_ORG_MANAGED'
  /** An installed policy that does not verify stops local approvals too (fail closed). */
  | 'PIN_POLICY_REFUSED'
  | 'PIN_NO_TERMINAL'
  /** `pins show S` for a server the gateway has not pinned yet. */
  | 'PIN_NONE';
export class PinError extends RingfenceError<PinErrorCode> {}

export interface WithheldDefinition {
  readonly pinnable: PinnableDefinition;
  /**
   * `changed`: differs from its pin; `new`: never pinned; `org`: the organisation policy does not
   * pin this digest; `first-sight`: the server was never approved and first sight withholds.
   */
  readonly kind: 'changed' | 'new' | 'org' | 'first-sight';
}

export interface Reconciliation {
  /**
   * True when the gateway had no record of the server: all it listed was just pinned (trust on
   * first use) or, when first sight withholds, just recorded as pending.
   */
  readonly firstSight: boolean;
  /**
   * True while first sight withholds and nothing of the server was ever approved: it awaits its
   * first review, so nothing of it (definitions, log messages, notifications) reaches a client.
   */
  readonly awaitingReview?: boolean;
  readonly exposed: readonly PinnableDefinition[];
  readonly withheld: readonly WithheldDefinition[];
}

/**
 * Organisation pins for a server, name → digest per kind. A kind missing here has no pin, so
 * everything of that kind is withheld: a policy that pins a server pins all it lists.
 */
export type OrgPins = Readonly<Partial<Record<DefinitionKind, ReadonlyMap<string, string>>>>;

export interface ReconcileOptions {
  readonly orgPins?: OrgPins;
  /**
   * The kinds this listing covers (default: tools, and any kind in the list). A covered kind's
   * pending definitions are replaced by this listing's; others are left as they were.
   */
  readonly kinds?: readonly DefinitionKind[];
  /**
   * What a server with no record gets: `pin` (default: trust on first use) or `withhold` (every
   * definition pending until a person approves it). While a withholding server has nothing
   * approved yet, what it lists stays withheld as `first-sight`.
   */
  readonly firstSight?: 'pin' | 'withhold';
}

/** Whether nothing of any kind was ever approved (or pinned) for this server. */
const nothingPinned = (pins: ServerPins) =>
  DEFINITION_KINDS.every((kind) => Object.keys(pinnedOf(pins, kind)).length === 0);

const coveredKinds = (listed: readonly PinnableDefinition[], kinds?: readonly DefinitionKind[]) =>
  new Set<DefinitionKind>(kinds ?? ['tool', ...listed.map((d) => d.kind)]);

/**
 * Compare a fresh listing with the pins. With organisation pins for the server, they are the only
 * pins that count and nothing local changes. Otherwise: first sight (no record of the server at
 * all) pins everything, or with `firstSight: 'withhold'` records everything as pending and
 * exposes nothing; after that a definition is exposed only while its digest equals its pin,
 * and anything else becomes pending (kept for review). A kind first listed by a server that is
 * already pinned (a server that starts offering prompts, or pins written before prompts were
 * pinned) is new, not a first sight. Pure: `pins` is changed in place and the outcome returned.
 */
export function reconcilePins(
  pins: ServerPins | undefined,
  listed: readonly PinnableDefinition[],
  options: ReconcileOptions & { now: string },
): { outcome: Reconciliation; next: ServerPins | undefined } {
  if (options.orgPins) {
    const exposed: PinnableDefinition[] = [];
    const withheld: WithheldDefinition[] = [];
    for (const item of listed) {
      if (options.orgPins[item.kind]?.get(item.name) === item.digest) exposed.push(item);
      else withheld.push({ pinnable: item, kind: 'org' });
    }
    return { outcome: { firstSight: false, exposed, withheld }, next: pins };
  }
  const kinds = coveredKinds(listed, options.kinds);
  const withholding = options.firstSight === 'withhold';
  if (!pins && withholding) {
    // No trust on first use: keep the server's record (so the next start is not a first sight
    // again) with nothing pinned and everything pending, for a person to review and approve.
    const next = emptyServerPins();
    const { outcome } = reconcilePins(next, listed, options);
    return { outcome: { ...outcome, firstSight: true, awaitingReview: true }, next };
  }
  if (!pins) {
    const next = emptyServerPins();
    for (const kind of kinds) {
      const records: Record<string, PinRecord> = Object.create(null);
      for (const item of listed.filter((d) => d.kind === kind))
        records[item.name] = { digest: item.digest, definition: item.definition, pinned_at: options.now };
      setPinned(next, kind, records);
    }
    return { outcome: { firstSight: true, exposed: [...listed], withheld: [] }, next };
  }
  const exposed: PinnableDefinition[] = [];
  const withheld: WithheldDefinition[] = [];
  const unreviewed = withholding && nothingPinned(pins);
  for (const kind of kinds) {
    const pinned = pinnedOf(pins, kind);
    const before = pendingOf(pins, kind);
    const pending: Record<string, PendingRecord> = Object.create(null);
    for (const item of listed.filter((d) => d.kind === kind)) {
      const pin = pinned[item.name];
      if (pin?.digest === item.digest) {
        exposed.push(item);
        continue;
      }
      const changeKind = pin ? 'changed' : 'new';
      const previous = before[item.name];
      pending[item.name] = {
        digest: item.digest,
        definition: item.definition,
        // Keep when we first saw this exact definition, so a reviewer knows how long it has waited.
        seen_at: previous?.digest === item.digest ? previous.seen_at : options.now,
        kind: changeKind,
      };
      withheld.push({ pinnable: item, kind: unreviewed ? 'first-sight' : changeKind });
    }
    setPending(pins, kind, pending);
  }
  // In listing order, as the server gave them.
  const order = new Map(listed.map((item, index) => [item, index]));
  exposed.sort((a, b) => order.get(a)! - order.get(b)!);
  withheld.sort((a, b) => order.get(a.pinnable)! - order.get(b.pinnable)!);
  const awaiting = unreviewed ? { awaitingReview: true } : {};
  return { outcome: { firstSight: false, ...awaiting, exposed, withheld }, next: pins };
}

/** Reconcile under the pin store's lock and persist what changed. */
export async function reconcileAndRecord(
  store: PinStore,
  server: string,
  listed: readonly PinnableDefinition[],
  options: ReconcileOptions & { now?: string } = {},
): Promise<Reconciliation> {
  const now = options.now ?? new Date().toISOString();
  if (options.orgPins) {
    // Organisation pins: nothing local counts and nothing local is written.
    return reconcilePins(undefined, listed, { orgPins: options.orgPins, now }).outcome;
  }
  return store.update((file) => {
    const { outcome, next } = reconcilePins(file.servers[server], listed, { ...options, now });
    if (next) file.servers[server] = next;
    return outcome;
  });
}

/** A pending definition as a person was shown it: approving accepts exactly this digest. */
export interface ShownDefinition {
  readonly kind: DefinitionKind;
  readonly name: string;
  readonly digest: string;
}

/**
 * Accept exactly the pending definitions a person was shown. If a pending definition moved
 * since it was shown, nothing is approved.
 */
export async function approvePending(
  store: PinStore,
  server: string,
  shown: readonly ShownDefinition[],
  now = new Date().toISOString(),
): Promise<ShownDefinition[]> {
  if (shown.length === 0) throw new PinError('PIN_NOTHING_PENDING', `Nothing to approve for "${server}".`);
  return store.update((file) => {
    const pins = file.servers[server];
    for (const item of shown) {
      const pending = pins ? pendingOf(pins, item.kind)[item.name] : undefined;
      const label = `${item.kind} "${item.name}"`;
      if (!pending) {
        throw new PinError(
          'PIN_NOTHING_PENDING',
          `The ${label} of "${server}" has no pending definition. See what is pending with: ringfence mcp pins diff ${server}`,
        );
      }
      if (pending.digest !== item.digest) {
        throw new PinError(
          'PIN_MOVED',
          `The pending definition of the ${label} changed while you were reviewing it (${item.digest} → ${pending.digest}). Nothing was approved; review again with: ringfence mcp pins diff ${server}`,
        );
      }
    }
    for (const item of shown) {
      const pinned = { ...pinnedOf(pins!, item.kind) };
      const pending = { ...pendingOf(pins!, item.kind) };
      const record = pending[item.name]!;
      pinned[item.name] = { digest: record.digest, definition: record.definition, pinned_at: now };
      delete pending[item.name];
      setPinned(pins!, item.kind, nullPrototype(pinned));
      setPending(pins!, item.kind, nullPrototype(pending));
    }
    return [...shown];
  });
}

const nullPrototype = <T>(record: Record<string, T>): Record<string, T> =>
  Object.assign(Object.create(null) as Record<string, T>, record);

/** Forget every pin and pending definition of a server: its next start pins what it sees. */
export async function resetPins(store: PinStore, server: string): Promise<boolean> {
  return store.update((file) => {
    const existed = file.servers[server] !== undefined;
    delete file.servers[server];
    return existed;
  });
}

export interface DefinitionDiff {
  /** What kind of definition this is (a tool, a prompt). */
  readonly definition: DefinitionKind;
  /** Its name as the server lists it (for every kind; the field keeps its first name). */
  readonly tool: string;
  readonly kind: 'changed' | 'new';
  readonly oldDigest?: string;
  readonly newDigest: string;
  /** The description (for a server's instructions: their text) before and after. */
  readonly oldDescription?: string;
  readonly newDescription?: string;
  /** Top-level fields other than description whose content differs (added, removed or changed). */
  readonly movedFields: readonly string[];
  /** JSON Pointers of the leaves that differ, below those fields (at most 50 listed). */
  readonly movedPaths: readonly string[];
  /** How many more differing leaves there are beyond `movedPaths` (0 when all are listed). */
  readonly morePaths: number;
  /** The whole pending definition: what approving accepts. */
  readonly pendingDefinition: Readonly<Record<string, unknown>>;
}

/** What a reviewer needs to see for each pending definition of a server: tools, then prompts. */
export function diffPending(pins: ServerPins | undefined): DefinitionDiff[] {
  if (!pins) return [];
  return DEFINITION_KINDS.flatMap((definition) =>
    Object.entries(pendingOf(pins, definition))
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .map(([name, pending]) => {
        const pin = pinnedOf(pins, definition)[name];
        // Own fields only: a server may name a field `constructor` or `toString`.
        const own = (record: Readonly<Record<string, unknown>> | undefined) =>
          Object.fromEntries(Object.entries(record ?? {})) as Record<string, unknown>;
        const before = Object.assign(Object.create(null) as Record<string, unknown>, own(pin?.definition));
        const after = Object.assign(Object.create(null) as Record<string, unknown>, own(pending.definition));
        // The prose (a description, or a server's instructions) is shown before and after in whole.
        const prose = textMember(definition);
        const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
          (field) => field !== prose,
        );
        const movedFields = fields.filter((field) => !sameJson(before[field], after[field])).sort();
        const allPaths = movedFields.flatMap((field) =>
          changedPaths(before[field], after[field], `/${escapePointerToken(field)}`),
        );
        const describe = (value: unknown) => (typeof value === 'string' ? value : undefined);
        return {
          definition,
          tool: name,
          kind: pending.kind,
          ...(pin ? { oldDigest: pin.digest } : {}),
          newDigest: pending.digest,
          ...(describe(before[prose]) !== undefined ? { oldDescription: describe(before[prose]) } : {}),
          ...(describe(after[prose]) !== undefined ? { newDescription: describe(after[prose]) } : {}),
          movedFields,
          movedPaths: allPaths.slice(0, 50),
          morePaths: Math.max(0, allPaths.length - 50),
          pendingDefinition: pending.definition,
        };
      }),
  );
}

/** Leaves where two JSON values differ, as JSON Pointers; iterative so a deep schema cannot overflow. */
function changedPaths(a: unknown, b: unknown, root: string, limit = 1000): string[] {
  const out: string[] = [];
  const stack: [unknown, unknown, string][] = [[a, b, root]];
  while (stack.length > 0 && out.length < limit) {
    const [x, y, path] = stack.pop()!;
    const bothObjects = typeof x === 'object' && x !== null && typeof y === 'object' && y !== null;
    if (!bothObjects || Array.isArray(x) !== Array.isArray(y)) {
      if (!sameJson(x, y)) out.push(path);
      continue;
    }
    const xr = x as Record<string, unknown>;
    const yr = y as Record<string, unknown>;
    const keys = [...new Set([...Object.keys(xr), ...Object.keys(yr)])].sort().reverse();
    const at = (record: Record<string, unknown>, key: string) =>
      Object.hasOwn(record, key) ? record[key] : undefined;
    for (const key of keys) stack.push([at(xr, key), at(yr, key), `${path}/${escapePointerToken(key)}`]);
  }
  return out;
}

function sameJson(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return a === b;
  return canonicalize(a) === canonicalize(b);
}

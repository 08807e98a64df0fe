import { canonicalize, escapePointerToken, RingfenceError } from '@ringfence/policy';
import type { PinnableTool } from './fingerprint.js';
import { emptyServerPins, type PinStore, type ServerPins } from './store.js';

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

export interface WithheldTool {
  readonly tool: PinnableTool;
  /** `changed`: differs from its pin; `new`: never pinned; `org`: the organisation policy does not pin this digest. */
  readonly kind: 'changed' | 'new' | 'org';
}

export interface Reconciliation {
  /** True when the server had no pins and all its tools were just pinned (trust on first use). */
  readonly firstSight: boolean;
  readonly exposed: readonly PinnableTool[];
  readonly withheld: readonly WithheldTool[];
}

/**
 * Compare a fresh listing with the pins. With organisation pins for the server, they are the only
 * pins that count and nothing local changes. Otherwise: first sight pins everything; after that a
 * tool is exposed only while its digest equals its pin, and anything else becomes pending (the
 * definition kept for review). Pure: `pins` is changed in place and the outcome returned.
 */
export function reconcilePins(
  pins: ServerPins | undefined,
  tools: readonly PinnableTool[],
  options: { orgPins?: ReadonlyMap<string, string>; now: string },
): { outcome: Reconciliation; next: ServerPins | undefined } {
  if (options.orgPins) {
    const exposed: PinnableTool[] = [];
    const withheld: WithheldTool[] = [];
    for (const tool of tools) {
      if (options.orgPins.get(tool.name) === tool.digest) exposed.push(tool);
      else withheld.push({ tool, kind: 'org' });
    }
    return { outcome: { firstSight: false, exposed, withheld }, next: pins };
  }
  if (!pins) {
    const next = emptyServerPins();
    for (const tool of tools)
      next.tools[tool.name] = { digest: tool.digest, definition: tool.definition, pinned_at: options.now };
    return { outcome: { firstSight: true, exposed: [...tools], withheld: [] }, next };
  }
  const exposed: PinnableTool[] = [];
  const withheld: WithheldTool[] = [];
  const pending: ServerPins['pending'] = Object.create(null);
  for (const tool of tools) {
    const pin = pins.tools[tool.name];
    if (pin?.digest === tool.digest) {
      exposed.push(tool);
      continue;
    }
    const kind = pin ? 'changed' : 'new';
    const previous = pins.pending[tool.name];
    pending[tool.name] = {
      digest: tool.digest,
      definition: tool.definition,
      // Keep when we first saw this exact definition, so a reviewer knows how long it has waited.
      seen_at: previous?.digest === tool.digest ? previous.seen_at : options.now,
      kind,
    };
    withheld.push({ tool, kind });
  }
  pins.pending = pending;
  return { outcome: { firstSight: false, exposed, withheld }, next: pins };
}

/** Reconcile under the pin store's lock and persist what changed. */
export async function reconcileAndRecord(
  store: PinStore,
  server: string,
  tools: readonly PinnableTool[],
  options: { orgPins?: ReadonlyMap<string, string>; now?: string } = {},
): Promise<Reconciliation> {
  const now = options.now ?? new Date().toISOString();
  if (options.orgPins) {
    // Organisation pins: nothing local counts and nothing local is written.
    return reconcilePins(undefined, tools, { orgPins: options.orgPins, now }).outcome;
  }
  return store.update((file) => {
    const { outcome, next } = reconcilePins(file.servers[server], tools, { now });
    if (next) file.servers[server] = next;
    return outcome;
  });
}

/**
 * Accept exactly the pending definitions a person was shown: `shown` maps tool → digest. If a
 * pending definition moved since it was shown, nothing is approved.
 */
export async function approvePending(
  store: PinStore,
  server: string,
  shown: ReadonlyMap<string, string>,
  now = new Date().toISOString(),
): Promise<string[]> {
  if (shown.size === 0) throw new PinError('PIN_NOTHING_PENDING', `Nothing to approve for "${server}".`);
  return store.update((file) => {
    const pins = file.servers[server];
    for (const [tool, digest] of shown) {
      const pending = pins?.pending[tool];
      if (!pending) {
        throw new PinError(
          'PIN_NOTHING_PENDING',
          `"${tool}" of "${server}" has no pending definition. See what is pending with: ringfence mcp pins diff ${server}`,
        );
      }
      if (pending.digest !== digest) {
        throw new PinError(
          'PIN_MOVED',
          `The pending definition of "${tool}" changed while you were reviewing it (${digest} → ${pending.digest}). Nothing was approved; review again with: ringfence mcp pins diff ${server}`,
        );
      }
    }
    const approved: string[] = [];
    for (const tool of shown.keys()) {
      const pending = pins!.pending[tool]!;
      pins!.tools[tool] = { digest: pending.digest, definition: pending.definition, pinned_at: now };
      delete pins!.pending[tool];
      approved.push(tool);
    }
    return approved;
  });
}

/** Forget every pin and pending definition of a server: its next start pins what it sees. */
export async function resetPins(store: PinStore, server: string): Promise<boolean> {
  return store.update((file) => {
    const existed = file.servers[server] !== undefined;
    delete file.servers[server];
    return existed;
  });
}

export interface DefinitionDiff {
  readonly tool: string;
  readonly kind: 'changed' | 'new';
  readonly oldDigest?: string;
  readonly newDigest: string;
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

/** What a reviewer needs to see for each pending definition of a server. */
export function diffPending(pins: ServerPins | undefined): DefinitionDiff[] {
  if (!pins) return [];
  return Object.entries(pins.pending)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([tool, pending]) => {
      const pin = pins.tools[tool];
      // Own fields only: a server may name a field `constructor` or `toString`.
      const own = (record: Readonly<Record<string, unknown>> | undefined) =>
        Object.fromEntries(Object.entries(record ?? {})) as Record<string, unknown>;
      const before = Object.assign(Object.create(null) as Record<string, unknown>, own(pin?.definition));
      const after = Object.assign(Object.create(null) as Record<string, unknown>, own(pending.definition));
      const fields = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter(
        (field) => field !== 'description',
      );
      const movedFields = fields.filter((field) => !sameJson(before[field], after[field])).sort();
      const allPaths = movedFields.flatMap((field) =>
        changedPaths(before[field], after[field], `/${escapePointerToken(field)}`),
      );
      const describe = (value: unknown) => (typeof value === 'string' ? value : undefined);
      return {
        tool,
        kind: pending.kind,
        ...(pin ? { oldDigest: pin.digest } : {}),
        newDigest: pending.digest,
        ...(describe(before.description) !== undefined
          ? { oldDescription: describe(before.description) }
          : {}),
        ...(describe(after.description) !== undefined ? { newDescription: describe(after.description) } : {}),
        movedFields,
        movedPaths: allPaths.slice(0, 50),
        morePaths: Math.max(0, allPaths.length - 50),
        pendingDefinition: pending.definition,
      };
    });
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

/**
 * What a person reviewing pins is shown, and the checks around approving: `ringfence mcp pins
 * show|diff|approve|reset` only parse their arguments, ask, and print what this returns.
 * Everything a server wrote goes through the one renderer (text/render.ts) before it reaches a
 * terminal, and a review says how many characters it shows escaped, so two definitions that
 * differ only in characters a person cannot see never look the same.
 */
import {
  type LoadInstalledOptions,
  loadInstalledPolicy,
  MISSING,
  orgPins,
  resolvePointer,
} from '@ringfence/policy';
import { resolveHome } from '../home/home.js';
import {
  clip,
  type Rendered,
  rendered,
  renderJsonText,
  renderUntrusted,
  visiblePart,
} from '../text/render.js';
import { wholeDefinitionLines } from './definition-view.js';
import { DEFINITION_KINDS, type DefinitionKind, definitionLabel, textMember } from './kinds.js';
import {
  approvePending,
  type DefinitionDiff,
  diffPending,
  PinError,
  type ShownDefinition,
} from './reconcile.js';
import { type PinStore, pinnedOf } from './store.js';

type Definition = Readonly<Record<string, unknown>>;

const indent = (text: string, prefix: string) =>
  text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');

const valueAt = (document: unknown, pointer: string) => {
  const value = resolvePointer(document, pointer);
  return value === MISSING ? undefined : value;
};

const shown = (value: unknown) =>
  value === undefined ? '(absent)' : renderJsonText(clip(JSON.stringify(value), 200)).text;

/** The note under a rendered text that holds escapes: how many, and how to read them. */
const escapedNote = (what: string, text: Rendered) =>
  text.escaped > 0
    ? [
        `  ${what} contains ${text.escaped} invisible or control character(s), shown escaped as \\u{HEX} (docs/untrusted-text.md)`,
      ]
    : [];

function descriptionLines(label: string, description: string | undefined, prefix: string): string[] {
  const text = renderUntrusted(description ?? '(none)');
  return [`  ${label}:`, indent(text.text, prefix), ...escapedNote(label, text)];
}

/**
 * A reviewer's view of one pending definition: old and new description, every other part that
 * moved with its value before and after, and — with `full` — the whole pending definition, which
 * is exactly what approving accepts.
 */
export function formatDiff(
  server: string,
  diff: DefinitionDiff,
  options: { full?: boolean; before?: unknown } = {},
): string {
  const lines = [
    `${definitionLabel(rendered(server, 'name'), diff.definition, rendered(diff.tool, 'name'))}  (${diff.kind === 'new' ? `new ${diff.definition}` : 'changed'})`,
  ];
  if (diff.oldDigest) lines.push(`  pinned:  ${diff.oldDigest}`);
  lines.push(`  pending: ${diff.newDigest}`);
  const prose = textMember(diff.definition);
  if (diff.kind === 'changed' && diff.oldDescription !== diff.newDescription) {
    lines.push(
      ...descriptionLines(`${prose} before`, diff.oldDescription, '  - '),
      ...descriptionLines(`${prose} after`, diff.newDescription, '  + '),
    );
    if (visiblePart(diff.oldDescription ?? '') === visiblePart(diff.newDescription ?? ''))
      lines.push(
        `  the ${prose === 'description' ? 'descriptions' : 'instructions'} differ only in invisible or control characters: compare the escapes above`,
      );
  } else if (diff.kind === 'new') {
    // Its description is in the whole definition below, line by line.
  } else {
    lines.push(`  ${prose}: unchanged`);
  }
  if (diff.kind === 'changed') {
    lines.push(
      diff.movedFields.length > 0
        ? `  also moved: ${diff.movedFields.map((field) => rendered(field, 'name')).join(', ')}`
        : '  nothing else moved',
    );
    for (const path of diff.movedPaths) {
      lines.push(
        `    ${rendered(path, 'name')}: ${shown(valueAt(options.before, path))} → ${shown(valueAt(diff.pendingDefinition, path))}`,
      );
    }
    if (diff.morePaths > 0)
      lines.push(
        `    … and ${diff.morePaths} more (see the whole definition: ringfence mcp pins diff ${server} --full)`,
      );
  }
  if (options.full || diff.kind === 'new') {
    lines.push('  the whole pending definition (what approving accepts):');
    lines.push(...wholeDefinitionLines(diff.definition, diff.pendingDefinition, '    '));
  }
  return lines.join('\n');
}

/** The pending definitions of one server, with the pinned definitions they would replace. */
export interface PendingReview {
  readonly server: string;
  readonly pending: readonly DefinitionDiff[];
  /** By `pinnedKey`. */
  readonly pinned: ReadonlyMap<string, Definition>;
}

const pinnedKey = (diff: Pick<DefinitionDiff, 'definition' | 'tool'>) =>
  `${diff.definition}\u0000${diff.tool}`;

export async function reviewPending(store: PinStore, server: string): Promise<PendingReview> {
  const pins = await store.server(server);
  const pending = diffPending(pins);
  const pinned = new Map<string, Definition>();
  for (const diff of pending) {
    const pin = pins ? pinnedOf(pins, diff.definition)[diff.tool] : undefined;
    if (pin) pinned.set(pinnedKey(diff), pin.definition);
  }
  return { server, pending, pinned };
}

/** `pins diff`: one block per pending definition (each followed by a blank line), then how to approve. */
export function formatPendingReview(review: PendingReview, options: { full?: boolean } = {}): string[] {
  const { server, pending } = review;
  if (pending.length === 0) return [`Nothing pending for ${server}.`];
  return [
    ...pending.map(
      (diff) =>
        `${formatDiff(server, diff, { full: options.full, before: review.pinned.get(pinnedKey(diff)) })}\n`,
    ),
    `Approve with: ringfence mcp pins approve ${server} [TOOL…] [--prompt PROMPT…] [--resource URI…] [--template URI_TEMPLATE…] [--instructions]`,
  ];
}

/**
 * The pending definitions a person is about to approve: every pending one, or the named ones
 * (`tool` and `prompt` names). A named one with nothing pending refuses the whole approval.
 */
export async function reviewApproval(
  store: PinStore,
  server: string,
  named: Partial<Record<DefinitionKind, readonly string[]>> = {},
): Promise<PendingReview> {
  const review = await reviewPending(store, server);
  const wanted = DEFINITION_KINDS.flatMap((kind) => (named[kind] ?? []).map((name) => ({ kind, name })));
  const missing = wanted.filter(
    ({ kind, name }) => !review.pending.some((d) => d.definition === kind && d.tool === name),
  );
  if (missing.length > 0) {
    throw new PinError(
      'PIN_NOTHING_PENDING',
      `Nothing pending for ${missing.map(({ kind, name }) => (kind === 'tool' ? name : kind === 'instructions' ? 'the instructions' : `${kind} ${name}`)).join(', ')} of ${server}. See what is pending: ringfence mcp pins diff ${server}`,
    );
  }
  if (wanted.length === 0) return review;
  return {
    ...review,
    pending: review.pending.filter((d) =>
      wanted.some(({ kind, name }) => d.definition === kind && d.tool === name),
    ),
  };
}

/** Approval accepts the whole pending definition, so the whole definition is what is shown. */
export function formatApprovalReview(review: PendingReview): string[] {
  return review.pending.map(
    (diff) =>
      `${formatDiff(review.server, diff, { full: true, before: review.pinned.get(pinnedKey(diff)) })}\n`,
  );
}

/** Accept exactly the definitions of `review` (by digest): if one moved since, nothing is approved. */
export function approveReviewed(
  store: PinStore,
  review: PendingReview,
  now?: string,
): Promise<ShownDefinition[]> {
  return approvePending(
    store,
    review.server,
    review.pending.map((d) => ({ kind: d.definition, name: d.tool, digest: d.newDigest })),
    now,
  );
}

/**
 * When the organisation policy pins a server, nothing may be approved or reset locally; a
 * policy that is installed but does not verify stops approvals too (fail closed).
 */
export async function assertLocalPinsCount(
  server: string,
  installedPolicy: Omit<LoadInstalledOptions, 'recordState'> = {},
): Promise<void> {
  const installed = await loadInstalledPolicy({
    home: resolveHome(),
    ...installedPolicy,
    recordState: false,
  });
  if (!installed.ok) {
    throw new PinError(
      'PIN_POLICY_REFUSED',
      `The installed organisation policy does not verify (${installed.code}: ${installed.message}); nothing can be approved until it is fixed. Run: ringfence doctor`,
    );
  }
  if (!installed.present || orgPins(installed.policy, server) === undefined) return;
  throw new PinError(
    'PIN_ORG_MANAGED',
    `The organisation policy "${installed.policy.name}" (version ${installed.policy.version}) pins the tools, prompts, resources and templates of ${server}: only its pins count and nothing can be approved or reset locally. Ask your policy admin to pin the new definition (its digest is shown by: ringfence mcp tools).`,
  );
}

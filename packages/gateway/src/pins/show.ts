/**
 * `ringfence mcp pins show`: what is pinned (and pending) per server. For one server each
 * definition is shown whole (`definition-view.ts`): the first sight is the review that matters,
 * and a summary line is what a poisoned tool hides behind. Over every server, one line each,
 * saying what a line leaves out and the command that shows it whole.
 */
import { rendered } from '../text/render.js';
import { descriptionSummary, formatWholeDefinition } from './definition-view.js';
import { DEFINITION_KINDS, type DefinitionKind, textMember } from './kinds.js';
import { PinError } from './reconcile.js';
import { type PinStore, pendingOf, pinnedOf } from './store.js';

type Definition = Readonly<Record<string, unknown>>;

/**
 * One server's pins as `pins show` lists them (and prints with --json): tools, then prompts,
 * resources and templates; `definition` says which, `tool` is the name (for every kind), and
 * `pinnedDefinition`/`pendingDefinition` is the whole definition.
 */
export interface ShownPins {
  server: string;
  pinned: {
    definition: DefinitionKind;
    tool: string;
    digest: string;
    pinned_at: string;
    description?: string;
    pinnedDefinition: Definition;
  }[];
  pending: {
    definition: DefinitionKind;
    tool: string;
    digest: string;
    kind: string;
    seen_at: string;
    pendingDefinition: Definition;
  }[];
}

/** Definitions named on the command line, per kind (`--tool`, `--prompt`, `--resource`, `--template`). */
export type NamedDefinitions = Partial<Record<DefinitionKind, readonly string[]>>;

/** Every server's pins, or one server's (refused when it has none yet). */
export async function showPins(store: PinStore, server?: string): Promise<ShownPins[]> {
  const file = await store.read();
  if (server !== undefined && !file.servers[server]) {
    throw new PinError(
      'PIN_NONE',
      `No pins for "${server}" yet: the gateway records what a server lists the first time it starts it (pinned, or withheld for review with --review-first or the policy's first_sight). Start it once with: ringfence mcp tools, then run this again to read each definition whole.`,
    );
  }
  const names = server !== undefined ? [server] : Object.keys(file.servers).sort();
  return names.map((name) => {
    const pins = file.servers[name]!;
    return {
      server: name,
      pinned: DEFINITION_KINDS.flatMap((definition) =>
        Object.entries(pinnedOf(pins, definition)).map(([tool, pin]) => ({
          definition,
          tool,
          digest: pin.digest,
          pinned_at: pin.pinned_at,
          ...(typeof pin.definition[textMember(definition)] === 'string'
            ? { description: pin.definition[textMember(definition)] as string }
            : {}),
          pinnedDefinition: pin.definition,
        })),
      ),
      pending: DEFINITION_KINDS.flatMap((definition) =>
        Object.entries(pendingOf(pins, definition)).map(([tool, p]) => ({
          definition,
          tool,
          digest: p.digest,
          kind: p.kind,
          seen_at: p.seen_at,
          pendingDefinition: p.definition,
        })),
      ),
    };
  });
}

/**
 * Only the named definitions of one server's pins (all of them when none is named). A name with
 * neither a pin nor a pending definition refuses the whole request, naming it.
 */
export function selectShown(shown: ShownPins, named: NamedDefinitions): ShownPins {
  const wanted = DEFINITION_KINDS.flatMap((kind) => (named[kind] ?? []).map((name) => ({ kind, name })));
  if (wanted.length === 0) return shown;
  const has = (item: { definition: DefinitionKind; tool: string }) =>
    wanted.some(({ kind, name }) => item.definition === kind && item.tool === name);
  const missing = wanted.filter(
    ({ kind, name }) =>
      ![...shown.pinned, ...shown.pending].some((item) => item.definition === kind && item.tool === name),
  );
  if (missing.length > 0) {
    const names = missing.map(({ kind, name }) =>
      kind === 'tool' ? name : kind === 'instructions' ? 'instructions' : `${kind} ${name}`,
    );
    throw new PinError(
      'PIN_NONE',
      `${shown.server} has no pinned or pending ${names.map((n) => rendered(n, 'line')).join(', ')}. See what it has with: ringfence mcp pins show ${shown.server} --summary`,
    );
  }
  return { ...shown, pinned: shown.pinned.filter(has), pending: shown.pending.filter(has) };
}

const label = (p: { definition: DefinitionKind; tool: string }) =>
  p.definition === 'tool'
    ? rendered(p.tool, 'name')
    : p.definition === 'instructions'
      ? 'instructions'
      : `${p.definition} ${rendered(p.tool, 'name')}`;

/** How `pins approve` names one definition: a tool by name, every other kind by its flag. */
const approveArgument = (p: { definition: DefinitionKind; tool: string }) =>
  p.definition === 'instructions'
    ? '--instructions'
    : `${p.definition === 'tool' ? '' : `--${p.definition} `}${rendered(p.tool, 'name')}`;

/** One line per definition: the first line of its description, saying what it leaves out. */
export function formatShownPins(servers: readonly ShownPins[]): string[] {
  if (servers.length === 0) return ['No pins yet.'];
  const lines: string[] = [];
  for (const s of servers) {
    lines.push(`${rendered(s.server, 'name')}: ${s.pinned.length} pinned, ${s.pending.length} pending`);
    for (const p of s.pinned)
      lines.push(`  ${label(p)}  ${p.digest}  ${descriptionSummary(p.description ?? '', 80)}`);
    for (const p of s.pending)
      lines.push(
        `  ! ${label(p)}  ${p.digest}  ${rendered(p.kind, 'name')}, withheld since ${rendered(p.seen_at, 'name')} (ringfence mcp pins diff ${s.server})`,
      );
    if (s.pinned.length + s.pending.length > 0)
      lines.push(
        `  (first lines only; each whole definition, schemas and annotations included: ringfence mcp pins show ${s.server})`,
      );
  }
  return lines;
}

/**
 * One server's definitions, each whole: what a person reviews on first sight. Pinned ones say
 * when they were pinned; pending ones say they are withheld and how to approve them.
 */
export function formatServerDefinitions(shown: ShownPins): string[] {
  const { server } = shown;
  const lines = [
    `${rendered(server, 'name')}: ${shown.pinned.length} pinned, ${shown.pending.length} pending; each definition whole, as the server listed it (the client gets it renamed, its description prefixed, readOnlyHint and destructiveHint set by ringfence)`,
    '',
  ];
  for (const p of shown.pinned)
    lines.push(
      formatWholeDefinition(server, p.definition, p.tool, p.pinnedDefinition, [
        `pinned ${rendered(p.pinned_at, 'name')}: ${p.digest}`,
      ]),
    );
  for (const p of shown.pending)
    lines.push(
      formatWholeDefinition(server, p.definition, p.tool, p.pendingDefinition, [
        `PENDING (${rendered(p.kind, 'name')}), withheld from clients since ${rendered(p.seen_at, 'name')}: ${p.digest}`,
        `approve it at a terminal with: ringfence mcp pins approve ${server} ${approveArgument(p)}`,
      ]),
    );
  if (shown.pinned.length + shown.pending.length === 0) lines.push('Nothing pinned or pending.');
  return lines;
}

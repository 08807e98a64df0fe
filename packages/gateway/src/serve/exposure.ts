import { AUDIT_STRING_MAX } from '../audit/types.js';
import { type DefinitionKind, definitionLabel } from '../pins/kinds.js';
import { redactedLine } from '../text/redact.js';
import { rendered } from '../text/render.js';
import {
  type CatalogEntry,
  type InstructionsEntry,
  type PromptEntry,
  type ResourceEntry,
  type ServerCatalog,
  type TemplateEntry,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';

/** An exposed tool, prompt, resource or template, or a server's instructions given to clients. */
export type Exposed = CatalogEntry | PromptEntry | ResourceEntry | TemplateEntry | InstructionsEntry;

/** The name (or URI, or URI template) the server lists it under. */
export const nameOf = (entry: Exposed): string =>
  entry.kind === 'tool'
    ? entry.tool
    : entry.kind === 'prompt'
      ? entry.prompt
      : entry.kind === 'resource'
        ? entry.uri
        : entry.kind === 'template'
          ? entry.template
          : 'instructions';

/** `server/name` (or `server/prompt name`) for a report line: both names rendered once, as names. */
export const shownLabel = (entry: Exposed): string =>
  definitionLabel(rendered(entry.server, 'name'), entry.kind, rendered(nameOf(entry), 'name'));

const allExposed = (catalog: ServerCatalog): Exposed[] => [
  ...catalog.entries,
  ...catalog.prompts,
  ...catalog.resources,
  ...catalog.templates,
  ...(catalog.instructions ? [catalog.instructions] : []),
];

const exposedKey = (entry: Exposed) =>
  `${entry.kind}\u0000${nameOf(entry)}\u0000${entry.digest}\u0000exposed`;

export const withheldKey = (entry: WithheldEntry): string =>
  `${entry.definition}\u0000${entry.tool}\u0000${entry.digest ?? ''}\u0000${entry.kind}`;

/** One key per outcome (exposed or withheld, and why) of each tool and prompt of a catalog. */
export const outcomeKeys = (catalog: ServerCatalog): string[] => [
  ...allExposed(catalog).map(exposedKey),
  ...catalog.withheld.map(withheldKey),
];

// Audit refs name the definition in `tool` and mark every kind but a tool with `kind`.
const promptKind = (kind: DefinitionKind) => (kind === 'tool' ? {} : { kind });

/**
 * The refs of one `expose` decision per tool and prompt: all at start, on a re-list only those
 * whose outcome changed, so a server repeating "list changed" cannot grow the log with copies.
 */
export function exposureDecisions(
  catalog: ServerCatalog,
  previous?: ServerCatalog,
): Record<string, unknown>[] {
  const before = new Set(previous ? outcomeKeys(previous) : []);
  const isNew = (key: string) => !before.has(key);
  return [
    ...allExposed(catalog)
      .filter((entry) => isNew(exposedKey(entry)))
      .map((entry) => ({
        server: entry.server,
        tool: nameOf(entry).slice(0, AUDIT_STRING_MAX),
        ...promptKind(entry.kind),
        digest: entry.digest,
        allowed: true,
        rule: 'pinned',
      })),
    ...catalog.withheld
      .filter((entry) => isNew(withheldKey(entry)))
      .map((entry) => ({
        server: entry.server,
        tool: entry.tool.slice(0, AUDIT_STRING_MAX),
        ...promptKind(entry.definition),
        ...(entry.digest ? { digest: entry.digest } : {}),
        allowed: false,
        rule: `withheld-${entry.kind}`,
        reason: entry.reason.slice(0, 1000),
      })),
  ];
}

/** `3 tool(s) and 1 prompt(s)`: `count` of each kind (tools always named, other kinds when any). */
function kindCounts(count: (kind: DefinitionKind) => number): string {
  const counts = (['tool', 'prompt', 'resource', 'template', 'instructions'] as const)
    .map((kind) => [kind, count(kind)] as const)
    .filter(([kind, n]) => kind === 'tool' || n > 0)
    .map(([kind, n]) => (kind === 'instructions' ? 'its instructions' : `${n} ${kind}(s)`));
  return counts.length > 1
    ? `${counts.slice(0, -1).join(', ')} and ${counts[counts.length - 1]}`
    : (counts[0] ?? '');
}

/**
 * The first-sight notice. Pinned on first use, the definitions reach the client before anyone read
 * them, so the notice names the command that shows each one whole, and the opt-in that withholds
 * them instead; withheld, it names the review and the approval.
 */
function firstSightLine(catalog: ServerCatalog): string | undefined {
  const { server } = catalog;
  const held = catalog.withheld.filter((w) => w.kind === 'first-sight');
  if (held.length > 0) {
    // Said at every start until someone approves: the review is still owed.
    const listed = kindCounts((kind) => held.filter((w) => w.definition === kind).length);
    const lead = catalog.firstSight
      ? `first sight of ${server}: withheld`
      : `${server} has not been reviewed yet: still withheld`;
    return `ringfence: ${lead} ${listed} until a person approves them (${held[0]!.reason}). Read each whole definition (description, schemas, annotations) with: ringfence mcp pins show ${server}, then approve at a terminal with: ringfence mcp pins approve ${server}`;
  }
  if (!catalog.firstSight) return undefined;
  const listed = kindCounts(
    (kind) =>
      allExposed(catalog).filter((e) => e.kind === kind).length +
      catalog.withheld.filter((w) => w.definition === kind && w.kind !== 'unpinnable').length,
  );
  return `ringfence: first sight of ${server}: pinned ${listed} (trust on first use). Read each whole definition (description, schemas, annotations) with: ringfence mcp pins show ${server} (register servers with --review-first to withhold them until you approve them)`;
}

/**
 * What a person is told about a server's catalog when it starts: first sight, problems, withheld.
 * Each line renders the server's words once (a problem may quote its error text).
 */
export function catalogReport(catalog: ServerCatalog): string[] {
  const notice = firstSightLine(catalog);
  const lines: string[] = notice ? [notice] : [];
  for (const problem of catalog.problems)
    lines.push(`ringfence: ${catalog.server}: ${redactedLine(problem)}`);
  // Definitions withheld on first sight are counted in the notice above, which names the command.
  for (const entry of catalog.withheld)
    if (entry.kind !== 'filtered' && entry.kind !== 'first-sight') lines.push(withheldLine(entry));
  return lines;
}

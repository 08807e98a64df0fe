import { AUDIT_STRING_MAX } from '../audit/types.js';
import { type DefinitionKind, definitionLabel } from '../pins/kinds.js';
import { rendered } from '../text/render.js';
import {
  type CatalogEntry,
  type PromptEntry,
  type ResourceEntry,
  type ServerCatalog,
  type TemplateEntry,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';

/** An exposed tool, prompt, resource or template. */
export type Exposed = CatalogEntry | PromptEntry | ResourceEntry | TemplateEntry;

/** The name (or URI, or URI template) the server lists it under. */
export const nameOf = (entry: Exposed): string =>
  entry.kind === 'tool'
    ? entry.tool
    : entry.kind === 'prompt'
      ? entry.prompt
      : entry.kind === 'resource'
        ? entry.uri
        : entry.template;

/** `server/name` (or `server/prompt name`) for a report line: both names rendered once, as names. */
export const shownLabel = (entry: Exposed): string =>
  definitionLabel(rendered(entry.server, 'name'), entry.kind, rendered(nameOf(entry), 'name'));

const allExposed = (catalog: ServerCatalog): Exposed[] => [
  ...catalog.entries,
  ...catalog.prompts,
  ...catalog.resources,
  ...catalog.templates,
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

/**
 * What a person is told about a server's catalog when it starts: first sight, problems, withheld.
 * Each line renders the server's words once (a problem may quote its error text).
 */
export function catalogReport(catalog: ServerCatalog): string[] {
  const lines: string[] = [];
  if (catalog.firstSight) {
    const pinned = (kind: DefinitionKind) =>
      allExposed(catalog).filter((e) => e.kind === kind).length +
      catalog.withheld.filter((w) => w.definition === kind && w.kind !== 'unpinnable').length;
    const counts = (['tool', 'prompt', 'resource', 'template'] as const)
      .map((kind) => [kind, pinned(kind)] as const)
      .filter(([kind, count]) => kind === 'tool' || count > 0)
      .map(([kind, count]) => `${count} ${kind}(s)`);
    const listed =
      counts.length > 1 ? `${counts.slice(0, -1).join(', ')} and ${counts[counts.length - 1]}` : counts[0];
    lines.push(
      `ringfence: first sight of ${catalog.server}: pinned ${listed} (trust on first use). Review them with: ringfence mcp pins show ${catalog.server}`,
    );
  }
  for (const problem of catalog.problems)
    lines.push(`ringfence: ${catalog.server}: ${rendered(problem, 'line')}`);
  for (const entry of catalog.withheld) if (entry.kind !== 'filtered') lines.push(withheldLine(entry));
  return lines;
}

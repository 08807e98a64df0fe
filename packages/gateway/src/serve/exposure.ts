import type { DefinitionKind } from '../pins/kinds.js';
import {
  type CatalogEntry,
  type PromptEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';

/** An exposed tool or prompt. */
export type Exposed = CatalogEntry | PromptEntry;

export const nameOf = (entry: Exposed): string => (entry.kind === 'tool' ? entry.tool : entry.prompt);

const exposedKey = (entry: Exposed) =>
  `${entry.kind}\u0000${nameOf(entry)}\u0000${entry.digest}\u0000exposed`;

export const withheldKey = (entry: WithheldEntry): string =>
  `${entry.definition}\u0000${entry.tool}\u0000${entry.digest ?? ''}\u0000${entry.kind}`;

/** One key per outcome (exposed or withheld, and why) of each tool and prompt of a catalog. */
export const outcomeKeys = (catalog: ServerCatalog): string[] => [
  ...catalog.entries.map(exposedKey),
  ...catalog.prompts.map(exposedKey),
  ...catalog.withheld.map(withheldKey),
];

const promptKind = (kind: DefinitionKind) => (kind === 'prompt' ? { kind: 'prompt' as const } : {});

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
    ...[...catalog.entries, ...catalog.prompts]
      .filter((entry) => isNew(exposedKey(entry)))
      .map((entry) => ({
        server: entry.server,
        tool: nameOf(entry),
        ...promptKind(entry.kind),
        digest: entry.digest,
        allowed: true,
        rule: 'pinned',
      })),
    ...catalog.withheld
      .filter((entry) => isNew(withheldKey(entry)))
      .map((entry) => ({
        server: entry.server,
        tool: entry.tool,
        ...promptKind(entry.definition),
        ...(entry.digest ? { digest: entry.digest } : {}),
        allowed: false,
        rule: `withheld-${entry.kind}`,
        reason: entry.reason.slice(0, 1000),
      })),
  ];
}

/** What a person is told about a server's catalog when it starts: first sight, problems, withheld. */
export function catalogReport(catalog: ServerCatalog): string[] {
  const lines: string[] = [];
  if (catalog.firstSight) {
    const pinned = (kind: DefinitionKind) =>
      (kind === 'tool' ? catalog.entries : catalog.prompts).length +
      catalog.withheld.filter((w) => w.definition === kind && w.kind !== 'unpinnable').length;
    const prompts = pinned('prompt');
    lines.push(
      `ringfence: first sight of ${catalog.server}: pinned ${pinned('tool')} tool(s)${prompts > 0 ? ` and ${prompts} prompt(s)` : ''} (trust on first use). Review them with: ringfence mcp pins show ${catalog.server}`,
    );
  }
  for (const problem of catalog.problems) lines.push(`ringfence: ${catalog.server}: ${problem}`);
  for (const entry of catalog.withheld) if (entry.kind !== 'filtered') lines.push(withheldLine(entry));
  return lines;
}

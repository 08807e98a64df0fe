/**
 * Why a definition is withheld from clients, and what a person does next: the stderr line at
 * start, the refusal of a call to a withheld name, and whether first sight withholds at all.
 */

import { exposedName, type Naming } from '../catalog/present.js';
import { type DefinitionKind, definitionLabel } from '../pins/kinds.js';
import type { PolicyView } from '../ports/policy.js';
import { rendered } from '../text/render.js';

export interface WithheldEntry {
  readonly server: string;
  /** The name as the server lists it, whatever its kind (the field keeps its first name). */
  readonly tool: string;
  /** A tool, a prompt, a resource, a template, or the server's instructions. */
  readonly definition: DefinitionKind;
  readonly reason: string;
  readonly kind:
    | 'changed'
    | 'new'
    | 'first-sight'
    | 'org'
    | 'unpinnable'
    | 'malformed'
    | 'schema'
    | 'name'
    | 'filtered';
  readonly digest?: string;
  /** For kind `name`: the name the reason quotes (as the client would have been shown it). */
  readonly quotedName?: string;
}

/** Why a name cannot be exposed, quoting it as `quoted` (the name as it came, or rendered as a name). */
export const nameReason = (quoted: string): string =>
  `"${quoted}" is over 128 characters or uses characters outside [A-Za-z0-9_.-]`;

/**
 * A withheld entry's reason as a person reads it, rendered once: as one line, and a name the
 * reason quotes (kind `name`) as a name, its spaces shown escaped as in the label before it.
 */
export function withheldReason(entry: WithheldEntry): string {
  return entry.kind === 'name' && entry.quotedName !== undefined
    ? nameReason(rendered(entry.quotedName, 'name'))
    : rendered(entry.reason, 'line');
}

/**
 * Whether a server never pinned is withheld on first sight, and who says so (for the reason). The
 * policy's `first_sight` cannot be weakened locally: `review_first` only ever adds withholding.
 */
export function firstSightOf(
  policy: PolicyView,
  server: string,
  reviewFirst: boolean,
): { mode: 'pin' | 'withhold'; why: string } {
  if (policy.firstSight(server) === 'withhold')
    return { mode: 'withhold', why: `the organisation policy "${policy.ref?.name}" (first_sight)` };
  if (reviewFirst) return { mode: 'withhold', why: 'its registration (--review-first)' };
  return { mode: 'pin', why: '' };
}

/** What a person does about a withheld definition: the command to run, or whom to tell. */
export function withheldNextStep(entry: WithheldEntry): string {
  if (entry.kind === 'first-sight')
    return `Read its whole definition with: ringfence mcp pins show ${entry.server}, then approve at a terminal with: ringfence mcp pins approve ${entry.server}`;
  if (entry.kind === 'changed' || entry.kind === 'new')
    return `Review it with: ringfence mcp pins diff ${entry.server}`;
  // Org-pinned definitions say "ask your policy admin" in their reason; filtered ones are by choice.
  if (entry.kind === 'org' || entry.kind === 'filtered') return '';
  if (entry.definition === 'instructions')
    return "The server's tools, prompts and resources are unaffected; report this to the server's author.";
  return `The server's other ${entry.definition}s are unaffected; report this one to the server's author.`;
}

/** `server/name` (or `server/prompt name`), both rendered once, as names. */
const shownLabel = (entry: WithheldEntry) =>
  definitionLabel(rendered(entry.server, 'name'), entry.definition, rendered(entry.tool, 'name'));

/**
 * The stderr line for a withheld definition: what happened and the command to run. The server's
 * words are rendered here, once: names as names (the label's, and the one a name problem's reason
 * quotes), the rest of the reason as one line (`withheldReason`).
 */
export function withheldLine(entry: WithheldEntry): string {
  const next = withheldNextStep(entry);
  return `ringfence: withheld ${shownLabel(entry)}: ${withheldReason(entry)}.${next ? ` ${next}` : ''}`;
}

/**
 * Why a call to `name` (as a client would have been shown it) is refused when it names a withheld
 * tool or prompt rather than an unknown one: the reason and the command that would expose it.
 * Undefined when no withheld definition goes by that name (filtered ones are hidden on purpose).
 */
export function withheldRefusal(
  withheld: readonly WithheldEntry[],
  kind: 'tool' | 'prompt',
  name: string,
  naming: Naming,
): string | undefined {
  const entry = withheld.find(
    (w) => w.definition === kind && w.kind !== 'filtered' && exposedName(w.server, w.tool, naming) === name,
  );
  if (!entry) return undefined;
  const next = withheldNextStep(entry);
  // The client's own name back as it sent it, as the unknown-name refusal does; the server's
  // words (its definition's name, a reason quoting its schema) rendered on one line.
  return `ringfence: "${name}" is withheld (${shownLabel(entry)}): ${withheldReason(entry)}; it was not forwarded.${next ? ` ${next}` : ''}`;
}

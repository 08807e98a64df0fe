import type { RE2JS } from 're2js';
import {
  EXPOSED_NAME,
  exposedName,
  type Naming,
  presentPrompt,
  presentResource,
  presentTool,
} from '../catalog/present.js';
import { fingerprintDefinition, type PinnableDefinition } from '../pins/fingerprint.js';
import type { DefinitionKind } from '../pins/kinds.js';
import { type OrgPins, reconcileAndRecord } from '../pins/reconcile.js';
import type { PinStore } from '../pins/store.js';
import type { PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import { iconsNote, withPassableIcons } from './icons.js';
import {
  approvedInstructions,
  type InstructionsEntry,
  isListedDefinition,
  listInstructions,
} from './instructions-pin.js';
import { clientUri, compileTemplate, uriProblem } from './resource-uri.js';
import { firstSightOf, nameReason, type WithheldEntry } from './withheld.js';

export type { InstructionsEntry } from './instructions-pin.js';
export { type WithheldEntry, withheldLine, withheldReason } from './withheld.js';

/** A tool the client may call, with what its checks need. */
export interface CatalogEntry {
  readonly kind: 'tool';
  readonly exposedName: string;
  readonly server: string;
  readonly tool: string;
  readonly digest: string;
  readonly presented: Record<string, unknown>;
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
}

/** One argument a prompt declares: prompt arguments are strings, by name. */
export interface PromptArgument {
  readonly name: string;
  readonly required: boolean;
}

/** A prompt the client may get, with the arguments it declared (what `prompts/get` is checked against). */
export interface PromptEntry {
  readonly kind: 'prompt';
  readonly exposedName: string;
  readonly server: string;
  readonly prompt: string;
  readonly digest: string;
  readonly presented: Record<string, unknown>;
  readonly arguments: readonly PromptArgument[];
}

/** A resource the client may read: `exposedName` is the URI the client is shown (`resource-uri.ts`). */
export interface ResourceEntry {
  readonly kind: 'resource';
  readonly exposedName: string;
  readonly server: string;
  /** The URI as the server lists it. */
  readonly uri: string;
  readonly digest: string;
  readonly presented: Record<string, unknown>;
}

/** A resource template: a URI it expands to may be read from its server. */
export interface TemplateEntry {
  readonly kind: 'template';
  readonly exposedName: string;
  readonly server: string;
  /** The URI template as the server lists it. */
  readonly template: string;
  readonly digest: string;
  readonly presented: Record<string, unknown>;
  /** Matches the server's URIs the template expands to. */
  readonly matcher: RE2JS;
}

export interface ServerCatalog {
  readonly server: string;
  /** Its instructions when they are pinned (absent: it gave none, or they are withheld). */
  readonly instructions?: InstructionsEntry;
  readonly entries: readonly CatalogEntry[];
  readonly prompts: readonly PromptEntry[];
  readonly resources: readonly ResourceEntry[];
  readonly templates: readonly TemplateEntry[];
  readonly withheld: readonly WithheldEntry[];
  readonly firstSight: boolean;
  /** Held whole at first sight: nothing was ever approved (see `Reconciliation.awaitingReview`). */
  readonly awaitingReview: boolean;
  readonly problems: readonly string[];
}

interface Inputs {
  readonly server: string;
  readonly destination: string;
  readonly rawTools: readonly unknown[];
  /** Undefined when the server does not offer prompts: its prompt pins are then left alone. */
  readonly rawPrompts?: readonly unknown[];
  /**
   * Undefined when the server does not offer resources, or that listing failed: its resource (or
   * template) pins are then left alone. Each is independent of the other.
   */
  readonly rawResources?: readonly unknown[];
  readonly rawTemplates?: readonly unknown[];
  /**
   * The instructions the server gave when it started, still untrusted (undefined or empty: none;
   * its instructions pin, if any, is kept, and nothing is given to clients).
   */
  readonly instructions?: unknown;
  readonly problems: readonly string[];
  readonly localAllow: readonly string[] | undefined;
  /** The registration's `review_first`: withhold on first sight even when the policy would pin. */
  readonly reviewFirst?: boolean;
  readonly pins: PinStore;
  readonly guard: SchemaChecks;
  readonly policy: PolicyView;
  readonly naming?: Naming;
}

type Problem = { kind: WithheldEntry['kind']; reason: string; quotedName?: string };

function isObjectSchema(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { type?: unknown }).type === 'object'
  );
}

/** Fingerprint each raw definition on its own; one that fails is withheld alone. */
function fingerprintAll(
  server: string,
  kind: DefinitionKind,
  raws: readonly unknown[],
  withheld: WithheldEntry[],
): PinnableDefinition[] {
  const pinnable: PinnableDefinition[] = [];
  const seen = new Set<string>();
  for (const raw of raws) {
    const result = fingerprintDefinition(raw, kind);
    if (!result.ok) {
      withheld.push({
        server,
        tool: result.name ?? '(unnamed)',
        definition: kind,
        reason: result.reason,
        kind: 'unpinnable',
      });
      continue;
    }
    if (seen.has(result.pinnable.name)) {
      withheld.push({
        server,
        tool: result.pinnable.name,
        definition: kind,
        reason: 'the server listed this name twice',
        kind: 'malformed',
      });
      continue;
    }
    seen.add(result.pinnable.name);
    pinnable.push(result.pinnable);
  }
  return pinnable;
}

/**
 * The declared arguments of a prompt, or why they cannot be checked against: an array of
 * objects, each with a unique string name and, if present, a boolean `required`.
 */
export function promptArguments(definition: Readonly<Record<string, unknown>>): PromptArgument[] | string {
  const declared = definition.arguments;
  if (declared === undefined) return [];
  if (!Array.isArray(declared)) return 'its arguments are not a list';
  const out: PromptArgument[] = [];
  for (const item of declared) {
    if (typeof item !== 'object' || item === null || Array.isArray(item))
      return 'an argument is not an object';
    const { name, required } = item as { name?: unknown; required?: unknown };
    if (typeof name !== 'string' || name.length === 0) return 'an argument has no name';
    if (required !== undefined && typeof required !== 'boolean')
      return `argument "${name}" has a required that is not true or false`;
    if (out.some((a) => a.name === name)) return `argument "${name}" is declared twice`;
    out.push({ name, required: required === true });
  }
  return out;
}

async function toolProblem(
  inputs: Inputs,
  tool: PinnableDefinition,
  name: string,
): Promise<Problem | undefined> {
  const policyAllow = inputs.policy.allowedTools(inputs.server);
  const localAllow = inputs.localAllow && inputs.localAllow.length > 0 ? inputs.localAllow : undefined;
  const filteredBy =
    localAllow && !localAllow.includes(tool.name)
      ? 'the local allow_tools list'
      : policyAllow && !policyAllow.has(tool.name)
        ? 'the organisation policy'
        : undefined;
  if (filteredBy) return { kind: 'filtered', reason: `not allowed by ${filteredBy}` };
  if (!EXPOSED_NAME.test(name)) return nameProblem(name);
  const { inputSchema, outputSchema } = tool.definition;
  if (!isObjectSchema(inputSchema))
    return { kind: 'malformed', reason: 'its inputSchema is not an object schema' };
  if (outputSchema !== undefined && !isObjectSchema(outputSchema))
    return { kind: 'malformed', reason: 'its outputSchema is not an object schema' };
  for (const [label, schema] of [
    ['inputSchema', inputSchema],
    ['outputSchema', outputSchema],
  ] as const) {
    if (schema === undefined) continue;
    const verdict = await inputs.guard.prepare(schema);
    if (!verdict.ok)
      return { kind: 'schema', reason: `its ${label} is refused: ${verdict.message ?? verdict.code}` };
  }
  return undefined;
}

/** A resource or template needs a string name (what people read) and a URI it can be served under. */
function resourceProblem(item: PinnableDefinition): Problem | undefined {
  const { name, description, mimeType } = item.definition;
  if (typeof name !== 'string') return { kind: 'malformed', reason: `the ${item.kind} has no name` };
  if (description !== undefined && typeof description !== 'string')
    return { kind: 'malformed', reason: 'its description is not a string' };
  if (mimeType !== undefined && typeof mimeType !== 'string')
    return { kind: 'malformed', reason: 'its mimeType is not a string' };
  const problem = uriProblem(item.name);
  return problem ? { kind: 'malformed', reason: problem } : undefined;
}

const nameProblem = (name: string): Problem => ({ kind: 'name', reason: nameReason(name), quotedName: name });

/**
 * Turn one server's raw listings (tools, and prompts when it offers them) into catalog entries:
 * fingerprint each definition on its own, compare with the pins (recording first sight and
 * pending definitions), filter tools by the local and organisation allowlists, and vet every
 * tool schema and prompt argument list. Anything that fails any step is withheld with the
 * reason; the others are unaffected.
 */
export async function buildServerCatalog(inputs: Inputs): Promise<ServerCatalog> {
  const { server } = inputs;
  const naming = inputs.naming ?? { prefixed: true };
  const withheld: WithheldEntry[] = [];
  const listed = [
    ...fingerprintAll(server, 'tool', inputs.rawTools, withheld),
    ...fingerprintAll(server, 'prompt', inputs.rawPrompts ?? [], withheld),
    ...fingerprintAll(server, 'resource', inputs.rawResources ?? [], withheld),
    ...fingerprintAll(server, 'template', inputs.rawTemplates ?? [], withheld),
  ];
  listInstructions(server, inputs.instructions, listed, withheld);

  const toolPins = inputs.policy.orgPins(server, 'tool');
  const orgPins: OrgPins | undefined = toolPins
    ? {
        tool: toolPins,
        prompt: inputs.policy.orgPins(server, 'prompt') ?? new Map(),
        resource: inputs.policy.orgPins(server, 'resource') ?? new Map(),
        template: inputs.policy.orgPins(server, 'template') ?? new Map(),
        instructions: inputs.policy.orgPins(server, 'instructions') ?? new Map(),
      }
    : undefined;
  const firstSight = firstSightOf(inputs.policy, server, inputs.reviewFirst === true);
  const reconciliation = await reconcileAndRecord(inputs.pins, server, listed, {
    firstSight: firstSight.mode,
    kinds: [
      'tool',
      ...(inputs.rawPrompts ? (['prompt'] as const) : []),
      // A listing that failed covers nothing: that kind's pins and pending stay as they were.
      ...(inputs.rawResources ? (['resource'] as const) : []),
      ...(inputs.rawTemplates ? (['template'] as const) : []),
      // Always covered: instructions a server stopped giving are no longer pending review.
      'instructions',
    ],
    ...(orgPins ? { orgPins } : {}),
  });
  for (const { pinnable, kind } of reconciliation.withheld) {
    const reason =
      kind === 'org'
        ? `the organisation policy "${inputs.policy.ref?.name}" does not pin this definition (${pinnable.digest}); ask your policy admin to pin it`
        : kind === 'changed'
          ? 'its definition changed since it was pinned'
          : kind === 'first-sight'
            ? `${server} is new and ${firstSight.why} withholds a new server's definitions until a person approves them`
            : 'it is new since the server was pinned';
    withheld.push({
      server,
      tool: pinnable.name,
      definition: pinnable.kind,
      reason,
      kind,
      digest: pinnable.digest,
    });
  }

  const entries: CatalogEntry[] = [];
  const prompts: PromptEntry[] = [];
  const resources: ResourceEntry[] = [];
  const templates: TemplateEntry[] = [];
  type Checked = {
    item: PinnableDefinition;
    name: string;
    problem?: Problem | undefined;
    args?: PromptArgument[];
    matcher?: RE2JS;
  };
  const instructions = approvedInstructions(server, reconciliation.exposed);
  const checked = await Promise.all(
    reconciliation.exposed.filter(isListedDefinition).map(async (item): Promise<Checked> => {
      if (item.kind === 'resource' || item.kind === 'template') {
        const name = clientUri(server, item.name, naming);
        const problem = resourceProblem(item);
        if (problem) return { item, name, problem };
        const matcher = item.kind === 'template' ? compileTemplate(item.name) : undefined;
        return typeof matcher === 'string'
          ? { item, name, problem: { kind: 'malformed' as const, reason: matcher } }
          : { item, name, ...(matcher ? { matcher } : {}) };
      }
      const name = exposedName(server, item.name, naming);
      if (item.kind === 'tool') return { item, name, problem: await toolProblem(inputs, item, name) };
      if (!EXPOSED_NAME.test(name)) return { item, name, problem: nameProblem(name) };
      const args = promptArguments(item.definition);
      return typeof args === 'string'
        ? { item, name, problem: { kind: 'malformed' as const, reason: args } }
        : { item, name, args };
    }),
  );
  let iconsDropped = 0;
  for (const check of checked) {
    const { item, name } = check;
    // What the client is shown: the pinned definition with only icons it can draw without a fetch.
    const shown = check.problem ? undefined : withPassableIcons(item.definition);
    iconsDropped += shown?.dropped ?? 0;
    const definition = shown?.definition ?? item.definition;
    if (check.problem) {
      withheld.push({
        server,
        tool: item.name,
        definition: item.kind,
        digest: item.digest,
        ...check.problem,
      });
    } else if (item.kind === 'tool') {
      entries.push({
        kind: 'tool',
        exposedName: name,
        server,
        tool: item.name,
        digest: item.digest,
        presented: presentTool(
          server,
          inputs.destination,
          definition,
          inputs.policy.isReadOnly(server, item.name),
          naming,
        ),
        inputSchema: item.definition.inputSchema,
        outputSchema: item.definition.outputSchema,
      });
    } else if (item.kind === 'resource' || item.kind === 'template') {
      const presented = presentResource(server, inputs.destination, definition, item.kind, name, naming);
      if (item.kind === 'resource')
        resources.push({
          kind: 'resource',
          exposedName: name,
          server,
          uri: item.name,
          digest: item.digest,
          presented,
        });
      else
        templates.push({
          kind: 'template',
          exposedName: name,
          server,
          template: item.name,
          digest: item.digest,
          presented,
          matcher: check.matcher!,
        });
    } else {
      prompts.push({
        kind: 'prompt',
        exposedName: name,
        server,
        prompt: item.name,
        digest: item.digest,
        presented: presentPrompt(server, inputs.destination, definition, naming),
        arguments: check.args ?? [],
      });
    }
  }
  return {
    server,
    ...(instructions ? { instructions } : {}),
    entries,
    prompts,
    resources,
    templates,
    withheld,
    firstSight: reconciliation.firstSight,
    awaitingReview: reconciliation.awaitingReview === true,
    problems: iconsDropped > 0 ? [...inputs.problems, iconsNote(iconsDropped)] : inputs.problems,
  };
}

import { EXPOSED_TOOL_NAME, exposedToolName, presentTool } from '../catalog/present.js';
import { fingerprintTool, type PinnableTool } from '../pins/fingerprint.js';
import { type Reconciliation, reconcileAndRecord } from '../pins/reconcile.js';
import type { PinStore } from '../pins/store.js';
import type { PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';

/** A tool the client may call, with what its checks need. */
export interface CatalogEntry {
  readonly exposedName: string;
  readonly server: string;
  readonly tool: string;
  readonly digest: string;
  readonly presented: Record<string, unknown>;
  readonly inputSchema: unknown;
  readonly outputSchema: unknown;
}

export interface WithheldEntry {
  readonly server: string;
  readonly tool: string;
  readonly reason: string;
  readonly kind: 'changed' | 'new' | 'org' | 'unpinnable' | 'malformed' | 'schema' | 'name' | 'filtered';
  readonly digest?: string;
}

export interface ServerCatalog {
  readonly server: string;
  readonly entries: readonly CatalogEntry[];
  readonly withheld: readonly WithheldEntry[];
  readonly firstSight: boolean;
  readonly problems: readonly string[];
}

interface Inputs {
  readonly server: string;
  readonly destination: string;
  readonly rawTools: readonly unknown[];
  readonly problems: readonly string[];
  readonly localAllow: readonly string[] | undefined;
  readonly pins: PinStore;
  readonly guard: SchemaChecks;
  readonly policy: PolicyView;
}

function isObjectSchema(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    (value as { type?: unknown }).type === 'object'
  );
}

/**
 * Turn one server's raw listing into catalog entries: fingerprint each tool on its own, compare
 * with the pins (recording first sight and pending definitions), filter by the local and
 * organisation allowlists, and vet every schema. Anything that fails any step is withheld with
 * the reason; the others are unaffected.
 */
export async function buildServerCatalog(inputs: Inputs): Promise<ServerCatalog> {
  const withheld: WithheldEntry[] = [];
  const pinnable: PinnableTool[] = [];
  const seen = new Set<string>();
  for (const raw of inputs.rawTools) {
    const result = fingerprintTool(raw);
    if (!result.ok) {
      withheld.push({
        server: inputs.server,
        tool: result.name ?? '(unnamed)',
        reason: result.reason,
        kind: 'unpinnable',
      });
      continue;
    }
    if (seen.has(result.tool.name)) {
      withheld.push({
        server: inputs.server,
        tool: result.tool.name,
        reason: 'the server listed this name twice',
        kind: 'malformed',
      });
      continue;
    }
    seen.add(result.tool.name);
    pinnable.push(result.tool);
  }

  const orgPins = inputs.policy.orgPins(inputs.server);
  const reconciliation: Reconciliation = await reconcileAndRecord(
    inputs.pins,
    inputs.server,
    pinnable,
    orgPins ? { orgPins } : {},
  );
  for (const { tool, kind } of reconciliation.withheld) {
    const reason =
      kind === 'org'
        ? `the organisation policy "${inputs.policy.ref?.name}" does not pin this definition (${tool.digest}); ask your policy admin to pin it`
        : kind === 'changed'
          ? 'its definition changed since it was pinned'
          : 'it is new since the server was pinned';
    withheld.push({ server: inputs.server, tool: tool.name, reason, kind, digest: tool.digest });
  }

  const policyAllow = inputs.policy.allowedTools(inputs.server);
  const localAllow =
    inputs.localAllow && inputs.localAllow.length > 0 ? new Set(inputs.localAllow) : undefined;
  const entries: CatalogEntry[] = [];
  const checks = await Promise.all(
    reconciliation.exposed.map(async (tool) => {
      const exposedName = exposedToolName(inputs.server, tool.name);
      const filteredBy =
        localAllow && !localAllow.has(tool.name)
          ? 'the local allow_tools list'
          : policyAllow && !policyAllow.has(tool.name)
            ? 'the organisation policy'
            : undefined;
      if (filteredBy)
        return { tool, problem: { kind: 'filtered' as const, reason: `not allowed by ${filteredBy}` } };
      if (!EXPOSED_TOOL_NAME.test(exposedName)) {
        return {
          tool,
          problem: {
            kind: 'name' as const,
            reason: `"${exposedName}" is over 128 characters or uses characters outside [A-Za-z0-9_.-]`,
          },
        };
      }
      const { inputSchema, outputSchema } = tool.definition;
      if (!isObjectSchema(inputSchema))
        return {
          tool,
          problem: { kind: 'malformed' as const, reason: 'its inputSchema is not an object schema' },
        };
      if (outputSchema !== undefined && !isObjectSchema(outputSchema)) {
        return {
          tool,
          problem: { kind: 'malformed' as const, reason: 'its outputSchema is not an object schema' },
        };
      }
      for (const [label, schema] of [
        ['inputSchema', inputSchema],
        ['outputSchema', outputSchema],
      ] as const) {
        if (schema === undefined) continue;
        const verdict = await inputs.guard.prepare(schema);
        if (!verdict.ok)
          return {
            tool,
            problem: {
              kind: 'schema' as const,
              reason: `its ${label} is refused: ${verdict.message ?? verdict.code}`,
            },
          };
      }
      return { tool, exposedName, inputSchema, outputSchema };
    }),
  );
  for (const check of checks) {
    if ('problem' in check && check.problem) {
      withheld.push({
        server: inputs.server,
        tool: check.tool.name,
        digest: check.tool.digest,
        ...check.problem,
      });
      continue;
    }
    const { tool } = check;
    entries.push({
      exposedName: exposedToolName(inputs.server, tool.name),
      server: inputs.server,
      tool: tool.name,
      digest: tool.digest,
      presented: presentTool(
        inputs.server,
        inputs.destination,
        tool.definition,
        inputs.policy.isReadOnly(inputs.server, tool.name),
      ),
      inputSchema: tool.definition.inputSchema,
      outputSchema: tool.definition.outputSchema,
    });
  }
  return {
    server: inputs.server,
    entries,
    withheld,
    firstSight: reconciliation.firstSight,
    problems: inputs.problems,
  };
}

/** The stderr line for a withheld tool: what happened and the command to run. */
export function withheldLine(entry: WithheldEntry): string {
  // Org-pinned tools say "ask your policy admin" in their reason; only local pins can be reviewed here.
  const next =
    entry.kind === 'changed' || entry.kind === 'new'
      ? ` Review it with: ringfence mcp pins diff ${entry.server}`
      : entry.kind === 'org' || entry.kind === 'filtered'
        ? ''
        : " The server's other tools are unaffected; report this one to the server's author.";
  return `ringfence: withheld ${entry.server}/${entry.tool}: ${entry.reason}.${next}`;
}

import type { Upstream } from '../ports/upstream.js';
import { upstreamErrorSource } from './pipeline/index.js';

/** What one server lists (and said when it started), each part still untrusted, for the catalog. */
export interface ServerListings {
  readonly rawTools: readonly unknown[];
  /** Absent when the server offers no prompts or their listing failed. */
  readonly rawPrompts?: readonly unknown[];
  /** Absent when the server offers no resources or that listing failed. */
  readonly rawResources?: readonly unknown[];
  /** Absent when the server offers no resources or its templates listing failed. */
  readonly rawTemplates?: readonly unknown[];
  /** The instructions it gave when it started (absent: none). */
  readonly instructions?: string;
  /** For people (stderr): partial listings, and each listing that failed and what it cost. */
  readonly problems: readonly string[];
}

/**
 * Every listing of one server, each failing alone: a server that refuses `prompts/list` keeps its
 * tools, and one that refuses `resources/templates/list` (many answer -32601) keeps its tools,
 * prompts and resources; the failed listing withholds only what it would have listed, and a
 * problem line says which listing failed and why. Only the tool listing is the server's own
 * failure: a server that cannot list its tools is not served.
 */
export async function listServerDefinitions(upstream: Upstream): Promise<ServerListings> {
  const capabilities = upstream.capabilities();
  const listing = await upstream.listTools();
  const problems = [...listing.problems];
  const [prompts, resources, templates] = await Promise.allSettled([
    capabilities.prompts ? upstream.listPrompts() : undefined,
    capabilities.resources ? upstream.listResources() : undefined,
    capabilities.resources ? upstream.listResourceTemplates() : undefined,
  ]);
  const failed = (what: string, outcome: PromiseRejectedResult) =>
    problems.push(`listing its ${what} failed, so none is exposed: ${upstreamErrorSource(outcome.reason)}`);
  let rawPrompts: readonly unknown[] | undefined;
  if (prompts.status === 'rejected') failed('prompts', prompts);
  else if (prompts.value) {
    rawPrompts = prompts.value.prompts;
    problems.push(...prompts.value.problems.map((problem) => `prompts: ${problem}`));
  }
  let rawResources: readonly unknown[] | undefined;
  if (resources.status === 'rejected') failed('resources', resources);
  else if (resources.value) {
    rawResources = resources.value.resources;
    problems.push(...resources.value.problems.map((problem) => `resources: ${problem}`));
  }
  let rawTemplates: readonly unknown[] | undefined;
  if (templates.status === 'rejected') failed('resource templates', templates);
  else if (templates.value) {
    rawTemplates = templates.value.resourceTemplates;
    problems.push(...templates.value.problems.map((problem) => `resource templates: ${problem}`));
  }
  const instructions = upstream.instructions?.();
  return {
    rawTools: listing.tools,
    ...(rawPrompts ? { rawPrompts } : {}),
    ...(rawResources ? { rawResources } : {}),
    ...(rawTemplates ? { rawTemplates } : {}),
    ...(instructions !== undefined ? { instructions } : {}),
    problems,
  };
}

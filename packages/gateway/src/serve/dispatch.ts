import type { Caller, CallToolResult } from '../ports/caller.js';
import type { CallProgress, ClientGrants, UpstreamInput } from '../ports/upstream.js';
import type { TaskRegistry, TaskSnapshot } from '../tasks/index.js';
import type { CatalogEntry } from './catalog.js';
import { type CompletionAnswer, completePrompt } from './completion.js';
import { localFailureResult } from './local-failure.js';
import { forwardLogLevel } from './log-levels.js';
import {
  CallRefused,
  lookup,
  type PipelineDeps,
  type PromptResult,
  type ReadResult,
  runForward,
  startToolTask,
  type ToolCallRequest,
} from './pipeline/index.js';
import { refusedText } from './refused.js';
import type { ServerRegistry } from './registry.js';
import { readThrough, type Subscriptions } from './resource-reads.js';
import { withheldRefusal } from './withheld.js';

/** Who asks, in which protocol version, and (for a forwarded request) their cancel and progress. */
export interface DispatchContext {
  readonly caller: Caller;
  /** What the endpoint negotiated with this client (undefined: none): decides what results may carry. */
  readonly protocolVersion?: string | undefined;
  /** The client's cancel. */
  readonly signal?: AbortSignal;
  /** Where progress goes, when the client asked for it. */
  readonly onProgress?: (progress: CallProgress) => void;
  /** The client's W3C trace context, already checked by the codec: passed on upstream. */
  readonly traceparent?: string;
  /** Present when the caller relays a 2026 server's `input_required` (see `CallOptions`). */
  readonly upstreamInput?: UpstreamInput;
  /**
   * What the client declared it can answer (sampling, form elicitation): its request's `_meta`
   * envelope on MCP 2026-07-28, its `initialize` before. Carried to the one place that sends
   * upstream (`pipeline/method-steps.ts`), so a 2026 server is told no more than this, narrowed
   * further by its registration. Absent: the caller answers nothing.
   */
  readonly clientCapabilities?: ClientGrants;
  /** Whose request it is (`ports/call-owner.ts`): where the server's requests during it may go. */
  readonly owner?: object;
}

type Listed = Record<string, unknown>[];

/**
 * Every client method the gateway answers, its params (as a codec of either protocol era decoded
 * them, still unchecked past their shape) and its result. A refusal of a method with no error
 * result is thrown as a `CallRefused`; the codec sends it as its era's error.
 */
export interface ClientMethods {
  'tools/list': { params: unknown; result: { tools: Listed } };
  'tools/call': { params: { name: string; arguments?: unknown }; result: CallToolResult };
  'prompts/list': { params: unknown; result: { prompts: Listed } };
  'prompts/get': { params: { name: string; arguments?: unknown }; result: PromptResult };
  'resources/list': { params: unknown; result: { resources: Listed } };
  'resources/templates/list': { params: unknown; result: { resourceTemplates: Listed } };
  'resources/read': { params: { uri: string }; result: ReadResult };
  /** The result is the URI as clients are shown it: the session keeps it, for updates and its close. */
  'resources/subscribe': { params: { uri: string }; result: string };
  'resources/unsubscribe': { params: { uri: string }; result: string };
  'completion/complete': { params: Record<string, unknown>; result: CompletionAnswer };
  'logging/setLevel': { params: { level: string }; result: Record<string, never> };
}
export type ClientMethod = keyof ClientMethods;

/** What the methods are answered from: the registry's catalog and servers, and the pipeline. */
export interface DispatchDeps {
  readonly registry: ServerRegistry;
  readonly subscriptions: Subscriptions;
  readonly pipeline: () => PipelineDeps;
  readonly log: (line: string) => void;
}

type Handler<M extends ClientMethod> = (
  deps: DispatchDeps,
  params: ClientMethods[M]['params'],
  context: DispatchContext,
) => Promise<ClientMethods[M]['result']>;

const forwarding = (context: DispatchContext) => ({
  ...(context.signal ? { signal: context.signal } : {}),
  ...(context.onProgress ? { onProgress: context.onProgress } : {}),
  ...(context.traceparent ? { traceparent: context.traceparent } : {}),
  ...(context.upstreamInput ? { upstreamInput: context.upstreamInput } : {}),
  ...(context.clientCapabilities ? { clientCapabilities: context.clientCapabilities } : {}),
  ...(context.owner ? { owner: context.owner } : {}),
});

/**
 * One handler per method. A listing answers from the catalog; every other method finds what it
 * names in the catalog and then goes through the pipeline (`pipeline/run.ts`, steps by method in
 * `pipeline/method-steps.ts`), which alone sends requests upstream.
 */
const METHODS: { readonly [M in ClientMethod]: Handler<M> } = {
  'tools/list': async ({ registry }) => ({
    tools: [...registry.exposedTools.values()].map((e) => e.presented),
  }),
  'prompts/list': async ({ registry }) => ({
    prompts: [...registry.exposedPrompts.values()].map((e) => e.presented),
  }),
  'resources/list': async ({ registry }) => ({ resources: registry.resources.listResources() }),
  'resources/templates/list': async ({ registry }) => ({
    resourceTemplates: registry.resources.listTemplates(),
  }),

  // A call's refusal is an error result that says why; only an unknown name is thrown.
  'tools/call': async (deps, { name, arguments: args }, context) => {
    const found = lookup(deps.registry.exposedTools, name, 'tool');
    if (!found.pass) throw new CallRefused('UNKNOWN_TOOL', notListed(deps, 'tool', name, found.what));
    const { entry } = found;
    return runForward(deps.pipeline(), toolCall(deps, entry, args, context)).catch((error: unknown) =>
      localFailureResult(error, name),
    );
  },

  // `prompts/get` has no error result: every refusal is thrown as a `CallRefused` that says why.
  'prompts/get': async (deps, { name, arguments: args }, context) => {
    const found = lookup(deps.registry.exposedPrompts, name, 'prompt');
    if (!found.pass) throw new CallRefused('UNKNOWN_PROMPT', notListed(deps, 'prompt', name, found.what));
    const { entry } = found;
    const reply = await runForward(deps.pipeline(), {
      method: 'prompts/get',
      entry,
      args,
      caller: context.caller,
      ...deps.registry.target(entry.server, context.protocolVersion),
      protocolVersion: context.protocolVersion,
      ...forwarding(context),
    }).catch((error: unknown) => localFailureResult(error, name));
    const refused = refusedText(reply);
    if (refused !== undefined) throw new CallRefused('REFUSED', refused);
    return reply as PromptResult;
  },

  'resources/read': (deps, { uri }, context) =>
    readThrough(
      deps.registry.resources,
      { pipeline: deps.pipeline(), target: (s) => deps.registry.target(s, context.protocolVersion) },
      {
        uri,
        caller: context.caller,
        protocolVersion: context.protocolVersion,
        call: forwarding(context),
      },
    ),

  // Counted over sessions and decided through the pipeline (see `Subscriptions`).
  'resources/subscribe': (deps, { uri }, context) =>
    deps.subscriptions.set(uri, true, context.caller).catch(refusedLocally('the subscription')),
  'resources/unsubscribe': (deps, { uri }, context) =>
    deps.subscriptions.set(uri, false, context.caller).catch(refusedLocally('the unsubscription')),

  // For an exposed prompt or template only (see `completePrompt`); nobody is asked.
  'completion/complete': (deps, params, context) =>
    completePrompt(
      deps.registry.exposedPrompts,
      params,
      {
        pipeline: deps.pipeline(),
        caller: context.caller,
        target: (s) => deps.registry.target(s, context.protocolVersion),
        template: (uri) => deps.registry.resources.template(uri),
      },
      context.signal ? { signal: context.signal } : {},
    ).catch(refusedLocally('the completion')),

  /**
   * Forwarded through the pipeline to every running server that offers logging: each server's
   * whole-server rules decide whether it is told (an `ask` rule does not: nobody is asked about a
   * log level), with a decision and a result entry. The level is shared: the servers are shared
   * by every client session, so the last level set wins. A server not told is named on stderr.
   */
  'logging/setLevel': async (deps, { level }, context) => {
    // A server held at first sight is not told: nothing of a client reaches it either, and its
    // log messages are dropped whatever level it logs at.
    const targets = deps.registry
      .running()
      .filter(
        ([name, upstream]) =>
          upstream.capabilities().logging && deps.registry.catalogOf(name)?.awaitingReview !== true,
      );
    const pipeline = deps.pipeline();
    await Promise.all(
      targets.map(([name, upstream]) =>
        forwardLogLevel(pipeline, { name, upstream }, level, context.caller, deps.log),
      ),
    );
    return {};
  },
};

/** Answer one client method: the one way a request of either protocol era reaches a server. */
export function dispatch<M extends ClientMethod>(
  deps: DispatchDeps,
  method: M,
  params: ClientMethods[M]['params'],
  context: DispatchContext,
): Promise<ClientMethods[M]['result']> {
  // A codec may hand over any method name it decoded: only the table's own entries answer
  // (never an inherited member such as `constructor`).
  if (!Object.hasOwn(METHODS, method))
    return Promise.reject(
      new CallRefused(
        'REFUSED',
        `ringfence: the method ${JSON.stringify(String(method))} is not served by the gateway; nothing was forwarded.`,
      ),
    );
  return (METHODS[method] as Handler<M>)(deps, params, context);
}

/** The pipeline's request for a call of `entry`, as a plain call and a task both send it. */
function toolCall(
  deps: DispatchDeps,
  entry: CatalogEntry,
  args: unknown,
  context: DispatchContext,
): ToolCallRequest {
  return {
    method: 'tools/call',
    entry,
    args,
    caller: context.caller,
    ...deps.registry.target(entry.server, context.protocolVersion),
    protocolVersion: context.protocolVersion,
    ...forwarding(context),
  };
}

/**
 * A task-augmented `tools/call` (`tasks/`): the tool is found as `tools/call` finds it, then the
 * pipeline's deciding half runs before any task exists (`pipeline/task-run.ts`), so a task reaches
 * its server through the pipeline exactly as a call does. `around` wraps the upstream work (the
 * gateway counts it as in flight to that server).
 */
export function dispatchToolTask(
  deps: DispatchDeps,
  { name, arguments: args }: ClientMethods['tools/call']['params'],
  context: DispatchContext,
  tasks: TaskRegistry,
  options: { ttlMs?: number; around: <T>(server: string, work: () => Promise<T>) => Promise<T> },
): Promise<{ task: TaskSnapshot } | { refused: CallToolResult }> {
  const found = lookup(deps.registry.exposedTools, name, 'tool');
  if (!found.pass) throw new CallRefused('UNKNOWN_TOOL', notListed(deps, 'tool', name, found.what));
  const { entry } = found;
  return startToolTask(deps.pipeline(), toolCall(deps, entry, args, context), tasks, {
    ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
    around: (work) => options.around(entry.server, work),
  }).catch((error: unknown) => ({ refused: localFailureResult(error, name) }));
}

/** Why a name is not served: withheld (with the command that would expose it) or unknown. */
export function notListed(
  deps: DispatchDeps,
  kind: 'tool' | 'prompt',
  name: string,
  unknown: string,
): string {
  return (
    withheldRefusal(deps.registry.withheld(), kind, name, deps.registry.naming) ?? `ringfence: ${unknown}`
  );
}

/**
 * For a method answered with a JSON-RPC error: an audit write that failed refuses the request, as
 * it refuses a call (`localFailureResult`: nothing was forwarded, and the fix is named).
 */
function refusedLocally(label: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof CallRefused) throw error;
    throw new CallRefused('REFUSED', refusedText(localFailureResult(error, label)) as string);
  };
}

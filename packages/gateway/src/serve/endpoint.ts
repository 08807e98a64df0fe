import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/core';
import {
  CLIENT_CAPABILITIES_META_KEY,
  LOG_LEVEL_META_KEY,
  ProtocolErrorCode,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import { WireError } from '../errors.js';
import type { DefinitionKind } from '../pins/kinds.js';
import type { Caller, CallToolResult } from '../ports/caller.js';
import type { CallProgress, ClientGrants, UpstreamInput } from '../ports/upstream.js';
import { TASKS_CAPABILITY_2025, TASKS_EXTENSION } from '../tasks/index.js';
import { checkedTraceparent } from '../traces/index.js';
import { serveTasks, toolCallAsTask, toolsForClient } from './endpoint-tasks.js';
import type { Gateway } from './gateway.js';
import { capableOf } from './input-required/answers.js';
import { withServerInstructions } from './instructions.js';
import { isLogLevel, type LogLevel, logPasses, type RelayedLog } from './log-relay.js';
import { CallRefused } from './pipeline/index.js';
import { SERVER_INFO } from './server-info.js';
import { type RequestSink, SERVER_REQUEST_TIMEOUT_MS, ServerRequestRefused } from './server-requests.js';

/**
 * A JSON-RPC error with the bare text and its code: the SDK sends the message as given (it reads
 * the number off `.code`), and a client's SDK may add its own `MCP error CODE: ` prefix once.
 */
export function rpcError(code: number, message: string, data?: unknown): WireError {
  return new WireError(code, message, data);
}

type Extra = ServerContext;

// The SDK's own schema answers a non-string prompt argument with -32603 and a schema dump, before
// any check of ours; the pipeline refuses it itself, audited, naming the argument.
const GetPromptParams = z.looseObject({ name: z.string(), arguments: z.unknown().optional() });

const INSTRUCTIONS =
  'Tools and prompts are provided by third-party MCP servers run in isolation by ringfence. Each description names the server it comes from.';

/** What the gateway tells every client, the same on every request and in both eras (clients may cache it). */
export function gatewayInstructions(gateway: Gateway): string {
  return `${gateway.options.notice ? `${gateway.options.notice}\n` : ''}${INSTRUCTIONS}`;
}

/**
 * Cacheable 2026 results are the client's alone (`private`: another agent's token may be shown
 * another list) and never reused (`ttlMs: 0`): a listing changes whenever a server's definitions
 * change, a pin is withheld or approved, or the policy changes, and the gateway cannot recall a
 * listing a client cached. 2025 answers carry no cache fields.
 */
const CACHE_HINTS = Object.fromEntries(
  [
    'tools/list',
    'prompts/list',
    'resources/list',
    'resources/templates/list',
    'resources/read',
    'server/discover',
  ].map((method) => [method, { ttlMs: 0, cacheScope: 'private' as const }]),
);

export interface EndpointOptions {
  /**
   * The protocol era this instance serves: `legacy` (2025, one session per instance, the default)
   * or `modern` (MCP 2026-07-28: one instance per request on --http, or per stdio connection).
   */
  readonly era?: 'legacy' | 'modern';
  /**
   * Whether this instance tells its client of changed lists and updated resources itself. Off
   * for --http 2026 instances, which live for one request: the HTTP entry publishes changes to
   * open `subscriptions/listen` streams instead.
   */
  readonly listChanged?: boolean;
}

/**
 * One MCP server session facing one client, backed by the shared gateway. It offers tools
 * always, and prompts, completions and logging only when some running server does. The client
 * is told when the tools or prompts change. `identity` is the calling agent (from its token).
 */
export function createEndpointServer(
  gateway: Gateway,
  identity: { agent?: string; scope?: string } = {},
  options: EndpointOptions = {},
): Server {
  const modern = options.era === 'modern';
  const offered = gateway.offered();
  const capabilities: ServerCapabilities = {
    tools: { listChanged: true },
    // Any tool may be called as a task: the gateway runs it (see serveTasks). 2025 names the
    // capability; 2026 the extension.
    ...(modern ? { extensions: { [TASKS_EXTENSION]: {} } } : { tasks: TASKS_CAPABILITY_2025 }),
    ...(offered.prompts ? { prompts: { listChanged: true } } : {}),
    ...(offered.completions && (offered.prompts || offered.resources) ? { completions: {} } : {}),
    ...(offered.logging ? { logging: {} } : {}),
    ...(offered.resources ? { resources: { listChanged: true, subscribe: offered.subscribe === true } } : {}),
  };
  const server = new Server(SERVER_INFO, {
    capabilities,
    instructions: withServerInstructions(gateway, gatewayInstructions(gateway)),
    cacheHints: CACHE_HINTS,
    // No requestState hook: a 2026 round's sealed state is opened by its handler
    // (input-required/relay.ts), which knows the call to check it against and audits a refusal.
  });

  // The version this server answered the client's `initialize` with: it decides what a result may carry.
  const protocolVersion = () => server.getNegotiatedProtocolVersion();

  // A 2026 client cannot be asked mid-call (no server-to-client requests on that revision): this
  // caller gets no `ask`; its calls, prompts and reads go through `rounds` below, whose caller
  // asks by an input_required result instead.
  const caller = (): Caller => ({
    ...identity,
    ...(modern
      ? {
          askUnavailable:
            'on MCP 2026-07-28 ringfence asks a person only about a tool call, prompt or read, from a client that declares elicitation',
        }
      : {}),
    ...(!modern && server.getClientCapabilities()?.elicitation
      ? {
          ask: async (question: string) => {
            const answer = await server.elicitInput({
              mode: 'form',
              message: question,
              requestedSchema: { type: 'object', properties: {} },
            });
            return answer.action;
          },
        }
      : {}),
  });
  // The client's cancel, and its progress token: the token goes back with each progress
  // notification; the server upstream is given another one (InFlightCalls), so it never sees or
  // names the client's.
  const forwarding = (params: { _meta?: { progressToken?: unknown } }, extra: Extra) => {
    const token = params._meta?.progressToken;
    const onProgress =
      typeof token === 'string' || typeof token === 'number'
        ? (progress: CallProgress) => {
            extra.mcpReq
              .notify({ method: 'notifications/progress', params: { ...progress, progressToken: token } })
              .catch(() => {});
          }
        : undefined;
    // A trace context is passed on only in its exact W3C form: it is the client's text, and a
    // server must not be handed anything else under that name.
    // MCP's convention is `_meta.traceparent`; on --http the W3C header is taken when it is absent.
    const traceparent =
      checkedTraceparent(extra.mcpReq._meta?.traceparent) ??
      checkedTraceparent(extra.http?.req?.headers.get('traceparent'));
    return {
      signal: extra.mcpReq.signal,
      ...(onProgress ? { onProgress } : {}),
      ...(traceparent ? { traceparent } : {}),
      clientCapabilities: declaredBy(extra),
      // Whose request it is (ports/call-owner.ts): this session, unless a 2026 round names its own.
      owner: sink,
    };
  };
  // What this client declared it can answer, as booleans (never its raw object): a 2026 client's
  // on each request (its `_meta` envelope), a 2025 client's at `initialize`.
  const declaredBy = (extra: Extra): ClientGrants => {
    const capable = modern
      ? capableOf(
          (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[CLIENT_CAPABILITIES_META_KEY],
        )
      : sink.capable;
    return { sampling: capable('sampling'), elicitation: capable('elicitation') };
  };
  /** What a forwarded request carries besides the caller: `forwarding`'s, and a 2026 round's upstream part. */
  type Forwarding = ReturnType<typeof forwarding> & { upstreamInput?: UpstreamInput };
  /** `uri`: a read's, echoed in a not-found error's data as the spec asks (SEP-2164): the client's own text. */
  const refusals = async <T>(work: () => Promise<T>, uri?: string): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof CallRefused)
        throw rpcError(
          ProtocolErrorCode.InvalidParams,
          error.message,
          error.code === 'UNKNOWN_RESOURCE' && uri !== undefined ? { uri } : undefined,
        );
      throw error;
    }
  };

  // Requests in flight per server: a server's log lines go only to the sessions waiting on it
  // (see onLog), and travel with the request that caused them (on --http, that request's stream)
  // when only one is in flight to it.
  const inFlight = new Map<string, Set<string | number>>();
  let requestLogLevel: LogLevel | undefined;
  const tracked = async <T>(
    kind: DefinitionKind,
    name: string,
    extra: Extra,
    work: () => Promise<T>,
    // A 2026 call's own sink (input-required/continuations.ts) in place of this session's.
    callSink: RequestSink = sink,
  ) => {
    if (modern) {
      const asked = (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
      requestLogLevel = typeof asked === 'string' && isLogLevel(asked) ? asked : undefined;
    }
    const target = gateway.serverOf(kind, name);
    if (!target) return work();
    const ids = inFlight.get(target) ?? new Set();
    inFlight.set(target, ids);
    ids.add(extra.mcpReq.id);
    return gateway.busyWith(target, work, callSink).finally(() => ids.delete(extra.mcpReq.id));
  };

  // This session as the destination of a server's sampling and elicitation requests: the gateway
  // uses it only while one of its requests to that server is in flight, and the request travels
  // with it (on --http, on that request's stream; never on a stream another session could read).
  const sink: RequestSink = {
    ...identity,
    capable: (kind) => {
      // MCP 2026-07-28 has no server-to-client requests: this session sink refuses a server's
      // sampling or elicitation (audited); a 2026 call's own sink (`rounds`) holds it instead.
      if (modern) return false;
      const declared = server.getClientCapabilities();
      if (kind === 'sampling') return declared?.sampling !== undefined;
      // An empty elicitation capability means form, as the spec reads it for older clients.
      const elicitation = declared?.elicitation as { form?: object; url?: object } | undefined;
      return elicitation !== undefined && (elicitation.form !== undefined || elicitation.url === undefined);
    },
    forward: async (target, method, params, signal) => {
      const related = inFlight.get(target)?.values().next().value;
      const answer = await server.request(
        { method, params } as never,
        method === 'sampling/createMessage' ? CreateMessageResultSchema : ElicitResultSchema,
        {
          signal,
          timeout: SERVER_REQUEST_TIMEOUT_MS,
          ...(related !== undefined ? { relatedRequestId: related } : {}),
        },
      );
      return answer as Record<string, unknown>;
    },
  };

  /**
   * A 2026 client's call, prompt or read, round by round (input-required/modern-call.ts): policy
   * `ask` becomes ringfence's own `input_required` question, and a 2025 server's mid-call request
   * is held for the client's next round, both under the sealed requestState of this caller.
   */
  const rounds = <R>(
    kind: 'tool' | 'prompt' | 'resource',
    method: 'tools/call' | 'prompts/get' | 'resources/read',
    target: string,
    args: unknown,
    extra: Extra,
    params: { _meta?: { progressToken?: unknown } },
    run: (caller: Caller, options: Forwarding) => Promise<R>,
    refused: (message: string) => R,
  ) => {
    const server = gateway.serverOf(kind, target);
    const envelope = extra.mcpReq.envelope as Record<string, unknown> | undefined;
    return gateway.modernCalls.serve<R>({
      // A 2025 client is asked on its session: the SDK's legacy shim turns each input_required
      // into a request on it and calls this handler again with the answers.
      ...(modern ? {} : { session: sink }),
      ctx: extra,
      principal: identity,
      call: { method, target, args: args ?? {} },
      subject: { server: server ?? 'ringfence', tool: target, ...(kind === 'tool' ? {} : { kind }) },
      config: gateway.options.servers.find((entry) => entry.name === server),
      capable: modern ? capableOf(envelope?.[CLIENT_CAPABILITIES_META_KEY]) : sink.capable,
      // A 2026 server's roots/list is answered by ringfence from its mounts, never by the client;
      // a server whose roots cannot be told has the request refused, never answered empty.
      roots: () => {
        const answer = server ? gateway.registry.target(server).upstream?.roots?.() : undefined;
        if (!answer)
          throw new ServerRequestRefused(
            'roots',
            `ringfence refused roots/list from ${server}: the server is not running, so its roots cannot be told. Try again once it runs (ringfence mcp ls)`,
          );
        return answer;
      },
      // `upstreamInput` (always present here) makes a 2026 server's input_required come back to
      // the relay, and carries what its retry sends (the client's checked answers, its state).
      run: ({ ask, sink: callSink, signal, upstream }) =>
        tracked(
          kind,
          target,
          extra,
          () =>
            run(
              { ...caller(), ...(ask ? { ask } : {}) },
              { ...forwarding(params, extra), signal, upstreamInput: upstream, owner: callSink },
            ),
          callSink,
        ),
      refused,
    });
  };
  /**
   * Whether a request goes round by round: always from a 2026 client; from a 2025 client when it
   * names a 2026 server's definition (its input_required is then asked on the session).
   */
  const inRounds = async (kind: 'tool' | 'prompt' | 'resource', name: string): Promise<boolean> => {
    if (modern) return true;
    const target = gateway.serverOf(kind, name);
    if (target === undefined) return false;
    // The side that serves this client's era: a remote 2026 server's 2025 session, where it
    // offers one, is opened (or found not offered) first.
    const side = gateway.registry.target(target, protocolVersion()).upstream;
    return (side?.settledEra ? await side.settledEra() : side?.era?.()) === 'modern';
  };
  const refusedResult = (message: string): CallToolResult => ({
    content: [{ type: 'text', text: message }],
    isError: true,
  });
  const refusedError = (message: string): never => {
    throw rpcError(ProtocolErrorCode.InvalidRequest, message);
  };

  const tasks = { server, gateway, owner: identity, modern };
  // The listing as this client may call it: `execution.taskSupport` shown as its task support allows.
  server.setRequestHandler('tools/list', async () => ({ tools: toolsForClient(tasks) as never[] }));
  serveTasks(tasks);
  server.setRequestHandler('tools/call', async (request, extra) => {
    // A task (when the client asked for one, or on 2026 when the gateway runs it as one) is
    // decided by the same pipeline, ask included, before any task exists; otherwise the dispatcher.
    const call = async (who: Caller, options: Forwarding) => {
      const created = await toolCallAsTask(tasks, request.params, who, protocolVersion(), {
        sink,
        signal: options.signal ?? extra.mcpReq.signal,
      });
      if (created) return created as CallToolResult;
      return gateway.dispatch('tools/call', request.params, {
        caller: who,
        protocolVersion: protocolVersion(),
        ...options,
      });
    };
    if (await inRounds('tool', request.params.name)) {
      const { name, arguments: args } = request.params;
      return (await refusals(() =>
        rounds('tool', 'tools/call', name, args, extra, request.params, call, refusedResult),
      )) as never;
    }
    const result = await refusals(() =>
      tracked('tool', request.params.name, extra, () => call(caller(), forwarding(request.params, extra))),
    );
    // The pipeline's result, already checked and sanitised; typed looser than the SDK's.
    return result as never;
  });

  if (capabilities.prompts) {
    server.setRequestHandler('prompts/list', async () => {
      const { prompts } = await gateway.dispatch('prompts/list', {}, { caller: identity });
      return { prompts: prompts as never[] };
    });
    server.setRequestHandler('prompts/get', { params: GetPromptParams }, async (params, extra) =>
      (await inRounds('prompt', params.name))
        ? refusals(
            async () =>
              (await rounds(
                'prompt',
                'prompts/get',
                params.name,
                params.arguments,
                extra,
                params as { _meta?: { progressToken?: unknown } },
                (who, options) =>
                  gateway.dispatch('prompts/get', params, {
                    caller: who,
                    protocolVersion: protocolVersion(),
                    ...options,
                  }),
                refusedError,
              )) as never,
          )
        : refusals(() =>
            tracked('prompt', params.name, extra, async () => {
              const result = await gateway.dispatch('prompts/get', params, {
                caller: caller(),
                protocolVersion: protocolVersion(),
                ...forwarding(params as { _meta?: { progressToken?: unknown } }, extra),
              });
              return result as never;
            }),
          ),
    );
  }
  if (capabilities.completions) {
    // Decided as a call is (the prompt's rules, or the template's server's), never asked.
    server.setRequestHandler('completion/complete', async (request, extra) =>
      refusals(
        async () =>
          (await gateway.dispatch('completion/complete', request.params as Record<string, unknown>, {
            caller: identity,
            protocolVersion: protocolVersion(),
            signal: extra.mcpReq.signal,
          })) as never,
      ),
    );
  }

  // --- resources (issue 12) ---
  // The URIs this session subscribed to, as clients are shown them: updates go to these only.
  const subscribed = new Set<string>();
  if (capabilities.resources) {
    server.setRequestHandler('resources/list', async () => {
      const { resources } = await gateway.dispatch('resources/list', {}, { caller: identity });
      return { resources: resources as never[] };
    });
    server.setRequestHandler('resources/templates/list', async () => {
      const listed = await gateway.dispatch('resources/templates/list', {}, { caller: identity });
      return { resourceTemplates: listed.resourceTemplates as never[] };
    });
    server.setRequestHandler('resources/read', async (request, extra) =>
      (await inRounds('resource', request.params.uri))
        ? refusals(
            async () =>
              (await rounds(
                'resource',
                'resources/read',
                request.params.uri,
                {},
                extra,
                request.params as { _meta?: { progressToken?: unknown } },
                (who, options) =>
                  gateway.dispatch('resources/read', request.params, {
                    caller: who,
                    protocolVersion: protocolVersion(),
                    ...options,
                  }),
                refusedError,
              )) as never,
            request.params.uri,
          )
        : refusals(
            () =>
              tracked('resource', request.params.uri, extra, async () => {
                const result = await gateway.dispatch('resources/read', request.params, {
                  caller: caller(),
                  protocolVersion: protocolVersion(),
                  ...forwarding(request.params as { _meta?: { progressToken?: unknown } }, extra),
                });
                return result as never;
              }),
            request.params.uri,
          ),
    );
    if (capabilities.resources.subscribe) {
      // Each subscribe is decided as a read of that URI; an unsubscribe only ever names a URI this
      // session subscribed to (so nothing unsubscribes another session's), and the server hears
      // of it, decided too, when the last session leaves.
      server.setRequestHandler('resources/subscribe', async (request) =>
        refusals(async () => {
          const known = gateway.resources.shown(request.params.uri);
          if (known !== undefined && subscribed.has(known)) return {};
          const shown = await gateway.dispatch('resources/subscribe', request.params, { caller: caller() });
          // A second subscribe to the same URI that ran at the same time: counted once.
          if (subscribed.has(shown))
            await gateway.dispatch('resources/unsubscribe', { uri: shown }, { caller: identity });
          subscribed.add(shown);
          return {};
        }),
      );
      server.setRequestHandler('resources/unsubscribe', async (request) =>
        refusals(async () => {
          const named = gateway.resources.named(request.params.uri);
          const known = named ? gateway.resources.clientUri(named.server, named.uri) : undefined;
          if (known !== undefined && subscribed.delete(known))
            await gateway.dispatch('resources/unsubscribe', { uri: known }, { caller: identity });
          return {};
        }),
      );
    }
  }
  const onResources = () => {
    if (capabilities.resources) server.sendResourceListChanged().catch(() => {});
  };
  const onResourceUpdated = (uri: string) => {
    if (subscribed.has(uri)) server.sendResourceUpdated({ uri }).catch(() => {});
  };
  const listChanged = options.listChanged ?? true;
  if (listChanged) {
    gateway.on('resourcesChanged', onResources);
    gateway.on('resourceUpdated', onResourceUpdated);
  }
  const endResources = () => {
    gateway.off('resourcesChanged', onResources);
    gateway.off('resourceUpdated', onResourceUpdated);
    for (const uri of subscribed)
      gateway.dispatch('resources/unsubscribe', { uri }, { caller: identity }).catch(() => {});
    subscribed.clear();
  };
  // --- end resources ---

  let threshold: LogLevel | undefined;
  if (capabilities.logging) {
    // Replaces the SDK's own handler: the level is this session's filter, and is forwarded to
    // each server its rules let it reach (decided and audited per server).
    server.setRequestHandler('logging/setLevel', async (request) => {
      const { level } = request.params;
      if (!isLogLevel(level))
        throw rpcError(ProtocolErrorCode.InvalidParams, `ringfence: unknown log level ${level}`);
      threshold = level;
      await gateway.dispatch('logging/setLevel', { level }, { caller: identity });
      return {};
    });
  }

  const onTools = () => {
    server.sendToolListChanged().catch(() => {});
  };
  const onPrompts = () => {
    if (capabilities.prompts) server.sendPromptListChanged().catch(() => {});
  };
  const onLog = (log: RelayedLog) => {
    // A 2026 client has no logging/setLevel: it names a level on each request that wants logs.
    const level = modern ? requestLogLevel : threshold;
    if (!capabilities.logging || (modern && level === undefined) || !logPasses(log.params.level, level))
      return;
    const ids = inFlight.get(log.server);
    // While some session waits on this server, its log lines may be about that session's
    // arguments: they go to the sessions waiting on it, not to every agent connected over --http.
    // A line is not tied to a request: while another session (perhaps another agent) also waits
    // on this server, it may be about that session's arguments, so it goes to nobody.
    if ((ids?.size ?? 0) < gateway.busyCount(log.server)) return;
    const only = ids?.size === 1 ? [...ids][0] : undefined;
    // On 2026 a log line travels only with the request that asked for it.
    if (modern && only === undefined) return;
    server
      .notification(
        { method: 'notifications/message', params: log.params },
        only !== undefined ? { relatedRequestId: only } : undefined,
      )
      .catch(() => {});
  };
  if (listChanged) {
    gateway.on('catalogChanged', onTools);
    gateway.on('promptsChanged', onPrompts);
  }
  gateway.on('log', onLog);
  server.onclose = () => {
    endResources();
    gateway.off('catalogChanged', onTools);
    gateway.off('promptsChanged', onPrompts);
    gateway.off('log', onLog);
  };
  return server;
}

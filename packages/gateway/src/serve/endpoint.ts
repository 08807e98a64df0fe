import { CreateMessageResultSchema, ElicitResultSchema } from '@modelcontextprotocol/core';
import {
  LOG_LEVEL_META_KEY,
  ProtocolError,
  ProtocolErrorCode,
  Server,
  type ServerCapabilities,
  type ServerContext,
} from '@modelcontextprotocol/server';
import { z } from 'zod';
import type { DefinitionKind } from '../pins/kinds.js';
import { AskDeferred, type Caller } from '../ports/caller.js';
import type { CallProgress } from '../ports/upstream.js';
import { TASKS_CAPABILITY_2025, TASKS_EXTENSION } from '../tasks/index.js';
import { callDigest, modernAsk, questionFor, verifyAskState } from './ask-modern.js';
import { serveTasks, toolCallAsTask, toolsForClient } from './endpoint-tasks.js';
import type { Gateway } from './gateway.js';
import { isLogLevel, type LogLevel, logPasses, type RelayedLog } from './log-relay.js';
import { CallRefused } from './pipeline/index.js';
import { SERVER_INFO } from './server-info.js';
import { type RequestSink, SERVER_REQUEST_TIMEOUT_MS } from './server-requests.js';

/**
 * A JSON-RPC error with the bare text and its code: the SDK sends the message as given, and a
 * client's SDK may add its own `MCP error CODE: ` prefix once.
 */
export function rpcError(code: number, message: string): Error {
  return new ProtocolError(code, message);
}

type Extra = ServerContext;

// The SDK's own schema answers a non-string prompt argument with -32603 and a schema dump, before
// any check of ours; the pipeline refuses it itself, audited, naming the argument.
const GetPromptParams = z.looseObject({ name: z.string(), arguments: z.unknown().optional() });

/** W3C trace context, version 00 form (lower-case hex; all-zero ids are invalid by that spec). */
const TRACEPARENT = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

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
    instructions: gatewayInstructions(gateway),
    cacheHints: CACHE_HINTS,
    // The sealed state of a 2026 ask is checked before any handler runs (ask-modern.ts).
    ...(modern ? { requestState: { verify: verifyAskState } } : {}),
  });

  // The version this server answered the client's `initialize` with: it decides what a result may carry.
  const protocolVersion = () => server.getNegotiatedProtocolVersion();

  // A 2026 client cannot be asked mid-call (no server-to-client requests on that revision): a
  // tool call asks in a second round instead (tools/call below, ask-modern.ts); elsewhere it gets
  // no `ask`, so a rule that needs a person refuses the request, audited, saying so.
  const caller = (): Caller => ({
    ...identity,
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
    const trace = extra.mcpReq._meta?.traceparent;
    const traceparent = typeof trace === 'string' && TRACEPARENT.test(trace) ? trace : undefined;
    return {
      signal: extra.mcpReq.signal,
      ...(onProgress ? { onProgress } : {}),
      ...(traceparent ? { traceparent } : {}),
    };
  };
  const refusals = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof CallRefused) throw rpcError(ProtocolErrorCode.InvalidParams, error.message);
      throw error;
    }
  };

  // Requests in flight per server: a server's log lines go only to the sessions waiting on it
  // (see onLog), and travel with the request that caused them (on --http, that request's stream)
  // when only one is in flight to it.
  const inFlight = new Map<string, Set<string | number>>();
  let requestLogLevel: LogLevel | undefined;
  const tracked = async <T>(kind: DefinitionKind, name: string, extra: Extra, work: () => Promise<T>) => {
    if (modern) {
      const asked = (extra.mcpReq.envelope as Record<string, unknown> | undefined)?.[LOG_LEVEL_META_KEY];
      requestLogLevel = typeof asked === 'string' && isLogLevel(asked) ? asked : undefined;
    }
    const target = gateway.serverOf(kind, name);
    if (!target) return work();
    const ids = inFlight.get(target) ?? new Set();
    inFlight.set(target, ids);
    ids.add(extra.mcpReq.id);
    return gateway.busyWith(target, work, sink).finally(() => ids.delete(extra.mcpReq.id));
  };

  // This session as the destination of a server's sampling and elicitation requests: the gateway
  // uses it only while one of its requests to that server is in flight, and the request travels
  // with it (on --http, on that request's stream; never on a stream another session could read).
  const sink: RequestSink = {
    ...identity,
    capable: (kind) => {
      // MCP 2026-07-28 has no server-to-client requests: a server's sampling or elicitation is
      // refused (and audited) as for a client without the capability.
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

  const tasks = { server, gateway, owner: identity, modern };
  server.setRequestHandler('tools/list', async () => ({ tools: toolsForClient(tasks) as never[] }));
  serveTasks(tasks);
  server.setRequestHandler('tools/call', async (request, extra) => {
    // A 2026 client that can be asked is asked in a second round: see ask-modern.ts.
    const call = modern ? callDigest(request.params.name, request.params.arguments) : '';
    const asking = modern && server.getClientCapabilities()?.elicitation !== undefined;
    const who = () => (asking ? { ...identity, ask: modernAsk(extra, call) } : caller());
    try {
      // A task (when the client asked for one, or on 2026 when the gateway runs it as one):
      // decided by the same pipeline, ask included, before any task exists.
      const created = await refusals(() =>
        toolCallAsTask(tasks, request.params, who(), protocolVersion(), {
          sink,
          signal: extra.mcpReq.signal,
        }),
      );
      if (created) return created as never;
      const result = await refusals(() =>
        tracked('tool', request.params.name, extra, () =>
          gateway.callTool(
            request.params.name,
            request.params.arguments,
            who(),
            protocolVersion(),
            forwarding(request.params, extra),
          ),
        ),
      );
      // The pipeline's result, already checked and sanitised; typed looser than the SDK's.
      return result as never;
    } catch (error) {
      if (asking && error instanceof AskDeferred) return questionFor(extra, call, error.question);
      throw error;
    }
  });

  if (capabilities.prompts) {
    server.setRequestHandler('prompts/list', async () => ({
      prompts: gateway.listPrompts() as never[],
    }));
    server.setRequestHandler('prompts/get', { params: GetPromptParams }, async (params, extra) =>
      refusals(() =>
        tracked('prompt', params.name, extra, async () => {
          const result = await gateway.getPrompt(
            params.name,
            params.arguments,
            caller(),
            protocolVersion(),
            forwarding(params as { _meta?: { progressToken?: unknown } }, extra),
          );
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
          (await gateway.complete(request.params as Record<string, unknown>, identity, {
            signal: extra.mcpReq.signal,
          })) as never,
      ),
    );
  }

  // --- resources (issue 12) ---
  // The URIs this session subscribed to, as clients are shown them: updates go to these only.
  const subscribed = new Set<string>();
  if (capabilities.resources) {
    server.setRequestHandler('resources/list', async () => ({
      resources: gateway.resources.listResources() as never[],
    }));
    server.setRequestHandler('resources/templates/list', async () => ({
      resourceTemplates: gateway.resources.listTemplates() as never[],
    }));
    server.setRequestHandler('resources/read', async (request, extra) =>
      refusals(() =>
        tracked('resource', request.params.uri, extra, async () => {
          const result = await gateway.readResource(
            request.params.uri,
            caller(),
            protocolVersion(),
            forwarding(request.params as { _meta?: { progressToken?: unknown } }, extra),
          );
          return result as never;
        }),
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
          const shown = await gateway.subscribe(request.params.uri, true, caller());
          // A second subscribe to the same URI that ran at the same time: counted once.
          if (subscribed.has(shown)) await gateway.subscribe(shown, false, identity);
          subscribed.add(shown);
          return {};
        }),
      );
      server.setRequestHandler('resources/unsubscribe', async (request) =>
        refusals(async () => {
          const named = gateway.resources.named(request.params.uri);
          const known = named ? gateway.resources.clientUri(named.server, named.uri) : undefined;
          if (known !== undefined && subscribed.delete(known))
            await gateway.subscribe(known, false, identity);
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
    for (const uri of subscribed) gateway.subscribe(uri, false, identity).catch(() => {});
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
      await gateway.setLoggingLevel(level, identity);
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
    if (!ids?.size && gateway.isBusy(log.server)) return;
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

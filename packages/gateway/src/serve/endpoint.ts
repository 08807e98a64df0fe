import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  CompleteRequestSchema,
  CreateMessageResultSchema,
  ElicitResultSchema,
  ErrorCode,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
  ListPromptsRequestSchema,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  ListToolsRequestSchema,
  ReadResourceRequestSchema,
  type ServerCapabilities,
  SetLevelRequestSchema,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { GatewayError, WireError } from '../errors.js';
import type { DefinitionKind } from '../pins/kinds.js';
import type { Caller } from '../ports/caller.js';
import type { CallProgress } from '../ports/upstream.js';
import { TASKS_CAPABILITY_2025 } from '../tasks/index.js';
import { serveTasks2025, toolCallAsTask, toolsForClient } from './endpoint-tasks.js';
import type { Gateway } from './gateway.js';
import { isLogLevel, type LogLevel, logPasses, type RelayedLog } from './log-relay.js';
import { CallRefused } from './pipeline/index.js';
import { SERVER_INFO } from './server-info.js';
import { type RequestSink, SERVER_REQUEST_TIMEOUT_MS } from './server-requests.js';

/**
 * Keeps the protocol version this server answered the client's `initialize` with: it decides
 * what a tool result may carry. The SDK's Server (1.x) chooses that version in its private
 * `_oninitialize` and keeps no record of it, so its answer is wrapped here; if a later SDK moves
 * it, this throws at construction (and the endpoint tests fail) rather than guess a version.
 */
function negotiatedVersion(server: Server): () => string | undefined {
  const answer = (
    server as unknown as { _oninitialize?: (r: InitializeRequest) => Promise<InitializeResult> }
  )._oninitialize;
  if (typeof answer !== 'function') {
    throw new GatewayError(
      'SDK_CHANGED',
      'ringfence: this MCP SDK no longer answers initialize where ringfence reads the negotiated version; the gateway cannot tell what results a client may receive.',
    );
  }
  let version: string | undefined;
  server.setRequestHandler(InitializeRequestSchema, async (request) => {
    const result = await answer.call(server, request);
    version = result.protocolVersion;
    return result;
  });
  return () => version;
}

/**
 * A JSON-RPC error as the SDK sends it: the SDK's McpError puts "MCP error CODE: " into its own
 * message, and a client's SDK adds that prefix again, so a refusal is thrown with the bare text
 * and its code; the client reads `MCP error -32602: ringfence: …` once.
 */
export function rpcError(code: number, message: string): WireError {
  return new WireError(code, message);
}

type Extra = RequestHandlerExtra<never, never>;

// The SDK's own schema answers a non-string prompt argument with -32603 and a schema dump, before
// any check of ours; the pipeline refuses it itself, audited, naming the argument.
const GetPromptRequest = z.object({
  method: z.literal('prompts/get'),
  params: z.looseObject({ name: z.string(), arguments: z.unknown().optional() }),
});

const INSTRUCTIONS =
  'Tools and prompts are provided by third-party MCP servers run in isolation by ringfence. Each description names the server it comes from.';

/**
 * One MCP server session facing one client, backed by the shared gateway. It offers tools
 * always, and prompts, completions and logging only when some running server does. The client
 * is told when the tools or prompts change. `identity` is the calling agent (from its token).
 */
export function createEndpointServer(
  gateway: Gateway,
  identity: { agent?: string; scope?: string } = {},
): Server {
  const offered = gateway.offered();
  const capabilities: ServerCapabilities = {
    tools: { listChanged: true },
    // Any tool may be called as a task: the gateway runs it (see serveTasks2025).
    tasks: TASKS_CAPABILITY_2025,
    ...(offered.prompts ? { prompts: { listChanged: true } } : {}),
    ...(offered.completions && (offered.prompts || offered.resources) ? { completions: {} } : {}),
    ...(offered.logging ? { logging: {} } : {}),
    ...(offered.resources ? { resources: { listChanged: true, subscribe: offered.subscribe === true } } : {}),
  };
  const server = new Server(SERVER_INFO, {
    capabilities,
    instructions: `${gateway.options.notice ? `${gateway.options.notice}\n` : ''}${INSTRUCTIONS}`,
  });

  const protocolVersion = negotiatedVersion(server);

  const caller = (): Caller => ({
    ...identity,
    ...(server.getClientCapabilities()?.elicitation
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
            extra
              .sendNotification({
                method: 'notifications/progress',
                params: { ...progress, progressToken: token },
              } as never)
              .catch(() => {});
          }
        : undefined;
    return { signal: extra.signal, ...(onProgress ? { onProgress } : {}) };
  };
  const refusals = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      if (error instanceof CallRefused) throw rpcError(ErrorCode.InvalidParams, error.message);
      throw error;
    }
  };

  // Requests in flight per server: a server's log lines go only to the sessions waiting on it
  // (see onLog), and travel with the request that caused them (on --http, that request's stream)
  // when only one is in flight to it.
  const inFlight = new Map<string, Set<string | number>>();
  const tracked = async <T>(kind: DefinitionKind, name: string, extra: Extra, work: () => Promise<T>) => {
    const target = gateway.serverOf(kind, name);
    if (!target) return work();
    const ids = inFlight.get(target) ?? new Set();
    inFlight.set(target, ids);
    ids.add(extra.requestId);
    return gateway.busyWith(target, work, sink).finally(() => ids.delete(extra.requestId));
  };

  // This session as the destination of a server's sampling and elicitation requests: the gateway
  // uses it only while one of its requests to that server is in flight, and the request travels
  // with it (on --http, on that request's stream; never on a stream another session could read).
  const sink: RequestSink = {
    ...identity,
    capable: (kind) => {
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

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: toolsForClient(gateway, server) as never[],
  }));
  serveTasks2025(server, gateway, identity);
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) =>
    refusals(async () => {
      const created = await toolCallAsTask(gateway, request.params, caller(), protocolVersion(), {
        sink,
        signal: (extra as Extra).signal,
      });
      if (created) return created as never;
      return tracked('tool', request.params.name, extra as Extra, () =>
        gateway.callTool(
          request.params.name,
          request.params.arguments,
          caller(),
          protocolVersion(),
          forwarding(request.params, extra as Extra),
        ),
      );
    }),
  );

  if (capabilities.prompts) {
    server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: gateway.listPrompts() as never[],
    }));
    server.setRequestHandler(GetPromptRequest, async (request, extra) =>
      refusals(() =>
        tracked('prompt', request.params.name, extra as Extra, async () => {
          const result = await gateway.getPrompt(
            request.params.name,
            request.params.arguments,
            caller(),
            protocolVersion(),
            forwarding(request.params as { _meta?: { progressToken?: unknown } }, extra as Extra),
          );
          return result as never;
        }),
      ),
    );
  }
  if (capabilities.completions) {
    // Decided as a call is (the prompt's rules, or the template's server's), never asked.
    server.setRequestHandler(CompleteRequestSchema, async (request, extra) =>
      refusals(
        async () =>
          (await gateway.complete(request.params as Record<string, unknown>, identity, {
            signal: (extra as Extra).signal,
          })) as never,
      ),
    );
  }

  // --- resources (issue 12) ---
  // The URIs this session subscribed to, as clients are shown them: updates go to these only.
  const subscribed = new Set<string>();
  if (capabilities.resources) {
    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: gateway.resources.listResources() as never[],
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: gateway.resources.listTemplates() as never[],
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) =>
      refusals(() =>
        tracked('resource', request.params.uri, extra as Extra, async () => {
          const result = await gateway.readResource(
            request.params.uri,
            caller(),
            protocolVersion(),
            forwarding(request.params as { _meta?: { progressToken?: unknown } }, extra as Extra),
          );
          return result as never;
        }),
      ),
    );
    if (capabilities.resources.subscribe) {
      // Each subscribe is decided as a read of that URI; an unsubscribe only ever names a URI this
      // session subscribed to (so nothing unsubscribes another session's), and the server hears
      // of it, decided too, when the last session leaves.
      server.setRequestHandler(SubscribeRequestSchema, async (request) =>
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
      server.setRequestHandler(UnsubscribeRequestSchema, async (request) =>
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
  gateway.on('resourcesChanged', onResources);
  gateway.on('resourceUpdated', onResourceUpdated);
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
    server.setRequestHandler(SetLevelRequestSchema, async (request) => {
      const { level } = request.params;
      if (!isLogLevel(level))
        throw rpcError(ErrorCode.InvalidParams, `ringfence: unknown log level ${level}`);
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
    if (!capabilities.logging || !logPasses(log.params.level, threshold)) return;
    const ids = inFlight.get(log.server);
    // While some session waits on this server, its log lines may be about that session's
    // arguments: they go to the sessions waiting on it, not to every agent connected over --http.
    if (!ids?.size && gateway.isBusy(log.server)) return;
    const only = ids?.size === 1 ? [...ids][0] : undefined;
    server
      .notification(
        { method: 'notifications/message', params: log.params },
        only !== undefined ? { relatedRequestId: only } : undefined,
      )
      .catch(() => {});
  };
  gateway.on('catalogChanged', onTools);
  gateway.on('promptsChanged', onPrompts);
  gateway.on('log', onLog);
  server.onclose = () => {
    endResources();
    gateway.off('catalogChanged', onTools);
    gateway.off('promptsChanged', onPrompts);
    gateway.off('log', onLog);
  };
  return server;
}

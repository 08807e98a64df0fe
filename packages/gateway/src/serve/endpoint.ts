import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  type InitializeRequest,
  InitializeRequestSchema,
  type InitializeResult,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../ports/caller.js';
import type { CallProgress } from '../ports/upstream.js';
import type { Gateway } from './gateway.js';
import { CallRefused } from './pipeline/index.js';
import { SERVER_INFO } from './server-info.js';

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
    throw new Error(
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
 * One MCP server session facing one client, backed by the shared gateway. The client is told
 * when the catalog changes. `identity` is the calling agent (from its token), if any.
 */
export function createEndpointServer(
  gateway: Gateway,
  identity: { agent?: string; scope?: string } = {},
): Server {
  const server = new Server(SERVER_INFO, {
    capabilities: { tools: { listChanged: true } },
    instructions:
      'Tools are provided by third-party MCP servers run in isolation by ringfence. Each tool description names the server it comes from.',
  });

  const protocolVersion = negotiatedVersion(server);

  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: gateway.listTools() as never[] }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const caller: Caller = {
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
    };
    // The client's own token goes back with each progress notification; the server upstream is
    // given another one (InFlightCalls), so it never sees or names the client's.
    const token = request.params._meta?.progressToken;
    const onProgress =
      token === undefined
        ? undefined
        : (progress: CallProgress) => {
            extra
              .sendNotification({
                method: 'notifications/progress',
                params: { ...progress, progressToken: token },
              })
              .catch(() => {});
          };
    try {
      return await gateway.callTool(
        request.params.name,
        request.params.arguments,
        caller,
        protocolVersion(),
        { signal: extra.signal, ...(onProgress ? { onProgress } : {}) },
      );
    } catch (error) {
      if (error instanceof CallRefused) throw new McpError(ErrorCode.InvalidParams, error.message);
      throw error;
    }
  });

  const onChange = () => {
    server.sendToolListChanged().catch(() => {});
  };
  gateway.on('catalogChanged', onChange);
  server.onclose = () => gateway.off('catalogChanged', onChange);
  return server;
}

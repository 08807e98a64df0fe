import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
} from '@modelcontextprotocol/sdk/types.js';
import type { Caller } from '../ports/caller.js';
import type { CallProgress } from '../ports/upstream.js';
import type { Gateway } from './gateway.js';
import { CallRefused } from './pipeline/index.js';
import { SERVER_INFO } from './server-info.js';

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
      return await gateway.callTool(request.params.name, request.params.arguments, caller, {
        signal: extra.signal,
        ...(onProgress ? { onProgress } : {}),
      });
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

// A remote MCP server on loopback behind a bearer check, as an OAuth-protected server answers
// (MCP authorization): 401 with WWW-Authenticate for a missing or unknown token, 403
// insufficient_scope for a tool the token's scope does not cover. SDK v1, stateless (a server
// and transport per request), JSON answers. It records every request's Authorization header.
import { createServer, type IncomingMessage, type Server as HttpServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

export interface ProtectedMcp {
  readonly url: string;
  readonly origin: string;
  /** Token → its scopes; a token not here is refused with 401. */
  readonly tokens: Map<string, string[]>;
  /** Each request's Authorization header (undefined: none), in order. */
  readonly seen: (string | undefined)[];
  /** The same, of POST requests only (the session's GET stream opens at its own pace). */
  readonly posts: (string | undefined)[];
  /** Answer every request with this instead (a redirect, say). */
  override: ((req: IncomingMessage, res: ServerResponse) => void) | undefined;
  close(): Promise<void>;
}

const TOOLS = [
  { name: 'read', description: 'reads', inputSchema: { type: 'object' as const, properties: {} } },
  { name: 'write', description: 'writes (needs scope write)', inputSchema: { type: 'object' as const, properties: {} } },
];

async function readJson(req: IncomingMessage): Promise<unknown> {
  let body = '';
  for await (const chunk of req) body += chunk;
  return body ? JSON.parse(body) : undefined;
}

export async function protectedMcp(): Promise<ProtectedMcp> {
  const state = {
    tokens: new Map<string, string[]>(),
    seen: [] as (string | undefined)[],
    posts: [] as (string | undefined)[],
    override: undefined as ProtectedMcp['override'],
  };
  let origin = '';
  const http: HttpServer = createServer(async (req, res) => {
    state.seen.push(req.headers.authorization);
    if (req.method === 'POST') state.posts.push(req.headers.authorization);
    if (state.override) return state.override(req, res);
    const metadata = `${origin}/.well-known/oauth-protected-resource/mcp`;
    const token = req.headers.authorization?.startsWith('Bearer ') ? req.headers.authorization.slice(7) : undefined;
    const scopes = token === undefined ? undefined : state.tokens.get(token);
    if (!scopes) {
      res.writeHead(401, {
        'www-authenticate': `Bearer resource_metadata="${metadata}"${token ? ', error="invalid_token"' : ''}`,
      });
      return res.end();
    }
    if (req.method !== 'POST') {
      res.writeHead(405, { allow: 'POST' });
      return res.end();
    }
    const body = (await readJson(req)) as { method?: string; params?: { name?: string } };
    if (body?.method === 'tools/call' && body.params?.name === 'write' && !scopes.includes('write')) {
      res.writeHead(403, {
        'www-authenticate': `Bearer error="insufficient_scope", scope="write", resource_metadata="${metadata}"`,
      });
      return res.end();
    }
    const server = new Server({ name: 'protected', version: '1' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: TOOLS }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => ({
      content: [{ type: 'text', text: `${request.params.name} done` }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
    await server.connect(transport);
    res.on('close', () => void server.close());
    await transport.handleRequest(req, res, body);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const { port } = http.address() as AddressInfo;
  origin = `http://127.0.0.1:${port}`;
  return Object.assign(state, {
    url: `${origin}/mcp`,
    origin,
    close: async () => {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
    },
  }) as ProtectedMcp;
}

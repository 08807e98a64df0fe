import { createServer, type IncomingHttpHeaders, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler, fromJsonSchema, McpServer, Server } from '@modelcontextprotocol/server';

/**
 * A 2026-07-28-only MCP server over streamable HTTP for the upstream tests: the v2 SDK's
 * `createMcpHandler` (legacy requests refused), behind a few lines of node:http that record what
 * reached it. Its one tool `echo` declares `x-mcp-header: Region` on `region`; `wait` answers only
 * when cancelled (and records that);.
 */
export interface Seen {
  readonly method: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: unknown;
}

export const ECHO_SCHEMA = {
  type: 'object',
  properties: { region: { type: 'string', 'x-mcp-header': 'Region' }, text: { type: 'string' } },
};

export async function modernServer() {
  const seen: Seen[] = [];
  const cancelled: string[] = [];
  let tools = [{ name: 'echo', description: 'Echoes.', inputSchema: ECHO_SCHEMA }];
  const handler = createMcpHandler(
    () => {
      const server = new Server(
        { name: 'modern-fixture', version: '1.0.0' },
        {
          capabilities: { tools: { listChanged: true }, logging: {}, resources: { subscribe: true } },
          instructions: 'modern instructions',
        },
      );
      server.setRequestHandler('tools/list', async () => ({ tools }) as never);
      server.setRequestHandler('resources/list', async () => ({ resources: [] }));
      server.setRequestHandler('tools/call', async (request, ctx) => {
        if (request.params.name === 'wait')
          return new Promise((resolve) => {
            ctx.mcpReq.signal.addEventListener('abort', () => {
              cancelled.push('wait');
              resolve({ content: [{ type: 'text', text: 'cancelled' }] });
            });
          });
        return { content: [{ type: 'text', text: JSON.stringify(request.params.arguments ?? {}) }] };
      });
      return server;
    },
    { legacy: 'reject' },
  );
  // Under /strict: the SDK's McpServer, which checks each call's Mcp-Param-* headers against its
  // tool's x-mcp-header declarations (the low-level Server above does not), refusing with -32020.
  const strict = createMcpHandler(
    () => {
      const server = new McpServer({ name: 'strict-fixture', version: '1.0.0' });
      server.registerTool(
        'echo',
        { description: 'Echoes.', inputSchema: fromJsonSchema(ECHO_SCHEMA as never) },
        async (args) => ({ content: [{ type: 'text', text: JSON.stringify(args) }] }),
      );
      return server;
    },
    { legacy: 'reject' },
  );
  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw ? JSON.parse(raw) : undefined;
      } catch {
        body = raw;
      }
      seen.push({ method: (body as { method?: string })?.method ?? req.method!, headers: req.headers, body });
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(name, value);
      try {
        const answer = await (req.url?.startsWith('/strict') ? strict : handler).fetch(
          new Request(`http://127.0.0.1${req.url}`, {
            method: req.method!,
            headers,
            ...(raw && req.method === 'POST' ? { body: raw } : {}),
            signal: abort.signal,
          }),
        );
        res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
        if (!answer.body) return res.end();
        const reader = answer.body.getReader();
        res.on('close', () => void reader.cancel().catch(() => {}));
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          res.write(value);
        }
        res.end();
      } catch {
        res.destroy();
      }
    });
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`;
  return {
    url,
    strictUrl: url.replace(/\/mcp$/, '/strict'),
    seen,
    cancelled,
    /** Say a resource changed, on the listen streams that subscribed to it. */
    updated(uri: string) {
      handler.notify.resourceUpdated(uri);
    },
    /** Change the tool list and say so on the listen streams. */
    changeTools(next: typeof tools) {
      tools = next;
      handler.notify.toolsChanged();
    },
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await handler.close();
      await strict.close();
    },
  };
}

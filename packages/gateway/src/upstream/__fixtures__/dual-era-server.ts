import { randomUUID } from 'node:crypto';
import { createServer, type Server as HttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  classifyInboundRequest,
  createMcpHandler,
  isInitializeRequest,
  Server,
  WebStandardStreamableHTTPServerTransport,
} from '@modelcontextprotocol/server';

/**
 * A v2 SDK server that offers both eras on one /mcp, as the conformance v2 fixture and any SDK v2
 * server on HTTP do: 2026-07-28 through `createMcpHandler`, 2025 sessions through the SDK's
 * web-standard transport. Its tool `ask` sends `elicitation/create` in the middle of the call
 * (which only a 2025 session can carry) with the call's `label` as the message, after `gate`
 * opens; its answer is the client's. `legacy: false` refuses `initialize` as a 2026-only server.
 */
export async function dualEraServer(options: { legacy?: boolean } = {}) {
  const seen: { method: string; era: 'legacy' | 'modern' }[] = [];
  const sessions = new Map<string, WebStandardStreamableHTTPServerTransport>();
  let opened = 0;
  let release: () => void = () => {};
  let gate: Promise<void> = Promise.resolve();
  const build = () => {
    const server = new Server(
      { name: 'dual-era-fixture', version: '1.0.0' },
      { capabilities: { tools: {}, logging: {} } },
    );
    server.setRequestHandler('tools/list', async () => ({
      tools: [{ name: 'ask', inputSchema: { type: 'object', properties: { label: { type: 'string' } } } }],
    }));
    server.setRequestHandler('tools/call', async (request, ctx) => {
      await gate;
      try {
        const answer = await ctx.mcpReq.send({
          method: 'elicitation/create',
          params: {
            message: String(request.params.arguments?.label ?? ''),
            requestedSchema: { type: 'object', properties: {} },
          },
        } as never);
        return { content: [{ type: 'text', text: `answered ${JSON.stringify(answer)}` }] };
      } catch (error) {
        return { isError: true, content: [{ type: 'text', text: `asking failed: ${(error as Error).message}` }] };
      }
    });
    return server;
  };
  const modern = createMcpHandler(build, { legacy: 'reject', onerror: () => {} });

  const toRequest = (url: string, method: string, headers: Headers, raw: string, signal: AbortSignal) =>
    new Request(`http://127.0.0.1${url}`, { method, headers, ...(raw ? { body: raw } : {}), signal });

  async function legacy(request: Request, body: unknown, session: string | undefined): Promise<Response> {
    if (session !== undefined) {
      const transport = sessions.get(session);
      if (!transport) return Response.json({ jsonrpc: '2.0', error: { code: -32001, message: 'no session' }, id: null }, { status: 404 });
      return transport.handleRequest(request, { parsedBody: body });
    }
    if (options.legacy === false || !isInitializeRequest(body))
      return Response.json(
        { jsonrpc: '2.0', error: { code: -32000, message: 'Bad Request: 2026-07-28 only' }, id: null },
        { status: 400 },
      );
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => {
        opened++;
        sessions.set(id, transport);
      },
    });
    transport.onclose = () => {
      if (transport.sessionId) sessions.delete(transport.sessionId);
    };
    await build().connect(transport);
    return transport.handleRequest(request, { parsedBody: body });
  }

  const http: HttpServer = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', async () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      const body: unknown = raw ? JSON.parse(raw) : undefined;
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers))
        if (typeof value === 'string') headers.set(name, value);
      const abort = new AbortController();
      res.on('close', () => abort.abort());
      const route = classifyInboundRequest({
        httpMethod: req.method ?? 'GET',
        protocolVersionHeader: headers.get('mcp-protocol-version') ?? undefined,
        mcpMethodHeader: headers.get('mcp-method') ?? undefined,
        mcpNameHeader: headers.get('mcp-name') ?? undefined,
        body,
      } as never);
      const method = (body as { method?: string } | undefined)?.method;
      if (method) seen.push({ method, era: route.kind === 'legacy' ? 'legacy' : 'modern' });
      try {
        const request = toRequest(req.url ?? '/mcp', req.method ?? 'GET', headers, raw, abort.signal);
        const answer =
          route.kind === 'legacy'
            ? await legacy(request, body, headers.get('mcp-session-id') ?? undefined)
            : await modern.fetch(request, { parsedBody: body });
        res.writeHead(answer.status, Object.fromEntries(answer.headers.entries()));
        if (!answer.body) return res.end();
        res.flushHeaders();
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
  return {
    url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`,
    seen,
    /** 2025 sessions open now, and opened in all. */
    sessions: () => sessions.size,
    opened: () => opened,
    /** Forget every 2025 session, as a restarted server would (their ids then answer 404). */
    forgetSessions() {
      sessions.clear();
    },
    /** Hold every `ask` until `open()` is called. */
    hold() {
      gate = new Promise((resolve) => {
        release = resolve;
      });
      return { open: () => release() };
    },
    async close() {
      http.closeAllConnections();
      await new Promise((resolve) => http.close(resolve));
      await modern.close();
      await Promise.all([...sessions.values()].map((t) => t.close().catch(() => {})));
    },
  };
}

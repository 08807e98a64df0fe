/**
 * The MCP 2026-07-28 leg of `mcp serve --http`: stateless, one endpoint instance per request,
 * served by the SDK's `createMcpHandler` behind ringfence's own Host/Origin/bearer checks and
 * bounded body read (serve/http.ts). Only the request the classifier called modern comes here;
 * 2025 traffic keeps its sessionful transport (serve/http-transport.ts).
 *
 * The SDK's handler is web-standard (Request in, Response out). This file is the small bridge to
 * node:http: the already-read body goes in as bytes and as the parsed value (so the SDK checks the
 * `Mcp-Method`/`Mcp-Name`/`Mcp-Param-*` headers against the body it will serve, never the other
 * way round), the client going away aborts the request's signal (the SDK cancels the call), and
 * the answer is pumped back with backpressure (a client that does not read holds back the pump,
 * not the gateway's memory).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { type AuthInfo, createMcpHandler, type McpHttpHandler } from '@modelcontextprotocol/server';
import { createEndpointServer } from './endpoint.js';
import type { Gateway } from './gateway.js';
import { MAX_REQUEST_BODY_BYTES } from './http-transport.js';

/** Who is calling, as the bearer check resolved it. */
export interface ModernCaller {
  readonly agent?: string;
  readonly scope?: string;
}

/** What the 2026 leg keeps in `AuthInfo.extra`: the caller the bearer check resolved. */
const CALLER_KEY = 'ringfence.caller';

/**
 * The 2026 handler over this gateway. Changes to the lists are published to open
 * `subscriptions/listen` streams here, once, rather than by each per-request instance.
 */
export function createModernHandler(
  gateway: Gateway,
  onerror: (error: Error) => void = () => {},
): { handler: McpHttpHandler; close(): Promise<void> } {
  const handler = createMcpHandler(
    ({ era, authInfo }) => {
      const caller = (authInfo?.extra?.[CALLER_KEY] ?? {}) as ModernCaller;
      return createEndpointServer(gateway, caller, { era, listChanged: false });
    },
    {
      // 2025 clients never reach this handler (serve/http.ts routes them to their sessions), and a
      // per-request 2025 instance could not carry sampling or elicitation: refuse, never serve.
      legacy: 'reject',
      responseMode: 'auto',
      maxRequestBodySize: MAX_REQUEST_BODY_BYTES,
      onerror,
    },
  );
  const onTools = () => handler.notify.toolsChanged();
  const onPrompts = () => handler.notify.promptsChanged();
  const onResources = () => handler.notify.resourcesChanged();
  // `resourceUpdated` is not published: the SDK's listen router cannot ask the policy whether a
  // caller may read a URI, so a 2026 client is not told of updates (it re-reads, decided as ever).
  gateway.on('catalogChanged', onTools);
  gateway.on('promptsChanged', onPrompts);
  gateway.on('resourcesChanged', onResources);
  return {
    handler,
    close: async () => {
      gateway.off('catalogChanged', onTools);
      gateway.off('promptsChanged', onPrompts);
      gateway.off('resourcesChanged', onResources);
      await handler.close();
    },
  };
}

/**
 * Serve one classified 2026 request through `handler`: `raw` is the body as read, `parsed` its
 * JSON value, `caller` the identity the bearer token resolved to and `tokenHash` its digest (the
 * SDK is handed the digest, never the token).
 */
export async function serveModern(
  handler: McpHttpHandler,
  req: IncomingMessage,
  res: ServerResponse,
  body: { raw: Buffer; parsed: unknown },
  caller: ModernCaller,
  tokenHash: Buffer,
): Promise<void> {
  const aborted = new AbortController();
  // The client went away before its answer was written: the SDK cancels the call.
  const onClose = () => {
    if (!res.writableFinished) aborted.abort();
  };
  res.once('close', onClose);
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/mcp'}`, {
    method: 'POST',
    headers,
    body: new Uint8Array(body.raw.buffer, body.raw.byteOffset, body.raw.byteLength),
    signal: aborted.signal,
  });
  const authInfo: AuthInfo = {
    token: tokenHash.toString('hex'),
    clientId: caller.agent ?? '',
    scopes: caller.scope !== undefined ? [caller.scope] : [],
    extra: { [CALLER_KEY]: caller },
  };
  try {
    const response = await handler.fetch(request, { authInfo, parsedBody: body.parsed });
    await pump(response, res, aborted.signal);
  } finally {
    res.off('close', onClose);
  }
}

/** Write a web Response to a node:http response, one chunk at a time, waiting for `drain`. */
async function pump(response: Response, res: ServerResponse, aborted: AbortSignal): Promise<void> {
  const headers: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    headers[name] = value;
  });
  res.writeHead(response.status, headers);
  if (!response.body) {
    res.end();
    return;
  }
  const reader = response.body.getReader();
  try {
    for (;;) {
      if (aborted.aborted || res.destroyed) {
        await reader.cancel().catch(() => {});
        return;
      }
      const { done, value } = await reader.read();
      if (done) break;
      if (!res.write(value)) {
        await new Promise<void>((resolve) => {
          const settle = () => {
            res.off('drain', settle);
            res.off('close', settle);
            resolve();
          };
          res.on('drain', settle);
          res.on('close', settle);
        });
      }
    }
    res.end();
  } finally {
    reader.releaseLock();
  }
}

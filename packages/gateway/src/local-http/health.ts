/**
 * The health probe of ringfence's local HTTP surfaces (`mcp serve --http`, `--metrics`): for a
 * supervisor or a load balancer, answered before the Host check and without a token, and so
 * saying nothing but whether the gateway can serve (no name, version or count).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';

export const HEALTH_PATH = '/healthz';

const OK = 'ok\n';
const UNAVAILABLE = 'unavailable: this gateway is not serving (starting or stopping); see its stderr\n';

/**
 * Answers `GET` or `HEAD` of exactly `/healthz` (no query, no other spelling: anything else is
 * not the probe and meets every usual check) and returns true; returns false for any other request.
 */
export function answerHealthProbe(
  req: IncomingMessage,
  res: ServerResponse,
  serving: () => boolean,
): boolean {
  if (req.url !== HEALTH_PATH || (req.method !== 'GET' && req.method !== 'HEAD')) return false;
  const ok = serving();
  const body = ok ? OK : UNAVAILABLE;
  res.writeHead(ok ? 200 : 503, {
    'content-type': 'text/plain; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'cache-control': 'no-store',
  });
  res.end(req.method === 'HEAD' ? undefined : body);
  return true;
}

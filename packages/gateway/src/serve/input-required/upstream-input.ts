import type { ServerConfig } from '../../config/servers.js';
import { SERVER_REQUEST_METHODS, type ServerRequestMethod } from '../../ports/upstream.js';
import { clip } from '../../text/render.js';
import { type RequestSink, ServerRequestRefused, type ServerRequests } from '../server-requests.js';
import { checkedAnswer } from './answers.js';
import type { KeyRoute } from './sealed-state.js';

/**
 * The input requests of an MCP 2026-07-28 server (its `input_required` result): the 2026 form of
 * sampling and elicitation. Each is decided exactly as a 2025 server's push request is (the
 * registration's `--allow-*`, the policy's ceiling, size, rendering and labelling; see
 * `ServerRequests`) and audited the same way; it belongs to the one caller whose result carried
 * it, so there is no guessing whose call asked. `roots/list` is answered by ringfence from the
 * server's mounts, as today, never passed on. The client sees ringfence's own keys (`u0`, `u1`,
 * …), never the server's: a server cannot name a key ringfence uses for its own question.
 */

/** The most input requests one round may carry. */
export const INPUT_REQUESTS_MAX = 16;

export interface EmbeddedRequest {
  readonly method: string;
  readonly params?: Record<string, unknown>;
}

export type PassedOn =
  /** Requests for the client, and where each answer goes. */
  | {
      readonly kind: 'client';
      readonly inputRequests: Record<string, EmbeddedRequest>;
      readonly keys: Record<string, KeyRoute>;
      /** The server's keys ringfence answers itself (roots) on the retry. */
      readonly roots: string[];
    }
  /** Only roots were asked: ringfence answers at once, no round with the client. */
  | { readonly kind: 'local'; readonly roots: string[] };

export const isServerRequestMethod = (method: unknown): method is ServerRequestMethod =>
  (SERVER_REQUEST_METHODS as readonly unknown[]).includes(method);

/**
 * One round of a server's input requests decided for `client`: what to pass on, or a
 * `ServerRequestRefused` (audited) naming the first request refused. A round is passed on whole
 * or not at all: requests already allowed in a refused round are closed in the audit log.
 */
export async function passOnInputRequests(
  serverRequests: ServerRequests,
  config: ServerConfig,
  client: RequestSink,
  raw: unknown,
): Promise<PassedOn> {
  const server = config.name;
  if (raw !== undefined && (typeof raw !== 'object' || raw === null || Array.isArray(raw)))
    throw new ServerRequestRefused(
      'malformed',
      `ringfence refused the input requests of ${server}: not an object`,
    );
  const entries = Object.entries((raw ?? {}) as Record<string, unknown>);
  if (entries.length > INPUT_REQUESTS_MAX)
    throw new ServerRequestRefused(
      'too-large',
      `ringfence refused the input requests of ${server}: ${entries.length} in one round, more than the ${INPUT_REQUESTS_MAX} passed on`,
    );
  const inputRequests: Record<string, EmbeddedRequest> = {};
  const keys: Record<string, KeyRoute> = {};
  const roots: string[] = [];
  const admitted: { method: ServerRequestMethod; seq: number }[] = [];
  try {
    for (const [upKey, entry] of entries) {
      const { method, params } = (typeof entry === 'object' && entry !== null ? entry : {}) as {
        method?: unknown;
        params?: unknown;
      };
      if (method === 'roots/list') {
        roots.push(upKey);
        continue;
      }
      if (!isServerRequestMethod(method))
        throw new ServerRequestRefused(
          'malformed',
          `ringfence refused an input request of ${server}: "${clip(String(method), 40)}" is not sampling, elicitation or roots`,
        );
      const { forwarded, parentSeq } = await serverRequests.admit(config, method, params, [client]);
      admitted.push({ method, seq: parentSeq });
      const key = `u${admitted.length - 1}`;
      inputRequests[key] = { method, params: forwarded };
      keys[key] = { up: upKey, method, seq: parentSeq };
    }
  } catch (error) {
    for (const { method, seq } of admitted)
      await serverRequests
        .settle(config, method, client, seq, {
          error: 'not passed on: another input request of the same round was refused',
        })
        .catch(() => {});
    throw error;
  }
  return admitted.length === 0 ? { kind: 'local', roots } : { kind: 'client', inputRequests, keys, roots };
}

/**
 * The retry's `inputResponses` for the server: only the keys ringfence passed on in the round
 * the state was issued for, each checked for its kind and audited as the answer to its request,
 * under the server's own key; the roots it asked for answered from its mounts. A key the client
 * did not answer, or answered wrongly, is left out: the server asks again (MCP 2026-07-28).
 */
export async function answersForServer(
  serverRequests: ServerRequests,
  config: ServerConfig,
  client: Pick<RequestSink, 'agent' | 'scope'>,
  route: { keys?: Readonly<Record<string, KeyRoute>>; roots?: readonly string[] },
  responses: Readonly<Record<string, unknown>> | undefined,
  rootsAnswer: () => Record<string, unknown>,
): Promise<Record<string, unknown>> {
  // Entries, then fromEntries: the server's keys are its own strings, and `__proto__` must stay a key.
  const out: [string, unknown][] = [];
  for (const [key, { up, method, seq }] of Object.entries(route.keys ?? {})) {
    if (!isServerRequestMethod(method)) continue;
    const given = responses && Object.hasOwn(responses, key) ? responses[key] : undefined;
    const checked =
      given === undefined
        ? { error: 'the client sent no answer (the server may ask again)' }
        : checkedAnswer(method, given);
    try {
      out.push([up, await serverRequests.settle(config, method, client, seq, checked)]);
    } catch (error) {
      if (!(error instanceof ServerRequestRefused)) throw error;
    }
  }
  for (const up of route.roots ?? []) out.push([up, rootsAnswer()]);
  return Object.fromEntries(out);
}

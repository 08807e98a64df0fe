import type { Caller } from '../ports/caller.js';
import type { Upstream } from '../ports/upstream.js';
import {
  CallRefused,
  type ForwardedRequest,
  type PipelineDeps,
  type ReadResult,
  runForward,
  upstreamErrorText,
} from './pipeline/index.js';
import type { ResourceIndex } from './resources.js';

type Target = (server: string) => { upstream: Upstream | undefined; unavailableReason: string };

/**
 * `resources/read` through the pipeline, for a URI `ResourceIndex.resolve` lets through.
 * `resources/read` has no error result, so every refusal is thrown as a `CallRefused` that says
 * why (the endpoint sends it as a JSON-RPC error), as for a prompt.
 */
export async function readThrough(
  index: ResourceIndex,
  deps: { pipeline: PipelineDeps; target: Target },
  request: {
    uri: string;
    caller: Caller;
    protocolVersion: string | undefined;
    call: Pick<ForwardedRequest, 'signal' | 'onProgress'>;
  },
): Promise<ReadResult> {
  const resolved = index.resolve(request.uri);
  if (!resolved.pass) throw new CallRefused('UNKNOWN_RESOURCE', `ringfence: ${resolved.what}`);
  const reply = await runForward(deps.pipeline, {
    method: 'resources/read',
    entry: resolved.target,
    args: { uri: resolved.target.uri },
    caller: request.caller,
    ...deps.target(resolved.target.server),
    protocolVersion: request.protocolVersion,
    ...request.call,
  });
  if (reply.isError === true) {
    const text = (reply.content as { text?: string }[] | undefined)?.[0]?.text ?? 'ringfence refused it';
    throw new CallRefused('REFUSED', text);
  }
  return reply as ReadResult;
}

/**
 * Resource subscriptions of every client session, counted per server URI: a server is asked to
 * subscribe once however many sessions do, and to unsubscribe when the last one leaves.
 */
export class Subscriptions {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly index: ResourceIndex,
    private readonly target: Target,
  ) {}

  /** Subscribe (or, with `on` false, unsubscribe) a URI the client may read; returns it as clients are shown it. */
  async set(uri: string, on: boolean): Promise<string> {
    // Undoing needs no right to read: a subscription outlives a resource withheld since.
    const resolved = this.index.resolve(uri);
    const named = resolved.pass ? resolved.target : on ? undefined : this.index.named(uri);
    if (!named)
      throw new CallRefused('UNKNOWN_RESOURCE', `ringfence: ${(resolved as { what: string }).what}`);
    const { server, uri: own } = named;
    const { upstream, unavailableReason } = this.target(server);
    if (!on && !upstream) {
      this.counts.delete(`${server}\u0000${own}`);
      return this.index.clientUri(server, own);
    }
    if (!upstream?.capabilities().subscribe) {
      throw new CallRefused(
        'REFUSED',
        `ringfence: ${server} ${upstream ? 'does not offer resource subscriptions' : `is not available (${unavailableReason})`}; nothing was subscribed.`,
      );
    }
    const id = `${server}\u0000${own}`;
    const count = this.counts.get(id) ?? 0;
    const next = on ? count + 1 : Math.max(0, count - 1);
    if (next > 0) this.counts.set(id, next);
    else this.counts.delete(id);
    if ((on && count === 0) || (!on && count === 1)) {
      try {
        await upstream.subscribeResource(own, on);
      } catch (error) {
        if (on) this.counts.delete(id);
        throw new CallRefused('REFUSED', `ringfence: ${server} refused it: ${upstreamErrorText(error)}`);
      }
    }
    return this.index.clientUri(server, own);
  }

  /** A server's `resources/updated`: the URI to tell subscribers, or undefined when nobody subscribed to it. */
  updated(server: string, uri: unknown): string | undefined {
    if (typeof uri !== 'string' || !this.counts.has(`${server}\u0000${uri}`)) return undefined;
    return this.index.clientUri(server, uri);
  }
}

import type { Caller } from '../ports/caller.js';
import type { UpstreamRequests } from '../ports/upstream.js';
import {
  CallRefused,
  type ForwardedRequest,
  type PipelineDeps,
  type ReadResult,
  runForward,
} from './pipeline/index.js';
import { refusedText } from './refused.js';
import type { ResourceIndex } from './resources.js';

type Target = (server: string) => { upstream: UpstreamRequests | undefined; unavailableReason: string };

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
    call: Pick<
      ForwardedRequest,
      'signal' | 'onProgress' | 'traceparent' | 'upstreamInput' | 'clientCapabilities' | 'owner'
    >;
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
  const refused = refusedText(reply);
  if (refused !== undefined) throw new CallRefused('REFUSED', refused);
  return reply as ReadResult;
}

/**
 * Resource subscriptions of every client session, counted per server URI. Each client
 * `resources/subscribe` runs the pipeline as a read does (the same whole-server rules, the
 * invisible-argument refusal, a decision and a result entry) and, allowed, is forwarded (a server
 * keeps one subscription per URI however often it is asked). An unsubscribe ends the session's
 * subscription here, which needs no decision; the server is told, through the pipeline, when the
 * last session leaves.
 */
export class Subscriptions {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly index: ResourceIndex,
    private readonly target: Target,
    private readonly pipeline: () => PipelineDeps,
  ) {}

  /** Subscribe (or, with `on` false, unsubscribe) a URI the client may read; returns it as clients are shown it. */
  async set(uri: string, on: boolean, caller: Caller = {}): Promise<string> {
    if (!on) return this.unsubscribe(uri, caller);
    const resolved = this.index.resolve(uri);
    if (!resolved.pass) throw new CallRefused('UNKNOWN_RESOURCE', `ringfence: ${resolved.what}`);
    const { server, uri: own } = resolved.target;
    const { upstream, unavailableReason } = this.target(server);
    // Nothing is sent to a server that does not subscribe; there is nothing to decide.
    if (upstream && !upstream.capabilities().subscribe) {
      throw new CallRefused(
        'REFUSED',
        `ringfence: ${server} does not offer resource subscriptions; nothing was subscribed.`,
      );
    }
    const reply = await runForward(this.pipeline(), {
      method: 'resources/subscribe',
      entry: resolved.target,
      args: { uri: own },
      caller,
      upstream,
      unavailableReason,
      protocolVersion: undefined,
    });
    const refused = refusedText(reply);
    if (refused !== undefined) throw new CallRefused('REFUSED', refused);
    const id = `${server}\u0000${own}`;
    this.counts.set(id, (this.counts.get(id) ?? 0) + 1);
    return this.index.clientUri(server, own);
  }

  /**
   * Undoing needs no right to read (a subscription outlives a resource withheld since): the count
   * goes down at once, and the server is asked to unsubscribe, decided and audited, when it was
   * the last subscription to that URI.
   */
  private async unsubscribe(uri: string, caller: Caller): Promise<string> {
    const named = this.index.named(uri);
    if (!named) {
      const resolved = this.index.resolve(uri);
      throw new CallRefused('UNKNOWN_RESOURCE', `ringfence: ${(resolved as { what: string }).what}`);
    }
    const { server, uri: own } = named;
    const shown = this.index.clientUri(server, own);
    const id = `${server}\u0000${own}`;
    const count = this.counts.get(id) ?? 0;
    if (count > 1) this.counts.set(id, count - 1);
    else this.counts.delete(id);
    const { upstream, unavailableReason } = this.target(server);
    // Not the last, never forwarded, or the server is gone: nothing reaches a server.
    if (count !== 1 || !upstream) return shown;
    const reply = await runForward(this.pipeline(), {
      method: 'resources/unsubscribe',
      entry: { kind: 'resource', server, uri: own, exposedName: shown },
      args: { uri: own },
      caller,
      upstream,
      unavailableReason,
      protocolVersion: undefined,
    });
    const refused = refusedText(reply);
    if (refused !== undefined) {
      throw new CallRefused(
        'REFUSED',
        `${refused} This session receives no more updates for ${shown} either way.`,
      );
    }
    return shown;
  }

  /**
   * A server's `resources/updated`: the URI to tell subscribers, or undefined when nobody
   * subscribed to it or it is withheld now (its definition changed since the subscription, seen
   * at a re-list after `list_changed`): no update of a withheld URI reaches a client. The
   * subscription itself is kept, so a client's unsubscribe still reaches the server.
   */
  updated(server: string, uri: unknown): string | undefined {
    if (typeof uri !== 'string' || !this.counts.has(`${server}\u0000${uri}`)) return undefined;
    if (this.index.withheld(server, uri)) return undefined;
    return this.index.clientUri(server, uri);
  }
}

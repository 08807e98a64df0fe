import type { PriorDiscovery } from '@modelcontextprotocol/client';
import { UpstreamError } from '../ports/errors.js';
import {
  type CallOptions,
  isLegacyVersion,
  type UpstreamEra,
  type UpstreamRequests,
} from '../ports/upstream.js';
import { redactText } from '../text/redact.js';
import { answeredNo } from './era.js';
import { HttpStatusError } from './http-endpoint.js';
import type { HttpClientTransport } from './http-transport.js';
import type { UpstreamClient } from './mcp-client.js';

/**
 * Whether a modern server's `server/discover` answer lists a 2025 version. The v2 SDK's servers
 * list only modern revisions there even when they serve 2025 on the same URL (2025 is negotiated
 * by `initialize`), so its absence is not evidence: the companion then asks once.
 */
export function discoverOffersLegacy(verdict: PriorDiscovery | undefined): boolean {
  if (verdict?.kind !== 'modern') return false;
  const versions = (verdict.discover as { supportedVersions?: unknown }).supportedVersions;
  return Array.isArray(versions) && versions.some((v) => typeof v === 'string' && isLegacyVersion(v));
}

export interface Connection {
  readonly client: UpstreamClient;
  readonly transport: HttpClientTransport;
}

/** What the companion needs of its remote upstream. */
export interface CompanionHost {
  readonly name: string;
  /** The primary (negotiated) connection's side, for everything the companion does not carry. */
  readonly primary: UpstreamRequests;
  /** The primary connection's verdict (its discover answer). */
  verdict(): PriorDiscovery | undefined;
  /** A new 2025 session to the same URL: same headers, limits and server-request handling. */
  open(): Promise<Connection>;
  /** The log level last asked for, if any: a new session is told it too. */
  logLevel(): string | undefined;
  /** What was learnt: 2025 clients served over a 2025 session, or on the 2026 connection. */
  learnt?(how: '2025' | '2026'): void;
}

type Settled = { kind: 'open'; connection: Connection } | { kind: 'not-offered' };

/**
 * The 2025 session a remote server's 2025 callers are served over when its primary connection
 * speaks 2026-07-28 (a server that offers both eras, as every v2 SDK server on HTTP does). On
 * 2026 a server cannot send a request in the middle of a call; on 2025 it does (sampling,
 * elicitation), so a 2025 caller's call must reach it in 2025 to keep its behaviour. Opened at
 * the first 2025 caller's request, closed with the upstream. Listings, pins, instructions, list
 * changes and subscriptions stay on the primary connection; this carries only calls, prompts,
 * reads and completions, which then pass through the same pipeline, audit and server-request
 * checks as any (it is the same server everywhere).
 *
 * Opening fails as a refusal naming the server, never silently falls back to the primary: that
 * would change what the caller's call does. The one exception is a server that answers
 * `initialize` with a refusal while its discover answer did not offer 2025: it offers one era
 * only, and the primary is then this caller's too (its `input_required` asked on the session).
 */
export class LegacyCompanion {
  private settled: Settled | undefined;
  private opening: Promise<Settled> | undefined;
  /** The last failure to open, given again for a moment (one request asks twice: era, then call). */
  private failed: { error: Error; at: number } | undefined;
  private closed = false;

  constructor(private readonly host: CompanionHost) {}

  /** Open (once; concurrent callers share the attempt) or learn that the server offers no 2025. */
  private settle(): Promise<Settled> {
    if (this.settled) return Promise.resolve(this.settled);
    if (this.failed && Date.now() - this.failed.at < RETRY_AFTER_MS) return Promise.reject(this.failed.error);
    this.opening ??= this.attempt().finally(() => {
      this.opening = undefined;
    });
    return this.opening;
  }

  private async attempt(): Promise<Settled> {
    if (this.closed) throw closing(this.host.name);
    let connection: Connection;
    try {
      connection = await this.host.open();
    } catch (error) {
      // Offered by discover, or not a refusal at all (an outage): the caller is refused, and the
      // next request tries again. Not offered and refused: one era only, learnt for good.
      if (!discoverOffersLegacy(this.host.verdict()) && answeredNo(error)) {
        this.settled = { kind: 'not-offered' };
        this.host.learnt?.('2026');
        return this.settled;
      }
      const refusal = new UpstreamError(
        'UPSTREAM_CONNECT',
        redactText(
          `${this.host.name} speaks MCP 2026-07-28 to ringfence, and this client speaks 2025, so its request goes over a 2025 session to ${this.host.name}, which could not be opened: ${(error as Error).message}. Nothing was sent to the server. Try again; if it persists, register the server again with --protocol 2025 (ringfence mcp rm ${this.host.name}, then ringfence mcp add ${this.host.name} … --protocol 2025)`,
        ),
        { cause: error },
      );
      this.failed = { error: refusal, at: Date.now() };
      throw refusal;
    }
    this.failed = undefined;
    if (this.closed) {
      await connection.client.close().catch(() => {});
      throw closing(this.host.name);
    }
    const level = this.host.logLevel();
    if (level !== undefined) await connection.client.setLoggingLevel(level).catch(() => {});
    // Chained after the SDK's own (set at connect), which fails the requests in flight.
    const sdkOnClose = connection.transport.onclose;
    connection.transport.onclose = () => {
      sdkOnClose?.();
      // Gone (the server ended the session, the connection dropped): the next request reopens.
      if (this.settled?.kind === 'open' && this.settled.connection === connection) this.settled = undefined;
    };
    this.settled = { kind: 'open', connection };
    this.host.learnt?.('2025');
    return this.settled;
  }

  /** The era a 2025 caller's requests are spoken in: `legacy` unless the server offers no 2025. */
  async era(): Promise<UpstreamEra> {
    try {
      return (await this.settle()).kind === 'open' ? 'legacy' : (this.host.primary.era?.() ?? 'modern');
    } catch {
      // Refused at the request itself, with the reason; it is a 2025 request either way.
      return 'legacy';
    }
  }

  /** Whether it is open now (for `era()`, which cannot wait). */
  get isOpen(): boolean {
    return this.settled?.kind === 'open';
  }

  /** Whether the server was found to offer no 2025 session. */
  get notOffered(): boolean {
    return this.settled?.kind === 'not-offered';
  }

  /**
   * Run `operation` on the 2025 session, or on the primary when the server offers no 2025. A 404
   * to a request that carried the session id means the server forgot the session: reopened once.
   */
  async run<T>(
    operation: (client: UpstreamClient) => Promise<T>,
    onPrimary: (primary: UpstreamRequests) => Promise<T>,
  ): Promise<T> {
    const first = await this.settle();
    if (first.kind === 'not-offered') return onPrimary(this.host.primary);
    try {
      return await operation(first.connection.client);
    } catch (error) {
      if (
        !(error instanceof HttpStatusError) ||
        error.status !== 404 ||
        !first.connection.transport.sessionId
      )
        throw error;
      if (this.settled === first) {
        this.settled = undefined;
        await first.connection.client.close().catch(() => {});
      }
      const again = await this.settle();
      if (again.kind === 'not-offered') return onPrimary(this.host.primary);
      return operation(again.connection.client);
    }
  }

  /** Change the log level of an open session (a closed one is told when it opens). */
  async setLoggingLevel(level: string): Promise<void> {
    if (this.settled?.kind === 'open') await this.settled.connection.client.setLoggingLevel(level);
  }

  /** End the session with the upstream (bounded by `end`, the host's DELETE and timeout). */
  async close(end: (connection: Connection) => Promise<void>): Promise<void> {
    this.closed = true;
    const opening = this.opening;
    const settled = this.settled;
    this.settled = undefined;
    if (settled?.kind === 'open') await end(settled.connection);
    // An attempt under way closes what it opened itself (see `attempt`).
    await opening?.catch(() => {});
  }
}

/** How long a failure to open is given again before the next request tries anew. */
const RETRY_AFTER_MS = 5_000;

const closing = (name: string) => new UpstreamError('UPSTREAM_CLOSING', `${name} is closing`);

/**
 * What a 2025 caller sees of a remote server whose primary connection is modern: the primary for
 * everything but calls, prompts, reads and completions, which go through the companion.
 */
export function legacyCallerSide(primary: UpstreamRequests, companion: LegacyCompanion): UpstreamRequests {
  return {
    name: primary.name,
    destination: primary.destination,
    limits: primary.limits,
    capabilities: () => primary.capabilities(),
    subscribeResource: (uri, subscribe) => primary.subscribeResource(uri, subscribe),
    setLoggingLevel: (level) => primary.setLoggingLevel(level),
    ...(primary.roots ? { roots: () => primary.roots!() } : {}),
    era: () => (companion.isOpen || !companion.notOffered ? 'legacy' : (primary.era?.() ?? 'modern')),
    settledEra: () => companion.era(),
    callTool: (name: string, args: Record<string, unknown>, options: CallOptions = {}) =>
      companion.run(
        (client) => client.callTool(name, args, options),
        (side) => side.callTool(name, args, options),
      ),
    getPrompt: (name: string, args: Record<string, string>, options: CallOptions = {}) =>
      companion.run(
        (client) => client.getPrompt(name, args, options),
        (side) => side.getPrompt(name, args, options),
      ),
    readResource: (uri: string, options: CallOptions = {}) =>
      companion.run(
        (client) => client.readResource(uri, options),
        (side) => side.readResource(uri, options),
      ),
    complete: (params: Record<string, unknown>, options: { signal?: AbortSignal } = {}) =>
      companion.run(
        (client) => client.complete(params, options.signal),
        (side) => side.complete(params, options),
      ),
  };
}

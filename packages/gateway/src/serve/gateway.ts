import { EventEmitter } from 'node:events';
import type { ServerConfig } from '../config/servers.js';
import type { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { Caller, CallToolResult } from '../ports/caller.js';
import { UpstreamError } from '../ports/errors.js';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { Upstream } from '../ports/upstream.js';
import { withTimeout } from '../util/timeout.js';
import {
  buildServerCatalog,
  type CatalogEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';
import {
  CallRefused,
  type ForwardedRequest,
  lookup,
  type PipelineDeps,
  runForward,
} from './pipeline/index.js';
import { SERVER_INFO } from './server-info.js';

export interface GatewayOptions {
  readonly servers: readonly ServerConfig[];
  readonly pins: PinStore;
  readonly guard: SchemaChecks;
  readonly audit: AuditSink;
  readonly createUpstream: (config: ServerConfig) => Upstream;
  /**
   * A report line for people: stderr, never stdout. Lines carry what servers chose (names,
   * reasons, error text) as it came: the sink renders each with `renderUntrusted(line, {mode:
   * 'line'})` where it reaches a person (the CLI's `reportLine`), once.
   */
  readonly log: (line: string) => void;
  readonly session: string;
  readonly policy?: PolicyView;
  readonly startTimeoutMs?: number;
  /** Serialized result size cap (bytes). */
  readonly maxResultBytes?: number;
}

const exposedKey = (entry: CatalogEntry) => `${entry.tool}\u0000${entry.digest}\u0000exposed`;
const withheldKey = (entry: WithheldEntry) => `${entry.tool}\u0000${entry.digest ?? ''}\u0000${entry.kind}`;
const outcomeKeys = (catalog: ServerCatalog) => [
  ...catalog.entries.map(exposedKey),
  ...catalog.withheld.map(withheldKey),
];

export type ServerState =
  | { readonly status: 'running'; readonly catalog: ServerCatalog }
  | { readonly status: 'failed' | 'stopped'; readonly reason: string; readonly catalog?: ServerCatalog };

/**
 * The gateway's heart: starts every upstream at once, builds the catalog in config order, and
 * runs each call through the pipeline. Emits `catalogChanged` when the exposed tools change.
 */
export class Gateway extends EventEmitter<{ catalogChanged: [] }> {
  readonly policy: PolicyView;
  private readonly upstreams = new Map<string, Upstream>();
  private readonly states = new Map<string, ServerState>();
  private catalog = new Map<string, CatalogEntry>();

  constructor(readonly options: GatewayOptions) {
    super();
    this.policy = options.policy ?? LOCAL_ONLY;
  }

  /** Start all servers concurrently; a server that fails is reported and skipped. */
  async start(): Promise<void> {
    await this.options.audit.append({
      type: 'gateway.start',
      refs: { pid: process.pid, version: SERVER_INFO.version, ...this.policyRef() },
    });
    await Promise.all(this.options.servers.map((config) => this.startServer(config)));
    this.rebuildCatalog();
  }

  private async startServer(config: ServerConfig): Promise<void> {
    const timeoutMs = this.options.startTimeoutMs ?? 60_000;
    let upstream: Upstream | undefined;
    try {
      upstream = this.options.createUpstream(config);
      const started = upstream;
      // One budget for starting and listing together.
      const catalog = await withTimeout(
        started.start().then(() => this.listServer(started)),
        timeoutMs,
        () =>
          new UpstreamError(
            'SERVER_START_TIMEOUT',
            `it did not start within ${Math.round(timeoutMs / 1000)} s`,
          ),
      );
      this.upstreams.set(config.name, started);
      this.states.set(config.name, { status: 'running', catalog });
      started.onToolsChanged(() => void this.refresh(config.name));
      started.onClosed((reason) => this.markStopped(config.name, reason));
      this.report(catalog);
      if (
        catalog.entries.length === 0 &&
        catalog.withheld.every((w) => w.kind === 'filtered') &&
        catalog.withheld.length > 0
      ) {
        this.options.log(
          `ringfence: ${config.name}: every tool is filtered out by the allowlists; the server was stopped.`,
        );
        await this.stopServer(config.name, 'every tool is filtered out');
      }
    } catch (error) {
      const reason = (error as Error).message;
      this.states.set(config.name, { status: 'failed', reason });
      this.options.log(`ringfence: ${config.name} failed to start and is skipped: ${reason}`);
      await upstream?.close().catch(() => {});
    }
  }

  private async listServer(upstream: Upstream, previous?: ServerCatalog): Promise<ServerCatalog> {
    const config = this.options.servers.find((s) => s.name === upstream.name)!;
    const listing = await upstream.listTools();
    const catalog = await buildServerCatalog({
      server: upstream.name,
      destination: upstream.destination,
      rawTools: listing.tools,
      problems: listing.problems,
      localAllow: config.allow_tools,
      pins: this.options.pins,
      guard: this.options.guard,
      policy: this.policy,
    });
    await this.auditExposure(catalog, previous);
    return catalog;
  }

  /** The policy as audit entries name it. */
  policyRef(): { policy?: { name: string; digest: `sha256:${string}`; signer: string } } {
    const ref = this.policy.ref;
    return ref
      ? { policy: { name: ref.name, digest: ref.digest as `sha256:${string}`, signer: ref.signer } }
      : {};
  }

  /**
   * One `expose` decision per tool: at start for all, on a re-list only for tools whose outcome
   * changed, so a server repeating "tools changed" cannot grow the log with copies.
   */
  private async auditExposure(catalog: ServerCatalog, previous?: ServerCatalog): Promise<void> {
    const before = new Set(previous ? outcomeKeys(previous) : []);
    const isNew = (key: string) => !before.has(key);
    const appends = [
      ...catalog.entries
        .filter((entry) => isNew(exposedKey(entry)))
        .map((entry) => ({
          server: entry.server,
          tool: entry.tool,
          digest: entry.digest,
          allowed: true,
          rule: 'pinned',
        })),
      ...catalog.withheld
        .filter((entry) => isNew(withheldKey(entry)))
        .map((entry) => ({
          server: entry.server,
          tool: entry.tool,
          ...(entry.digest ? { digest: entry.digest } : {}),
          allowed: false,
          rule: `withheld-${entry.kind}`,
          reason: entry.reason.slice(0, 1000),
        })),
    ];
    // Queued together: the log batches them into few writes.
    await Promise.all(
      appends.map((refs) =>
        this.options.audit.append({
          type: 'mcp.decision',
          refs: { phase: 'expose', ...refs, ...this.policyRef() } as never,
        }),
      ),
    );
  }

  private report(catalog: ServerCatalog): void {
    const { log } = this.options;
    if (catalog.firstSight) {
      log(
        `ringfence: first sight of ${catalog.server}: pinned ${catalog.entries.length + catalog.withheld.filter((w) => w.kind !== 'unpinnable').length} tool(s) (trust on first use). Review them with: ringfence mcp pins show ${catalog.server}`,
      );
    }
    for (const problem of catalog.problems) log(`ringfence: ${catalog.server}: ${problem}`);
    for (const entry of catalog.withheld) if (entry.kind !== 'filtered') log(withheldLine(entry));
  }

  /** Re-list one server after it said its tools changed; changed tools are withheld at once. */
  async refresh(name: string): Promise<void> {
    const upstream = this.upstreams.get(name);
    if (!upstream || this.states.get(name)?.status !== 'running') return;
    try {
      const previous = this.states.get(name)?.catalog;
      const catalog = await this.listServer(upstream, previous);
      this.states.set(name, { status: 'running', catalog });
      const known = new Set(previous ? outcomeKeys(previous) : []);
      for (const entry of catalog.withheld) {
        if (entry.kind !== 'filtered' && !known.has(withheldKey(entry)))
          this.options.log(withheldLine(entry));
      }
    } catch (error) {
      // A server that cannot list any more keeps nothing exposed.
      this.states.set(name, { status: 'failed', reason: `re-listing failed: ${(error as Error).message}` });
      this.options.log(
        `ringfence: ${name}: re-listing its tools failed, its tools are withheld: ${(error as Error).message}`,
      );
    }
    this.rebuildCatalog();
  }

  private markStopped(name: string, reason: string): void {
    const state = this.states.get(name);
    if (state?.status !== 'running') return;
    this.states.set(name, { status: 'stopped', reason, catalog: state.catalog });
    this.options.log(`ringfence: ${name} stopped: ${reason}. Its tools fail until the gateway restarts.`);
  }

  private async stopServer(name: string, reason: string): Promise<void> {
    const upstream = this.upstreams.get(name);
    this.upstreams.delete(name);
    const state = this.states.get(name);
    this.states.set(name, {
      status: 'stopped',
      reason,
      ...(state && 'catalog' in state && state.catalog ? { catalog: state.catalog } : {}),
    });
    await upstream?.close().catch(() => {});
    this.rebuildCatalog();
  }

  /** Config order, first come first served: a later name that collides is skipped with a message. */
  private rebuildCatalog(): void {
    const next = new Map<string, CatalogEntry>();
    for (const config of this.options.servers) {
      const state = this.states.get(config.name);
      if (!state?.catalog || state.status === 'failed') continue;
      for (const entry of state.catalog.entries) {
        const earlier = next.get(entry.exposedName);
        if (earlier) {
          if (
            !this.catalog.has(entry.exposedName) ||
            this.catalog.get(entry.exposedName)?.server !== entry.server
          ) {
            this.options.log(
              `ringfence: skipped ${entry.server}/${entry.tool}: the name ${entry.exposedName} is already taken by ${earlier.server}/${earlier.tool}.`,
            );
          }
          continue;
        }
        next.set(entry.exposedName, entry);
      }
    }
    const changed =
      next.size !== this.catalog.size ||
      [...next].some(([name, entry]) => this.catalog.get(name)?.digest !== entry.digest);
    this.catalog = next;
    if (changed) this.emit('catalogChanged');
  }

  /** The tools the client may see, in config order. */
  listTools(): Record<string, unknown>[] {
    return [...this.catalog.values()].map((entry) => entry.presented);
  }

  serverStates(): ReadonlyMap<string, ServerState> {
    return this.states;
  }

  withheld(): WithheldEntry[] {
    return [...this.states.values()].flatMap((s) => s.catalog?.withheld ?? []);
  }

  /**
   * Run one call through the pipeline; refusals come back as error results that say why.
   * `protocolVersion` is what the endpoint negotiated with this client (undefined: none). `call`
   * carries the client's cancel and, when it asked for progress, where progress goes.
   */
  async callTool(
    name: string,
    args: unknown,
    caller: Caller,
    protocolVersion: string | undefined,
    call: Pick<ForwardedRequest, 'signal' | 'onProgress'> = {},
  ): Promise<CallToolResult> {
    const found = lookup(this.catalog, name);
    if (!found.pass) throw new CallRefused('UNKNOWN_TOOL', `ringfence: ${found.what}`);
    const { entry } = found;
    const state = this.states.get(entry.server);
    const upstream = this.upstreams.get(entry.server);
    return runForward(this.pipelineDeps(), {
      method: 'tools/call',
      entry,
      args,
      caller,
      upstream: state?.status === 'running' ? upstream : undefined,
      unavailableReason: state && state.status !== 'running' ? state.reason : 'it is not running',
      protocolVersion,
      ...call,
    });
  }

  private pipelineDeps(): PipelineDeps {
    return {
      policy: this.policy,
      guard: this.options.guard,
      audit: this.options.audit,
      policyRef: this.policyRef(),
      maxResultBytes: this.options.maxResultBytes ?? 1024 * 1024,
      log: this.options.log,
    };
  }

  async close(): Promise<void> {
    const all = [...this.upstreams.values()];
    this.upstreams.clear();
    await Promise.all(all.map((u) => u.close().catch(() => {})));
  }
}

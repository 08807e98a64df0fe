import { type Naming, PREFIXED } from '../catalog/present.js';
import type { ServerConfig } from '../config/servers.js';
import type { DefinitionKind } from '../pins/kinds.js';
import type { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import { UpstreamError } from '../ports/errors.js';
import type { PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import {
  callerEraOf,
  type Upstream,
  type UpstreamCapabilities,
  type UpstreamRequests,
} from '../ports/upstream.js';
import { redactedLine } from '../text/redact.js';
import { rendered } from '../text/render.js';
import { startupMark } from '../util/startup.js';
import { withTimeout } from '../util/timeout.js';
import { awaitingLoginSide, LOGIN_TOOL, pinnedListings, readOnlyPins } from './awaiting-login.js';
import {
  buildServerCatalog,
  type CatalogEntry,
  type PromptEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';
import {
  catalogReport,
  type Exposed,
  exposureDecisions,
  outcomeKeys,
  shownLabel,
  withheldKey,
} from './exposure.js';
import { listServerDefinitions, type ServerListings } from './listings.js';
import { builtInPins } from './own-pins.js';
import type { PipelineDeps } from './pipeline/index.js';
import { ResourceIndex } from './resources.js';
import { declaredEntry } from './server-requests.js';

/** The capabilities a client is offered: what at least one running server offers. */
export type OfferedCapabilities = UpstreamCapabilities;

export type ServerState =
  | { readonly status: 'running'; readonly catalog: ServerCatalog }
  /** A remote server whose OAuth login is needed: its pinned definitions stay listed (awaiting-login.ts). */
  | { readonly status: 'login-needed'; readonly reason: string; readonly catalog: ServerCatalog }
  | { readonly status: 'failed' | 'stopped'; readonly reason: string; readonly catalog?: ServerCatalog };

/** The policy as audit entries name it. */
export function policyRefOf(policy: PolicyView): PipelineDeps['policyRef'] {
  const ref = policy.ref;
  return ref
    ? { policy: { name: ref.name, digest: ref.digest as `sha256:${string}`, signer: ref.signer } }
    : {};
}

/** Where a request for one server goes: its upstream while it runs, or why it does not. */
export interface Target {
  readonly upstream: UpstreamRequests | undefined;
  readonly unavailableReason: string;
}

/** What changed in what clients are shown. */
export type CatalogChange = 'catalogChanged' | 'promptsChanged' | 'resourcesChanged';

export interface RegistryOptions {
  readonly servers: readonly ServerConfig[];
  readonly pins: PinStore;
  readonly guard: SchemaChecks;
  readonly audit: AuditSink;
  readonly createUpstream: (config: ServerConfig) => Upstream;
  /** Report lines for people (stderr): see `GatewayOptions.log`. */
  readonly log: (line: string) => void;
  readonly policy: PolicyView;
  readonly startTimeoutMs?: number;
  readonly naming?: Naming;
  /** Told each time what clients are shown changes. */
  readonly changed: (change: CatalogChange) => void;
  /** Listens to a created upstream before it starts (its log lines, requests, resource updates). */
  readonly attach: (config: ServerConfig, upstream: Upstream) => void;
  /** Told once a server is listed at start, before anything else is said of it. */
  readonly listed?: (config: ServerConfig, catalog: ServerCatalog) => void;
  /**
   * ringfence's own server (`sandbox/`, `mcp serve --sandbox-tools`), already created: listed
   * first and under its tools' own names, so no registered server's tool can take one of them.
   */
  readonly ownServer?: Upstream;
}

/**
 * The registered servers and what of them is exposed: the one place that starts and stops
 * upstreams, lists them (at start and after each "list changed"), writes the `expose` decisions,
 * and keeps the catalog of tools, prompts and resources clients are shown, in config order.
 * Requests reach an upstream only through `target`, which the dispatcher alone asks.
 */
export class ServerRegistry {
  private readonly upstreams = new Map<string, Upstream>();
  private readonly states = new Map<string, ServerState>();
  private tools = new Map<string, CatalogEntry>();
  private prompts = new Map<string, PromptEntry>();
  readonly resources: ResourceIndex;
  /** The request side of each server awaiting a login, and its one start under way. */
  private readonly awaiting = new Map<string, UpstreamRequests>();
  private readonly reviving = new Map<string, Promise<UpstreamRequests>>();

  constructor(private readonly options: RegistryOptions) {
    this.resources = new ResourceIndex(
      this.naming,
      this.naming.prefixed ? undefined : options.servers[0]?.name,
    );
  }

  get naming(): Naming {
    return this.options.naming ?? PREFIXED;
  }

  /** Start all servers concurrently; a server that fails is reported and skipped. */
  async start(): Promise<void> {
    await Promise.all([
      ...this.registered().map((config) => this.startServer(config)),
      ...(this.options.ownServer ? [this.startOwn(this.options.ownServer)] : []),
    ]);
    this.rebuildCatalog();
    startupMark('gateway: catalog built');
  }

  /**
   * The registrations served: all of them, except one that claims the own server's name (the name
   * is reserved at registration; a servers file edited by hand is refused here too).
   */
  private registered(): readonly ServerConfig[] {
    const own = this.options.ownServer?.name;
    return own === undefined ? this.options.servers : this.options.servers.filter((c) => c.name !== own);
  }

  /** Server names in the order they claim exposed names: the own server first, then config order. */
  private order(): string[] {
    const own = this.options.ownServer?.name;
    return [...(own === undefined ? [] : [own]), ...this.registered().map((c) => c.name)];
  }

  /**
   * ringfence's own server: listed like any (its `expose` decisions audited, the policy's tool
   * allowlist and pins applied), pinned by this build (`own-pins.ts`), its tools under their own
   * names. A failure is reported and skips it, as any server's.
   */
  private async startOwn(upstream: Upstream): Promise<void> {
    for (const config of this.options.servers)
      if (config.name === upstream.name)
        this.options.log(
          `ringfence: skipped the registered server ${rendered(config.name, 'name')}: that name is ringfence's own (its tools are served instead). Register it under another name.`,
        );
    try {
      await upstream.start();
      const listed = await listServerDefinitions(upstream);
      const catalog = await buildServerCatalog({
        server: upstream.name,
        destination: upstream.destination,
        ...listed,
        localAllow: undefined,
        pins: builtInPins(upstream.name, listed.rawTools),
        guard: this.options.guard,
        policy: this.options.policy,
        naming: { prefixed: false },
      });
      await this.auditExposure(catalog);
      this.upstreams.set(upstream.name, upstream);
      this.states.set(upstream.name, { status: 'running', catalog });
      for (const line of catalogReport(catalog)) this.options.log(line);
    } catch (error) {
      const reason = (error as Error).message;
      this.states.set(upstream.name, { status: 'failed', reason });
      this.options.log(`ringfence: its own tools failed to start and are skipped: ${redactedLine(reason)}`);
    }
  }

  /** Create, start and list one server within the start budget; closed again if that fails. */
  private async launch(config: ServerConfig): Promise<{ upstream: Upstream; catalog: ServerCatalog }> {
    const timeoutMs = this.options.startTimeoutMs ?? 60_000;
    let upstream: Upstream | undefined;
    try {
      upstream = this.options.createUpstream(declaredEntry(config, this.options.policy));
      const started = upstream;
      this.options.attach(config, started);
      // One budget for starting and listing together.
      const catalog = await withTimeout(
        started.start().then(() => {
          startupMark(`${config.name}: started`);
          return this.listServer(started);
        }),
        timeoutMs,
        () =>
          new UpstreamError(
            'SERVER_START_TIMEOUT',
            `it did not start within ${Math.round(timeoutMs / 1000)} s`,
          ),
      );
      return { upstream: started, catalog };
    } catch (error) {
      await upstream?.close().catch(() => {});
      throw error;
    }
  }

  private async startServer(config: ServerConfig): Promise<void> {
    let launched: { upstream: Upstream; catalog: ServerCatalog };
    try {
      launched = await this.launch(config);
    } catch (error) {
      const reason = (error as Error).message;
      if ((error as { code?: unknown }).code === 'LOGIN_NEEDED') return this.awaitLogin(config, reason);
      this.states.set(config.name, { status: 'failed', reason });
      this.options.log(`ringfence: ${config.name} failed to start and is skipped: ${redactedLine(reason)}`);
      return;
    }
    await this.adopt(config, launched.upstream, launched.catalog);
  }

  /** A started and listed server becomes the one requests reach. */
  private async adopt(config: ServerConfig, started: Upstream, catalog: ServerCatalog): Promise<void> {
    this.awaiting.delete(config.name);
    this.upstreams.set(config.name, started);
    this.states.set(config.name, { status: 'running', catalog });
    this.options.listed?.(config, catalog);
    started.onListChanged(() => void this.refresh(config.name));
    started.onClosed((reason) => this.markStopped(config.name, reason));
    for (const line of catalogReport(catalog)) this.options.log(line);
    if (
      catalog.entries.length === 0 &&
      catalog.prompts.length === 0 &&
      catalog.withheld.every((w) => w.kind === 'filtered') &&
      catalog.withheld.length > 0
    ) {
      this.options.log(
        `ringfence: ${config.name}: every tool is filtered out by the allowlists; the server was stopped.`,
      );
      await this.stopServer(config.name, 'every tool is filtered out');
    }
  }

  /**
   * A remote server whose login is needed: what it was pinned with stays listed (nothing is
   * written to the pins), the person is told on stderr, and each request to it tries the
   * server again first (`revive`), so a login made meanwhile needs no restart.
   */
  private async awaitLogin(config: ServerConfig, reason: string): Promise<void> {
    const { placeholder, ...listed } = await pinnedListings(this.options.pins, config.name);
    const catalog = await this.pinnedCatalog(config, listed);
    this.states.set(config.name, { status: 'login-needed', reason, catalog });
    this.awaiting.set(
      config.name,
      awaitingLoginSide(
        config,
        () => this.revive(config),
        (kind, name) => this.stillExposed(catalog, config.name, kind, name),
        placeholder,
      ),
    );
    const count = catalog.entries.length + catalog.prompts.length;
    this.options.log(
      `ringfence: ${config.name}: ${redactedLine(reason)}${
        placeholder
          ? ` Until then the client is shown one tool of ringfence's, ${LOGIN_TOOL}, which says so.`
          : count > 0
            ? ` Its ${count} pinned tools and prompts stay listed; a call to one says the same until then.`
            : ''
      }`,
    );
  }

  /** The catalog of pinned definitions, built as a listing's is but written nowhere. */
  private async pinnedCatalog(config: ServerConfig, listed: ServerListings): Promise<ServerCatalog> {
    const catalog = await buildServerCatalog({
      server: config.name,
      destination: config.transport === 'http' ? `remote ${new URL(config.url).host}` : config.name,
      ...listed,
      localAllow: config.allow_tools,
      reviewFirst: config.review_first === true,
      pins: readOnlyPins(this.options.pins),
      guard: this.options.guard,
      policy: this.options.policy,
      naming: this.naming,
    });
    await this.auditExposure(catalog);
    return catalog;
  }

  /** Whether the server, listed again, exposes `name` with the digest it was pinned with. */
  private stillExposed(
    pinned: ServerCatalog,
    server: string,
    kind: 'tool' | 'prompt',
    name: string,
  ): boolean {
    const now = this.states.get(server)?.catalog;
    const find = (catalog: ServerCatalog | undefined) =>
      kind === 'tool'
        ? catalog?.entries.find((e) => e.tool === name)?.digest
        : catalog?.prompts.find((e) => e.prompt === name)?.digest;
    const before = find(pinned);
    return before !== undefined && before === find(now);
  }

  /** Start a server awaiting its login again; one attempt at a time, shared by the requests that wait. */
  private revive(config: ServerConfig): Promise<UpstreamRequests> {
    const running = this.upstreams.get(config.name);
    if (running && this.states.get(config.name)?.status === 'running') return Promise.resolve(running);
    let attempt = this.reviving.get(config.name);
    if (!attempt) {
      attempt = this.launch(config)
        .then(async ({ upstream, catalog }) => {
          await this.adopt(config, upstream, catalog);
          this.rebuildCatalog();
          return upstream as UpstreamRequests;
        })
        .catch((error: unknown) => {
          const state = this.states.get(config.name);
          if ((error as { code?: unknown }).code === 'LOGIN_NEEDED' && state?.status === 'login-needed')
            this.states.set(config.name, { ...state, reason: (error as Error).message });
          throw error;
        })
        .finally(() => this.reviving.delete(config.name));
      this.reviving.set(config.name, attempt);
    }
    return attempt;
  }

  private async listServer(upstream: Upstream, previous?: ServerCatalog): Promise<ServerCatalog> {
    const config = this.options.servers.find((s) => s.name === upstream.name)!;
    const listed = await listServerDefinitions(upstream);
    const catalog = await buildServerCatalog({
      server: upstream.name,
      destination: upstream.destination,
      ...listed,
      localAllow: config.allow_tools,
      reviewFirst: config.review_first === true,
      pins: this.options.pins,
      guard: this.options.guard,
      policy: this.options.policy,
      naming: this.naming,
    });
    await this.auditExposure(catalog, previous);
    return catalog;
  }

  /**
   * One `expose` decision per tool and prompt: at start for all, on a re-list only for those
   * whose outcome changed, so a server repeating "list changed" cannot grow the log with copies.
   */
  private async auditExposure(catalog: ServerCatalog, previous?: ServerCatalog): Promise<void> {
    // Queued together: the log batches them into few writes.
    await Promise.all(
      exposureDecisions(catalog, previous).map((refs) =>
        this.options.audit.append({
          type: 'mcp.decision',
          refs: { phase: 'expose', ...refs, ...policyRefOf(this.options.policy) } as never,
        }),
      ),
    );
  }

  /** Re-list one server after it said its tools or prompts changed; changed ones are withheld at once. */
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
        `ringfence: ${name}: re-listing its tools and prompts failed, all are withheld: ${redactedLine((error as Error).message)}`,
      );
    }
    this.rebuildCatalog();
  }

  private markStopped(name: string, reason: string): void {
    const state = this.states.get(name);
    if (state?.status !== 'running') return;
    this.states.set(name, { status: 'stopped', reason, catalog: state.catalog });
    this.options.log(
      `ringfence: ${name} stopped: ${redactedLine(reason)}. Its tools and prompts fail until the gateway restarts.`,
    );
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

  /** Close every upstream; what was exposed stays as it was (nothing is served any more). */
  async close(): Promise<void> {
    const all = [...this.upstreams.values()];
    this.upstreams.clear();
    await Promise.all(all.map((u) => u.close().catch(() => {})));
  }

  /** Config order, first come first served: a later name that collides is skipped with a message. */
  private rebuildCatalog(): void {
    const tools = this.rebuild(this.tools, (c) => c.entries);
    const prompts = this.rebuild(this.prompts, (c) => c.prompts);
    this.tools = tools.next;
    this.prompts = prompts.next;
    const serving = this.registered()
      .map((config) => this.states.get(config.name))
      .filter((state) => state?.catalog && state.status !== 'failed')
      .map((state) => state!.catalog!);
    const resources = this.resources.rebuild(serving);
    if (tools.changed) this.options.changed('catalogChanged');
    if (prompts.changed) this.options.changed('promptsChanged');
    if (resources) this.options.changed('resourcesChanged');
  }

  private rebuild<E extends Exposed>(
    current: ReadonlyMap<string, E>,
    pick: (catalog: ServerCatalog) => readonly E[],
  ): { next: Map<string, E>; changed: boolean } {
    const next = new Map<string, E>();
    for (const name of this.order()) {
      const state = this.states.get(name);
      if (!state?.catalog || state.status === 'failed') continue;
      for (const entry of pick(state.catalog)) {
        const earlier = next.get(entry.exposedName);
        if (earlier) {
          if (current.get(entry.exposedName)?.server !== entry.server) {
            this.options.log(
              `ringfence: skipped ${shownLabel(entry)}: the name ${rendered(entry.exposedName, 'name')} is already taken by ${shownLabel(earlier)}.`,
            );
          }
          continue;
        }
        next.set(entry.exposedName, entry);
      }
    }
    const changed =
      next.size !== current.size ||
      [...next].some(([name, entry]) => current.get(name)?.digest !== entry.digest);
    return { next, changed };
  }

  /** The exposed tools by exposed name, in config order. */
  get exposedTools(): ReadonlyMap<string, CatalogEntry> {
    return this.tools;
  }

  /** The exposed prompts by exposed name, in config order. */
  get exposedPrompts(): ReadonlyMap<string, PromptEntry> {
    return this.prompts;
  }

  /** The server behind an exposed tool or prompt name, or a readable URI, if it is listed. */
  serverOf(kind: DefinitionKind, exposedName: string): string | undefined {
    switch (kind) {
      case 'tool':
        return this.tools.get(exposedName)?.server;
      case 'prompt':
        return this.prompts.get(exposedName)?.server;
      case 'resource': {
        const resolved = this.resources.resolve(exposedName);
        return resolved.pass ? resolved.target.server : undefined;
      }
      default:
        return undefined;
    }
  }

  /** The running servers and their upstreams, in start order. */
  running(): [string, UpstreamRequests][] {
    return [...this.upstreams].filter(([name]) => this.states.get(name)?.status === 'running');
  }

  /** What the client is offered besides tools: what at least one running server offers. */
  offered(): OfferedCapabilities {
    const running = this.running();
    const any = (key: keyof UpstreamCapabilities) => running.some(([, u]) => u.capabilities()[key] === true);
    return {
      prompts: any('prompts'),
      completions: any('completions'),
      logging: any('logging'),
      resources: any('resources'),
      subscribe: any('subscribe'),
    };
  }

  serverStates(): ReadonlyMap<string, ServerState> {
    return this.states;
  }

  /** The server's catalog as last listed (also once it stopped), if it was listed. */
  catalogOf(server: string): ServerCatalog | undefined {
    return this.states.get(server)?.catalog;
  }

  withheld(): WithheldEntry[] {
    return [...this.states.values()].flatMap((s) => s.catalog?.withheld ?? []);
  }

  /**
   * Where a request for `server` goes: its upstream while it runs, or why it does not. With the
   * caller's protocol version, the side of the server that serves a caller of that era
   * (`Upstream.forCaller`: a 2025 caller of a remote 2026 server, its 2025 session).
   */
  target(server: string, protocolVersion?: string): Target {
    const state = this.states.get(server);
    const upstream = this.upstreams.get(server);
    const era = callerEraOf(protocolVersion);
    return {
      upstream:
        state?.status === 'running' && upstream
          ? era && upstream.forCaller
            ? upstream.forCaller(era)
            : upstream
          : state?.status === 'login-needed'
            ? this.awaiting.get(server)
            : undefined,
      unavailableReason: state && state.status !== 'running' ? state.reason : 'it is not running',
    };
  }
}

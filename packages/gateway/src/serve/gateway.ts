import { EventEmitter } from 'node:events';
import { type Naming, PREFIXED } from '../catalog/present.js';
import type { ServerConfig } from '../config/servers.js';
import type { DefinitionKind } from '../pins/kinds.js';
import type { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { Caller, CallToolResult } from '../ports/caller.js';
import { UpstreamError } from '../ports/errors.js';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { Upstream, UpstreamCapabilities } from '../ports/upstream.js';
import { type TaskEvent, TaskRegistry, type TaskSnapshot } from '../tasks/index.js';
import { redactedLine } from '../text/redact.js';
import { rendered } from '../text/render.js';
import { startupMark } from '../util/startup.js';
import { withTimeout } from '../util/timeout.js';
import {
  buildServerCatalog,
  type CatalogEntry,
  type PromptEntry,
  type ServerCatalog,
  type WithheldEntry,
  withheldLine,
} from './catalog.js';
import { type CompletionAnswer, completePrompt } from './completion.js';
import {
  catalogReport,
  type Exposed,
  exposureDecisions,
  outcomeKeys,
  shownLabel,
  withheldKey,
} from './exposure.js';
import { localFailureResult } from './local-failure.js';
import { forwardLogLevel } from './log-levels.js';
import { DEFAULT_LOG_RATE, type LogRateOptions, LogRelay, type RelayedLog } from './log-relay.js';
import {
  CallRefused,
  type ForwardedRequest,
  lookup,
  type PipelineDeps,
  type PromptResult,
  type ReadResult,
  runForward,
  startToolTask,
  upstreamErrorSource,
} from './pipeline/index.js';
import { refusedText } from './refused.js';
import { readThrough, Subscriptions } from './resource-reads.js';
import { ResourceIndex } from './resources.js';
import { SERVER_INFO } from './server-info.js';
import { declaredEntry, type RequestSink, ServerRequests } from './server-requests.js';
import { firstSightOf, withheldRefusal } from './withheld.js';

export interface GatewayOptions {
  readonly servers: readonly ServerConfig[];
  readonly pins: PinStore;
  readonly guard: SchemaChecks;
  readonly audit: AuditSink;
  readonly createUpstream: (config: ServerConfig) => Upstream;
  /**
   * A report line for people: stderr, never stdout. What servers chose (names, reasons, error
   * text) is rendered once where the line is built, names as names and the rest as one line; the
   * sink passes the whole line through `guardedLine` (the CLI's `reportLine`), which changes
   * nothing rendered. See docs/untrusted-text.md.
   */
  readonly log: (line: string) => void;
  readonly session: string;
  readonly policy?: PolicyView;
  readonly startTimeoutMs?: number;
  /** Serialized result size cap (bytes). */
  readonly maxResultBytes?: number;
  /** How exposed names are formed: prefixed with the server (default), or the server's own (`--only`). */
  readonly naming?: Naming;
  /** Each server's log budget. */
  readonly logRate?: LogRateOptions;
  /**
   * Said to every client in its `initialize` instructions, before the usual text: a client that
   * shows instructions (or a model that reads them) learns why there is nothing to call.
   */
  readonly notice?: string;
}

/** The capabilities a client is offered: what at least one running server offers. */
export type OfferedCapabilities = UpstreamCapabilities;

export type ServerState =
  | { readonly status: 'running'; readonly catalog: ServerCatalog }
  | { readonly status: 'failed' | 'stopped'; readonly reason: string; readonly catalog?: ServerCatalog };

/**
 * The gateway's heart: starts every upstream at once, builds the catalog (tools and prompts) in
 * config order, runs each call and prompt request through the pipeline, and relays completions
 * and log messages. Emits `catalogChanged` when the exposed tools change, `promptsChanged` when
 * the exposed prompts change, and `log` for each server log message that passes its rate limit.
 */
export class Gateway extends EventEmitter<{
  catalogChanged: [];
  promptsChanged: [];
  resourcesChanged: [];
  /** A server said a resource changed: its URI as clients are shown it. */
  resourceUpdated: [string];
  log: [RelayedLog];
}> {
  readonly policy: PolicyView;
  private readonly upstreams = new Map<string, Upstream>();
  private readonly states = new Map<string, ServerState>();
  private catalog = new Map<string, CatalogEntry>();
  private prompts = new Map<string, PromptEntry>();
  private readonly logs: LogRelay;
  private readonly serverRequests: ServerRequests;
  readonly resources: ResourceIndex;
  private readonly subscriptions: Subscriptions;
  /** Every task this gateway serves, for every client session (tasks belong to principals, not sessions). */
  readonly tasks: TaskRegistry;

  constructor(readonly options: GatewayOptions) {
    super();
    // Each connected session listens for catalog, prompt and log changes (and lets go when it
    // ends): the number is that of live sessions, which --http bounds per token, not a leak.
    this.setMaxListeners(0);
    this.policy = options.policy ?? LOCAL_ONLY;
    this.resources = new ResourceIndex(
      this.naming,
      this.naming.prefixed ? undefined : options.servers[0]?.name,
    );
    this.subscriptions = new Subscriptions(
      this.resources,
      (s) => this.target(s),
      () => this.pipelineDeps(),
    );
    this.logs = new LogRelay((log) => this.emit('log', log), options.logRate ?? DEFAULT_LOG_RATE);
    this.tasks = new TaskRegistry({ onEvent: (event) => this.auditTask(event) });
    this.serverRequests = new ServerRequests({
      audit: options.audit,
      policy: this.policy,
      policyRef: () => this.policyRef(),
    });
  }

  /** Start all servers concurrently; a server that fails is reported and skipped. */
  async start(): Promise<void> {
    await this.options.audit.append({
      type: 'gateway.start',
      refs: { pid: process.pid, version: SERVER_INFO.version, ...this.policyRef() },
    });
    startupMark('gateway: start entry written');
    await Promise.all(this.options.servers.map((config) => this.startServer(config)));
    this.rebuildCatalog();
    startupMark('gateway: catalog built');
  }

  private async startServer(config: ServerConfig): Promise<void> {
    const timeoutMs = this.options.startTimeoutMs ?? 60_000;
    let upstream: Upstream | undefined;
    try {
      upstream = this.options.createUpstream(declaredEntry(config, this.policy));
      const started = upstream;
      started.onLog((params) => {
        const catalog = this.states.get(config.name)?.catalog;
        if (!this.held(config)) this.logs.relay(config.name, params);
        else if (catalog) this.dropHeld(config.name, 1);
        else this.early.set(config.name, (this.early.get(config.name) ?? 0) + 1);
      });
      started.onServerRequest((request) => this.serverRequests.handle(config, request));
      started.onResourceUpdated((uri) => {
        if (this.held(config)) return;
        const shown = this.subscriptions.updated(config.name, uri);
        if (shown !== undefined) this.emit('resourceUpdated', shown);
      });
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
      this.upstreams.set(config.name, started);
      this.states.set(config.name, { status: 'running', catalog });
      const early = this.early.get(config.name) ?? 0;
      this.early.delete(config.name);
      if (early > 0 && catalog.awaitingReview) this.dropHeld(config.name, early);
      else if (early > 0)
        this.options.log(
          `ringfence: ${config.name}: dropped ${early} log message(s) it sent while starting, before its listing showed it is not awaiting a first review; later ones are relayed.`,
        );
      started.onListChanged(() => void this.refresh(config.name));
      started.onClosed((reason) => this.markStopped(config.name, reason));
      this.report(catalog);
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
    } catch (error) {
      const reason = (error as Error).message;
      this.states.set(config.name, { status: 'failed', reason });
      this.options.log(`ringfence: ${config.name} failed to start and is skipped: ${redactedLine(reason)}`);
      await upstream?.close().catch(() => {});
    }
  }

  /** Log messages dropped per server held at first sight (see `held`). */
  private readonly heldLogs = new Map<string, number>();

  /**
   * Whether nothing of `config`'s server may reach a client: it awaits its first review (first
   * sight withholds and nothing of it was ever approved). Before its listing is known, a server
   * that first sight would withhold counts as held, since its listing may yet show it is new.
   */
  private held(config: ServerConfig): boolean {
    const catalog = this.states.get(config.name)?.catalog;
    if (catalog) return catalog.awaitingReview;
    return firstSightOf(this.policy, config.name, config.review_first === true).mode === 'withhold';
  }

  /** Log messages dropped before a server's listing said whether it is held. */
  private readonly early = new Map<string, number>();

  /** Count a held server's dropped log messages; the first drop of a start is said on stderr. */
  private dropHeld(name: string, dropped: number): void {
    const before = this.heldLogs.get(name) ?? 0;
    this.heldLogs.set(name, before + dropped);
    if (before === 0)
      this.options.log(
        `ringfence: ${name} awaits its first review, so its log messages are dropped, not relayed to clients (how many is said when the gateway stops). Read its definitions with: ringfence mcp pins show ${name}, then approve at a terminal with: ringfence mcp pins approve ${name}`,
      );
  }

  private async listServer(upstream: Upstream, previous?: ServerCatalog): Promise<ServerCatalog> {
    const config = this.options.servers.find((s) => s.name === upstream.name)!;
    const listing = await upstream.listTools();
    const problems = [...listing.problems];
    let rawPrompts: readonly unknown[] | undefined;
    if (upstream.capabilities().prompts) {
      // A prompt listing that fails costs the server its prompts, not its tools.
      try {
        const prompts = await upstream.listPrompts();
        rawPrompts = prompts.prompts;
        problems.push(...prompts.problems.map((problem) => `prompts: ${problem}`));
      } catch (error) {
        problems.push(`listing its prompts failed, so none is exposed: ${upstreamErrorSource(error)}`);
      }
    }
    let rawResources: readonly unknown[] | undefined;
    let rawTemplates: readonly unknown[] | undefined;
    if (upstream.capabilities().resources) {
      // As for prompts: a failed resource listing costs the server its resources alone.
      try {
        const [resources, templates] = await Promise.all([
          upstream.listResources(),
          upstream.listResourceTemplates(),
        ]);
        rawResources = resources.resources;
        rawTemplates = templates.resourceTemplates;
        problems.push(...[...resources.problems, ...templates.problems].map((p) => `resources: ${p}`));
      } catch (error) {
        problems.push(`listing its resources failed, so none is exposed: ${upstreamErrorSource(error)}`);
      }
    }
    const catalog = await buildServerCatalog({
      server: upstream.name,
      destination: upstream.destination,
      rawTools: listing.tools,
      ...(rawPrompts ? { rawPrompts } : {}),
      ...(rawResources && rawTemplates ? { rawResources, rawTemplates } : {}),
      problems,
      localAllow: config.allow_tools,
      reviewFirst: config.review_first === true,
      pins: this.options.pins,
      guard: this.options.guard,
      policy: this.policy,
      naming: this.naming,
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

  private get naming(): Naming {
    return this.options.naming ?? PREFIXED;
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
          refs: { phase: 'expose', ...refs, ...this.policyRef() } as never,
        }),
      ),
    );
  }

  private report(catalog: ServerCatalog): void {
    for (const line of catalogReport(catalog)) this.options.log(line);
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

  /** Config order, first come first served: a later name that collides is skipped with a message. */
  private rebuildCatalog(): void {
    const tools = this.rebuild(this.catalog, (c) => c.entries);
    const prompts = this.rebuild(this.prompts, (c) => c.prompts);
    this.catalog = tools.next;
    this.prompts = prompts.next;
    const serving = this.options.servers
      .map((config) => this.states.get(config.name))
      .filter((state) => state?.catalog && state.status !== 'failed')
      .map((state) => state!.catalog!);
    const resources = this.resources.rebuild(serving);
    if (tools.changed) this.emit('catalogChanged');
    if (prompts.changed) this.emit('promptsChanged');
    if (resources) this.emit('resourcesChanged');
  }

  private rebuild<E extends Exposed>(
    current: ReadonlyMap<string, E>,
    pick: (catalog: ServerCatalog) => readonly E[],
  ): { next: Map<string, E>; changed: boolean } {
    const next = new Map<string, E>();
    for (const config of this.options.servers) {
      const state = this.states.get(config.name);
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

  /** The tools the client may see, in config order. */
  listTools(): Record<string, unknown>[] {
    return [...this.catalog.values()].map((entry) => entry.presented);
  }

  /** The prompts the client may see, in config order. */
  listPrompts(): Record<string, unknown>[] {
    return [...this.prompts.values()].map((entry) => entry.presented);
  }

  private readonly busy = new Map<string, number>();

  /**
   * Run `work` counted as a request in flight to `server` (see `isBusy`); `sink` is the session
   * it came from, where the server's sampling and elicitation requests meanwhile may go.
   */
  async busyWith<T>(server: string, work: () => Promise<T>, sink?: RequestSink): Promise<T> {
    this.busy.set(server, (this.busy.get(server) ?? 0) + 1);
    const release = sink ? this.serverRequests.busy(server, sink) : undefined;
    try {
      return await work();
    } finally {
      release?.();
      const left = (this.busy.get(server) ?? 1) - 1;
      if (left > 0) this.busy.set(server, left);
      else this.busy.delete(server);
    }
  }

  /** Whether any client session has a request in flight to `server`. */
  isBusy(server: string): boolean {
    return this.busy.has(server);
  }

  /** The server behind an exposed tool or prompt name, or a readable URI, if it is listed. */
  serverOf(kind: DefinitionKind, exposedName: string): string | undefined {
    if (kind === 'resource') {
      const resolved = this.resources.resolve(exposedName);
      return resolved.pass ? resolved.target.server : undefined;
    }
    return (kind === 'tool' ? this.catalog : kind === 'prompt' ? this.prompts : undefined)?.get(exposedName)
      ?.server;
  }

  /** What the client is offered besides tools: what at least one running server offers. */
  offered(): OfferedCapabilities {
    const running = [...this.upstreams].filter(([name]) => this.states.get(name)?.status === 'running');
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

  withheld(): WithheldEntry[] {
    return [...this.states.values()].flatMap((s) => s.catalog?.withheld ?? []);
  }

  /** Why a name is not served: withheld (with the command that would expose it) or unknown. */
  private notListed(kind: 'tool' | 'prompt', name: string, unknown: string): string {
    return withheldRefusal(this.withheld(), kind, name, this.naming) ?? `ringfence: ${unknown}`;
  }

  private target(server: string): { upstream: Upstream | undefined; unavailableReason: string } {
    const state = this.states.get(server);
    const upstream = this.upstreams.get(server);
    return {
      upstream: state?.status === 'running' ? upstream : undefined,
      unavailableReason: state && state.status !== 'running' ? state.reason : 'it is not running',
    };
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
    const found = lookup(this.catalog, name, 'tool');
    if (!found.pass) throw new CallRefused('UNKNOWN_TOOL', this.notListed('tool', name, found.what));
    const { entry } = found;
    return runForward(this.pipelineDeps(), {
      method: 'tools/call',
      entry,
      args,
      caller,
      ...this.target(entry.server),
      protocolVersion,
      ...call,
    }).catch((error: unknown) => localFailureResult(error, name));
  }

  /**
   * A task-augmented call: decided as `callTool` decides it, before any task exists; allowed, it
   * runs as a task of the caller's (see `startToolTask`). A refusal comes back as the error result
   * a plain call would get; a name never listed is a `CallRefused`, as for `callTool`.
   */
  async startToolTask(
    name: string,
    args: unknown,
    caller: Caller,
    protocolVersion: string | undefined,
    options: { ttlMs?: number; sink?: RequestSink; signal?: AbortSignal } = {},
  ): Promise<{ task: TaskSnapshot } | { refused: CallToolResult }> {
    const found = lookup(this.catalog, name, 'tool');
    if (!found.pass) throw new CallRefused('UNKNOWN_TOOL', this.notListed('tool', name, found.what));
    const { entry } = found;
    return startToolTask(
      this.pipelineDeps(),
      {
        method: 'tools/call',
        entry,
        args,
        caller,
        ...this.target(entry.server),
        protocolVersion,
        ...(options.signal ? { signal: options.signal } : {}),
      },
      this.tasks,
      {
        ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
        around: (work) => this.busyWith(entry.server, work, options.sink),
      },
    ).catch((error: unknown) => ({ refused: localFailureResult(error, name) }));
  }

  /** A task request refused (no such task of the caller's) or a cancel done, as an `mcp.task` entry. */
  private async auditTask(event: TaskEvent): Promise<void> {
    const who = {
      ...(event.owner.agent ? { agent: event.owner.agent } : {}),
      ...(event.owner.scope ? { scope: event.owner.scope } : {}),
    };
    await this.options.audit.append({
      type: 'mcp.task',
      ...who,
      refs:
        event.kind === 'cancelled'
          ? {
              op: 'cancel',
              task: event.id,
              allowed: true,
              reason: 'cancelled by its owner',
              server: event.server,
              tool: event.tool,
            }
          : {
              op: event.op,
              task: event.id,
              allowed: false,
              reason: "the caller has no task of this id (unknown, expired, or another principal's)",
            },
    });
  }

  /**
   * Run one prompt request through the pipeline. `prompts/get` has no error result, so every
   * refusal is thrown as a `CallRefused` that says why (the endpoint sends it as a JSON-RPC error).
   * `protocolVersion` and `call`, as for `callTool`, decide what the messages' content may carry
   * and carry the client's cancel and progress.
   */
  async getPrompt(
    name: string,
    args: unknown,
    caller: Caller,
    protocolVersion: string | undefined,
    call: Pick<ForwardedRequest, 'signal' | 'onProgress'> = {},
  ): Promise<PromptResult> {
    const found = lookup(this.prompts, name, 'prompt');
    if (!found.pass) throw new CallRefused('UNKNOWN_PROMPT', this.notListed('prompt', name, found.what));
    const { entry } = found;
    const reply = await runForward(this.pipelineDeps(), {
      method: 'prompts/get',
      entry,
      args,
      caller,
      ...this.target(entry.server),
      protocolVersion,
      ...call,
    }).catch((error: unknown) => localFailureResult(error, name));
    const refused = refusedText(reply);
    if (refused !== undefined) throw new CallRefused('REFUSED', refused);
    return reply as PromptResult;
  }

  /** `resources/read` through the pipeline (see `readThrough`); every refusal is a `CallRefused`. */
  readResource(
    uri: string,
    caller: Caller,
    protocolVersion: string | undefined,
    call: Pick<ForwardedRequest, 'signal' | 'onProgress'> = {},
  ): Promise<ReadResult> {
    const deps = { pipeline: this.pipelineDeps(), target: (s: string) => this.target(s) };
    return readThrough(this.resources, deps, { uri, caller, protocolVersion, call });
  }

  /**
   * `resources/subscribe` or (with `on` false) unsubscribe, counted over sessions and decided
   * through the pipeline (see `Subscriptions`); every refusal is a `CallRefused`.
   */
  subscribe(uri: string, on: boolean, caller: Caller = {}): Promise<string> {
    return this.subscriptions
      .set(uri, on, caller)
      .catch(refusedLocally(on ? 'the subscription' : 'the unsubscription'));
  }

  /** `completion/complete`, for an exposed prompt or template only, through the pipeline (see `completePrompt`). */
  complete(
    params: Record<string, unknown>,
    caller: Caller = {},
    call: { signal?: AbortSignal } = {},
  ): Promise<CompletionAnswer> {
    const deps = {
      pipeline: this.pipelineDeps(),
      caller,
      target: (s: string) => this.target(s),
      template: (uri: string) => this.resources.template(uri),
    };
    return completePrompt(this.prompts, params, deps, call).catch(refusedLocally('the completion'));
  }

  /**
   * `logging/setLevel`, forwarded through the pipeline to every running server that offers
   * logging: each server's whole-server rules decide whether it is told (an `ask` rule does not:
   * nobody is asked about a log level), with a decision and a result entry. The level is shared:
   * the servers are shared by every client session, so the last level set wins. A server not
   * told is named on stderr; the session's own filter is set whatever the servers were told.
   */
  async setLoggingLevel(level: string, caller: Caller = {}): Promise<void> {
    // A server held at first sight is not told: nothing of a client reaches it either, and its
    // log messages are dropped whatever level it logs at.
    const targets = [...this.upstreams].filter(
      ([name, upstream]) =>
        this.states.get(name)?.status === 'running' &&
        upstream.capabilities().logging &&
        this.states.get(name)?.catalog?.awaitingReview !== true,
    );
    const deps = this.pipelineDeps();
    await Promise.all(
      targets.map(([name, upstream]) =>
        forwardLogLevel(deps, { name, upstream }, level, caller, this.options.log),
      ),
    );
  }

  private pipelineDeps(): PipelineDeps {
    return {
      policy: this.policy,
      guard: this.options.guard,
      audit: this.options.audit,
      policyRef: this.policyRef(),
      maxResultBytes: this.options.maxResultBytes ?? 1024 * 1024,
      log: this.options.log,
      linkUri: (server, uri, follow) => this.resources.link(server, uri, follow),
    };
  }

  async close(): Promise<void> {
    this.tasks.close();
    this.logs.close();
    for (const [name, count] of this.heldLogs)
      this.options.log(
        `ringfence: ${name}: dropped ${count} log message(s) while it awaited its first review. Review it with: ringfence mcp pins show ${name}`,
      );
    this.heldLogs.clear();
    const all = [...this.upstreams.values()];
    this.upstreams.clear();
    await Promise.all(all.map((u) => u.close().catch(() => {})));
  }
}

/**
 * For a method answered with a JSON-RPC error: an audit write that failed refuses the request, as
 * it refuses a call (`localFailureResult`: nothing was forwarded, and the fix is named).
 */
function refusedLocally(label: string): (error: unknown) => never {
  return (error) => {
    if (error instanceof CallRefused) throw error;
    throw new CallRefused('REFUSED', refusedText(localFailureResult(error, label)) as string);
  };
}

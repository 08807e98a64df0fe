import { EventEmitter } from 'node:events';
import type { Naming } from '../catalog/present.js';
import type { ServerConfig } from '../config/servers.js';
import type { KnownCredentials } from '../credentials/known.js';
import { combinedCredentials, fixedCredentials, registeredCredentials } from '../credentials/registered.js';
import { SecretScanner } from '../credentials/scan/scanner.js';
import type { DefinitionKind } from '../pins/kinds.js';
import type { PinStore } from '../pins/store.js';
import type { AuditSink } from '../ports/audit.js';
import type { Caller, CallToolResult } from '../ports/caller.js';
import type { CallObserver } from '../ports/observer.js';
import { LOCAL_ONLY, type PolicyView } from '../ports/policy.js';
import type { SchemaChecks } from '../ports/schema.js';
import type { Upstream } from '../ports/upstream.js';
import { type TaskEvent, TaskRegistry, type TaskSnapshot } from '../tasks/index.js';
import type { CallTracer } from '../traces/index.js';
import { startupMark } from '../util/startup.js';
import type { WithheldEntry } from './catalog.js';
import type { CompletionAnswer } from './completion.js';
import {
  type ClientMethod,
  type ClientMethods,
  type DispatchContext,
  type DispatchDeps,
  dispatch,
  dispatchToolTask,
} from './dispatch.js';
import { HeldLogs } from './held-logs.js';
import { Continuations } from './input-required/continuations.js';
import { ModernCalls } from './input-required/modern-call.js';
import { InputRequiredRelay } from './input-required/relay.js';
import { RequestStateSeal } from './input-required/sealed-state.js';
import { DEFAULT_LOG_RATE, type LogRateOptions, LogRelay, type RelayedLog } from './log-relay.js';
import type { PipelineDeps, PromptResult, ReadResult } from './pipeline/index.js';
import { type OfferedCapabilities, policyRefOf, ServerRegistry, type ServerState } from './registry.js';
import { Subscriptions } from './resource-reads.js';
import type { ResourceIndex } from './resources.js';
import { SERVER_INFO } from './server-info.js';
import { type RequestSink, ServerRequests } from './server-requests.js';

/** The client's cancel and progress sink, for a forwarded request. */
type Forwarding = Pick<DispatchContext, 'signal' | 'onProgress'>;

export type { OfferedCapabilities, ServerState } from './registry.js';

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
  /**
   * Stored credentials (the credential store, OAuth tokens), beside those the registrations hold
   * (`credentials/registered.ts`, always included): what the egress and ingress scans look for.
   */
  readonly credentials?: KnownCredentials;
  /** ringfence's own server (`mcp serve --sandbox-tools`), served beside the registered ones. */
  readonly ownServer?: Upstream;
  /** OpenTelemetry spans per forwarded call (traces/); absent: none, at no cost per call. */
  readonly tracer?: CallTracer;
  /** Told each forwarded request's decision and times (`mcp serve --metrics`; traces). */
  readonly observer?: CallObserver;
}

/**
 * The gateway as one piece, composed of: the registry (`registry.ts`: starts the servers, keeps
 * the catalog, audits what is exposed), the relay of their log messages (`held-logs.ts`,
 * `log-relay.ts`), their sampling and elicitation requests (`server-requests.ts`), and the client
 * methods, each run through the pipeline. Emits `catalogChanged` when the exposed tools change,
 * `promptsChanged` when the exposed prompts change, and `log` for each server log message that
 * passes its rate limit.
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
  readonly registry: ServerRegistry;
  private readonly logs: LogRelay;
  private readonly heldLogs: HeldLogs;
  private readonly serverRequests: ServerRequests;
  /**
   * MCP 2026-07-28 input-required (input-required/): the rounds of 2026 clients' calls, their
   * sealed requestState (a key made for this process) and the calls held open for them.
   */
  readonly modernCalls: ModernCalls;
  private readonly subscriptions: Subscriptions;
  private readonly dispatchDeps: DispatchDeps;
  /** Every task this gateway serves, for every client session (tasks belong to principals, not sessions). */
  readonly tasks: TaskRegistry;
  /** The credential scan of every forwarded request's arguments and every answer (issue 27). */
  private readonly secrets: SecretScanner;

  constructor(readonly options: GatewayOptions) {
    super();
    // Each connected session listens for catalog, prompt and log changes (and lets go when it
    // ends): the number is that of live sessions, which --http bounds per token, not a leak.
    this.setMaxListeners(0);
    this.policy = options.policy ?? LOCAL_ONLY;
    this.secrets = new SecretScanner(
      combinedCredentials(fixedCredentials(registeredCredentials(options.servers)), options.credentials),
      this.policy.secretPatterns ?? [],
    );
    if (this.secrets.problem) options.log(`ringfence: ${this.secrets.problem}`);
    this.logs = new LogRelay((log) => this.emit('log', log), options.logRate ?? DEFAULT_LOG_RATE);
    this.tasks = new TaskRegistry({ onEvent: (event) => this.auditTask(event) });
    this.serverRequests = new ServerRequests({
      audit: options.audit,
      policy: this.policy,
      policyRef: () => this.policyRef(),
    });
    this.registry = new ServerRegistry({
      ...options,
      policy: this.policy,
      changed: (change) => this.emit(change),
      attach: (config, upstream) => this.attach(config, upstream),
      listed: (config, catalog) => this.heldLogs.listed(config, catalog),
    });
    this.heldLogs = new HeldLogs({
      policy: this.policy,
      relay: this.logs,
      catalogOf: (server) => this.registry.catalogOf(server),
      log: options.log,
    });
    this.subscriptions = new Subscriptions(
      this.resources,
      (s) => this.registry.target(s),
      () => this.pipelineDeps(),
    );
    this.dispatchDeps = {
      registry: this.registry,
      subscriptions: this.subscriptions,
      pipeline: () => this.pipelineDeps(),
      log: options.log,
    };
    const continuations = new Continuations();
    this.modernCalls = new ModernCalls(
      new InputRequiredRelay({
        seal: new RequestStateSeal(),
        continuations,
        serverRequests: this.serverRequests,
        audit: options.audit,
        policyRef: () => this.policyRef(),
      }),
      continuations,
      this.serverRequests,
    );
  }

  /** Resources and templates clients may read (the registry's). */
  get resources(): ResourceIndex {
    return this.registry.resources;
  }

  /** Start all servers concurrently; a server that fails is reported and skipped. */
  async start(): Promise<void> {
    await this.options.audit.append({
      type: 'gateway.start',
      refs: { pid: process.pid, version: SERVER_INFO.version, ...this.policyRef() },
    });
    startupMark('gateway: start entry written');
    await this.registry.start();
  }

  /** What the gateway hears of one server: its log messages, requests and resource updates. */
  private attach(config: ServerConfig, upstream: Upstream): void {
    upstream.onLog((params) => this.heldLogs.message(config, params));
    upstream.onServerRequest((request) => this.serverRequests.handle(config, request));
    upstream.onResourceUpdated((uri) => {
      if (this.heldLogs.held(config)) return;
      const shown = this.subscriptions.updated(config.name, uri);
      if (shown !== undefined) this.emit('resourceUpdated', shown);
    });
  }

  /** The policy as audit entries name it. */
  policyRef(): PipelineDeps['policyRef'] {
    return policyRefOf(this.policy);
  }

  /** Re-list one server after it said its tools or prompts changed; changed ones are withheld at once. */
  refresh(name: string): Promise<void> {
    return this.registry.refresh(name);
  }

  /** The tools the client may see, in config order. */
  listTools(): Record<string, unknown>[] {
    return [...this.registry.exposedTools.values()].map((entry) => entry.presented);
  }

  /** The prompts the client may see, in config order. */
  listPrompts(): Record<string, unknown>[] {
    return [...this.registry.exposedPrompts.values()].map((entry) => entry.presented);
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
      // The session is the call's owner: the caller names it on the request (`owner`), where the
      // upstream call starts (ports/call-owner.ts), so a server request on that call's own stream
      // goes to it.
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

  /** Requests in flight to `server`, over every session and agent. */
  busyCount(server: string): number {
    return this.busy.get(server) ?? 0;
  }

  /** The server behind an exposed tool or prompt name, or a readable URI, if it is listed. */
  serverOf(kind: DefinitionKind, exposedName: string): string | undefined {
    return this.registry.serverOf(kind, exposedName);
  }

  /** What the client is offered besides tools: what at least one running server offers. */
  offered(): OfferedCapabilities {
    return this.registry.offered();
  }

  serverStates(): ReadonlyMap<string, ServerState> {
    return this.registry.serverStates();
  }

  withheld(): WithheldEntry[] {
    return this.registry.withheld();
  }

  /**
   * Answer one client method (`dispatch.ts`): what every codec calls, whatever its protocol era.
   * A refusal of a method with no error result is thrown as a `CallRefused`.
   */
  dispatch<M extends ClientMethod>(
    method: M,
    params: ClientMethods[M]['params'],
    context: DispatchContext,
  ): Promise<ClientMethods[M]['result']> {
    return dispatch(this.dispatchDeps, method, params, context);
  }

  // The methods by name, each one `dispatch` (for the CLI and tests; a codec calls `dispatch`).

  /** `tools/call`: refusals come back as error results that say why. */
  callTool(
    name: string,
    args: unknown,
    caller: Caller,
    protocolVersion: string | undefined,
    call: Forwarding = {},
  ): Promise<CallToolResult> {
    return this.dispatch('tools/call', { name, arguments: args }, { caller, protocolVersion, ...call });
  }

  /**
   * A task-augmented call: decided as `callTool` decides it, before any task exists; allowed, it
   * runs as a task of the caller's (see `dispatchToolTask`). A refusal comes back as the error result
   * a plain call would get; a name never listed is a `CallRefused`, as for `callTool`.
   */
  async callAsTask(
    name: string,
    args: unknown,
    caller: Caller,
    protocolVersion: string | undefined,
    options: { ttlMs?: number; sink?: RequestSink; signal?: AbortSignal } = {},
  ): Promise<{ task: TaskSnapshot } | { refused: CallToolResult }> {
    return dispatchToolTask(
      this.dispatchDeps,
      { name, arguments: args },
      {
        caller,
        protocolVersion,
        ...(options.signal ? { signal: options.signal } : {}),
        ...(options.sink ? { owner: options.sink } : {}),
      },
      this.tasks,
      {
        ...(options.ttlMs !== undefined ? { ttlMs: options.ttlMs } : {}),
        around: (server, work) => this.busyWith(server, work, options.sink),
      },
    );
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

  /** `prompts/get`: every refusal is thrown as a `CallRefused`. */
  getPrompt(
    name: string,
    args: unknown,
    caller: Caller,
    protocolVersion: string | undefined,
    call: Forwarding = {},
  ): Promise<PromptResult> {
    return this.dispatch('prompts/get', { name, arguments: args }, { caller, protocolVersion, ...call });
  }

  /** `resources/read`: every refusal is a `CallRefused`. */
  readResource(
    uri: string,
    caller: Caller,
    protocolVersion: string | undefined,
    call: Forwarding = {},
  ): Promise<ReadResult> {
    return this.dispatch('resources/read', { uri }, { caller, protocolVersion, ...call });
  }

  /** `resources/subscribe` or (with `on` false) unsubscribe; returns the URI as clients are shown it. */
  subscribe(uri: string, on: boolean, caller: Caller = {}): Promise<string> {
    return this.dispatch(on ? 'resources/subscribe' : 'resources/unsubscribe', { uri }, { caller });
  }

  /** `completion/complete`, for an exposed prompt or template only. */
  complete(
    params: Record<string, unknown>,
    caller: Caller = {},
    call: { signal?: AbortSignal } = {},
  ): Promise<CompletionAnswer> {
    return this.dispatch('completion/complete', params, { caller, ...call });
  }

  /** `logging/setLevel`, forwarded to every running server that offers logging and may be told. */
  async setLoggingLevel(level: string, caller: Caller = {}): Promise<void> {
    await this.dispatch('logging/setLevel', { level }, { caller });
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
      secrets: this.secrets,
      ...(this.options.tracer ? { tracer: this.options.tracer } : {}),
      ...(this.options.ownServer ? { ownServer: this.options.ownServer.name } : {}),
      ...(this.options.observer ? { observer: this.options.observer } : {}),
    };
  }

  async close(): Promise<void> {
    this.tasks.close();
    this.logs.close();
    this.heldLogs.close();
    await this.registry.close();
    // The spans of the last calls, sent before the process ends (bounded: a collector that is
    // down does not hold the shutdown).
    await this.options.tracer?.flush();
  }
}

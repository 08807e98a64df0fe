import type { CallLimits } from '../config/limits.js';
import type { ContainerServerConfig } from '../config/servers.js';
import type { Reach } from '../credentials/scan/reach.js';

/** What the gateway needs from any upstream MCP server, whatever carries it (HTTP, a container). */
export interface Upstream {
  readonly name: string;
  /** Where arguments go, for people: `sandbox mcp-NAME` or `remote HOST`. */
  readonly destination: string;
  /**
   * Where what it is sent can go from there: no network (`egress deny`), its allowlisted hosts,
   * any host, or (a remote server) its own host. The credential scan refuses every secret to a
   * server with no network and names the reach when it asks. Absent: not known (treated as a
   * network, never as none).
   */
  readonly reach?: Reach;
  /** Connect and initialise; rejects with a message for people. */
  start(): Promise<void>;
  /** What the server declared when it initialised (known once `start()` resolved). */
  capabilities(): UpstreamCapabilities;
  /**
   * The instructions the server gave when it initialised, still untrusted (known once `start()`
   * resolved; undefined when it gave none). Optional: an upstream without it gives none.
   */
  instructions?(): string | undefined;
  /**
   * The protocol era the server speaks, known once `start()` resolved: `modern` (2026-07-28,
   * `server/discover`) or `legacy` (2025, `initialize`). The gateway decides the same either way;
   * only the upstream client speaks differently.
   */
  era?(): UpstreamEra;
  /**
   * The server's `roots/list` answer: its mounts as it sees them (none for a remote server). A
   * 2026 server asks for roots in its `input_required`; ringfence answers them from here, never
   * the client. Optional: an upstream without it has its roots refused, never answered empty.
   */
  roots?(): { roots: { uri: string; name: string }[] };
  /**
   * The side of this server that serves a caller of `era` (the caller's protocol era): a remote
   * server whose primary connection speaks 2026-07-28 serves a 2025 caller's calls, prompts,
   * reads and completions over a companion 2025 session to the same URL, where the server offers
   * one (`upstream/legacy-companion.ts`). Absent, or the upstream itself: one era for everyone.
   */
  forCaller?(era: UpstreamEra): UpstreamRequests;
  /** How long its calls may run and how large their results may be (its entry's, or the defaults). */
  readonly limits: CallLimits;
  /** Every tool the server lists (all pages), each still untrusted and unparsed. */
  listTools(): Promise<ToolListing>;
  /** Every prompt the server lists (all pages), each still untrusted and unparsed. */
  listPrompts(): Promise<PromptListing>;
  /**
   * One tool call under `limits`. Rejects with an `UpstreamError` coded `CALL_CANCELLED` (the
   * signal aborted), `CALL_TIMEOUT` (no answer or progress in time) or `CALL_CEILING` (the
   * ceiling reached; the upstream request is cancelled either way) or `UPSTREAM_LOST` (the connection or the container
   * went away with the call in flight), or with the server's own error.
   */
  callTool(name: string, args: Record<string, unknown>, options?: CallOptions): Promise<unknown>;
  /** `prompts/get` under `limits`, failing as `callTool` does; the answer is untrusted and unparsed. */
  getPrompt(name: string, args: Record<string, string>, options?: CallOptions): Promise<unknown>;
  /** `completion/complete` with params as the gateway built them; the answer is untrusted. */
  complete(params: Record<string, unknown>, options?: { signal?: AbortSignal }): Promise<unknown>;
  /** `logging/setLevel`. */
  setLoggingLevel(level: string): Promise<void>;
  /** Every resource the server lists (all pages), each still untrusted and unparsed. */
  listResources(): Promise<ResourceListing>;
  /** Every resource template the server lists (all pages), untrusted and unparsed. */
  listResourceTemplates(): Promise<ResourceTemplateListing>;
  /** `resources/read` under `limits`, failing as `callTool` does; the answer is untrusted. */
  readResource(uri: string, options?: CallOptions): Promise<unknown>;
  /** `resources/subscribe` and `resources/unsubscribe`, for a URI of the server's own. */
  subscribeResource(uri: string, subscribe: boolean): Promise<void>;
  /** Each `notifications/resources/updated` the server sends: its URI, still untrusted. */
  onResourceUpdated(listener: (uri: unknown) => void): void;
  /**
   * Called (at most once per rate-limit window) when the server says its tools, prompts or
   * resources changed; the gateway then lists them all again.
   */
  onListChanged(listener: () => void): void;
  /** Each `notifications/message` the server sends, its params still untrusted. */
  onLog(listener: (params: unknown) => void): void;
  /**
   * Each `sampling/createMessage` and `elicitation/create` the server sends, still untrusted: the
   * handler's answer (or its error) goes back to the server. Without a handler they are refused.
   */
  onServerRequest(handler: ServerRequestHandler): void;
  /** Called once if the connection is lost outside of close(). */
  onClosed(listener: (reason: string) => void): void;
  close(): Promise<void>;
}

export type UpstreamEra = 'modern' | 'legacy';

/** The first 2026 revision: a version before it is a 2025-era one (the dates compare as text). */
export const FIRST_MODERN_VERSION = '2026-07-28';

/** Whether a protocol version is a 2025-era one (`initialize`, sessions). */
export const isLegacyVersion = (version: string): boolean => version < FIRST_MODERN_VERSION;

/** A caller's era from the version its endpoint negotiated; undefined when it has none. */
export function callerEraOf(protocolVersion: string | undefined): UpstreamEra | undefined {
  if (protocolVersion === undefined) return undefined;
  return isLegacyVersion(protocolVersion) ? 'legacy' : 'modern';
}

/** The requests a server may send to the client through the gateway. */
export const SERVER_REQUEST_METHODS = ['sampling/createMessage', 'elicitation/create'] as const;
export type ServerRequestMethod = (typeof SERVER_REQUEST_METHODS)[number];

/** One request from a server to the client, as it came (params untrusted). */
export interface ServerRequest {
  readonly method: ServerRequestMethod;
  readonly params: unknown;
  /** Aborts when the server cancels its request or the connection goes. */
  readonly signal: AbortSignal;
  /**
   * The owner (`ports/call-owner.ts`) of the call whose own answer stream carried the request:
   * only an HTTP upstream can tell (a POSTed call's event stream). Absent when it came any other
   * way (the session's GET stream, stdio, an id the server reused), and then nobody's for sure.
   */
  readonly owner?: object;
}

export type ServerRequestHandler = (request: ServerRequest) => Promise<Record<string, unknown>>;

/**
 * What the upstream client declares to one server at initialisation (2025), or at most on each
 * request (2026, narrowed to what the caller declared: `CallOptions.clientCapabilities`); also the
 * shape of a caller's own declaration. Declaring is not allowing: every request is decided again
 * when it comes (the gateway's `ServerRequests`).
 */
export interface ClientGrants {
  readonly sampling: boolean;
  readonly elicitation: boolean;
}

/** The server capabilities the gateway acts on; what it does not declare is not asked of it. */
export interface UpstreamCapabilities {
  readonly prompts: boolean;
  readonly completions: boolean;
  readonly logging: boolean;
  /** Resources and templates (absent: none). */
  readonly resources?: boolean;
  /** `resources/subscribe` (absent: none). */
  readonly subscribe?: boolean;
}

export interface ToolListing {
  /** Raw tool objects, in the order the server gave them. */
  readonly tools: readonly unknown[];
  /** Problems with the listing itself (a page cap, a repeated cursor): the listing is partial. */
  readonly problems: readonly string[];
}

export interface PromptListing {
  /** Raw prompt objects, in the order the server gave them. */
  readonly prompts: readonly unknown[];
  readonly problems: readonly string[];
}

export interface ResourceListing {
  readonly resources: readonly unknown[];
  readonly problems: readonly string[];
}

export interface ResourceTemplateListing {
  readonly resourceTemplates: readonly unknown[];
  readonly problems: readonly string[];
}

/** One progress notification of a call, checked (increasing, finite) and printable, for the caller. */
export interface CallProgress {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

export interface CallOptions {
  /** The client's cancel: when it aborts, the upstream request is cancelled too. */
  readonly signal?: AbortSignal;
  /** The call's progress, at most one every 100 ms; never called once the call has settled. */
  readonly onProgress?: (progress: CallProgress) => void;
  /** The client's W3C trace context, checked to be one: sent in the request's `_meta.traceparent`. */
  readonly traceparent?: string;
  /** A cap on the whole call from outside the server entry (the policy), and its name for people. */
  readonly cap?: { readonly ms: number; readonly source: string };
  /**
   * `tools/call` only: the tool's pinned definition says it must run as a task
   * (`execution.taskSupport: "required"`, MCP 2025-11-25), so the call is carried by a task of the
   * server's, which the upstream client creates, waits on and cancels; the answer is the call's.
   */
  readonly viaTask?: boolean;
  /**
   * The PINNED tool's input schema (the one the call was checked against): on a modern HTTP
   * upstream its `x-mcp-header` properties become `Mcp-Param-*` headers. Never a fresh listing's.
   */
  readonly inputSchema?: unknown;
  /**
   * Present when the caller relays a 2026 server's `input_required` (serve/input-required/): on a
   * modern upstream such an answer then comes back as it is (`resultType: 'input_required'`, its
   * input requests still untrusted) instead of failing the call, and a retry carries the answers
   * (`inputResponses`, under the server's own keys) and the server's own `requestState`. Absent,
   * an `input_required` answer fails the call: nobody would relay it.
   */
  readonly upstreamInput?: UpstreamInput;
  /**
   * What the calling client declared it can answer (its request's `_meta` envelope on MCP
   * 2026-07-28, its `initialize` before), as ringfence reads it. A 2026 upstream is told only
   * these, and only as far as the server's registration lets ringfence relay them (`ClientGrants`):
   * so the server sees that this client cannot sample and refuses with -32021 itself. Absent: the
   * caller is not known to answer anything (a task in the background, a completion).
   */
  readonly clientCapabilities?: ClientGrants;
  /**
   * Whose call this is (`ports/call-owner.ts`): the session a server request on this call's own
   * answer stream goes to. Named on the call, so it survives any await before the call starts.
   */
  readonly owner?: object;
}

/** What a retry of a 2026 server's call carries back to it (both absent on a first call). */
export interface UpstreamInput {
  readonly inputResponses?: Readonly<Record<string, unknown>>;
  readonly requestState?: string;
}

/** Timeouts of everything but calls (those are per server: `limits`). */
export interface UpstreamTimeouts {
  readonly connectMs: number;
  readonly listMs: number;
  readonly closeMs: number;
}

export const DEFAULT_TIMEOUTS: UpstreamTimeouts = {
  connectMs: 20_000,
  listMs: 15_000,
  closeMs: 2_000,
};

/** The stdio of a started container: MCP messages travel here, one per line. */
export interface ContainedStdio {
  readonly stdout: NodeJS.ReadableStream;
  /** end() closes the container's stdin. */
  readonly stdin: NodeJS.WritableStream;
  /** The folders mounted into the container, as the server sees them: its `roots/list` answer. */
  readonly mounts?: readonly MountedFolder[];
}

export interface MountedFolder {
  /** The absolute path inside the container. */
  readonly target: string;
  readonly readOnly: boolean;
}

/**
 * One registered server's container set (its networks, egress sidecar and container), as the
 * runtime (`runtime/contained-server.ts`) runs it; `upstream/container.ts` speaks MCP over it.
 */
export interface ContainedServer {
  /** Check the image, then create and start everything; resolves with the container's stdio. */
  start(): Promise<ContainedStdio>;
  /** Called once when the container exits or disappears outside of stop(). */
  onExit(listener: (reason: string) => void): void;
  /** The last 8 KiB of the server's stderr, env values redacted. Never sent to the model. */
  stderr(): string;
  /** Remove what start() created, also while start() is still running (a start-up timeout). */
  stop(): Promise<void>;
}

/** Hands out a ContainedServer for a registered container server (provided by the runtime). */
export type ContainerLauncher = (config: ContainerServerConfig) => ContainedServer;

/**
 * The narrow side of the port, all the dispatcher and the pipeline see of a server: what it
 * offers, its limits, and the requests a client's request becomes. Creating, starting, listing,
 * listening to and closing an upstream are the registry's (`serve/registry.ts`), which alone
 * holds the whole `Upstream`.
 */
export type UpstreamRequests = Pick<
  Upstream,
  | 'name'
  | 'destination'
  | 'limits'
  | 'capabilities'
  | 'callTool'
  | 'getPrompt'
  | 'readResource'
  | 'complete'
  | 'subscribeResource'
  | 'setLoggingLevel'
  | 'roots'
  | 'era'
  | 'reach'
> & {
  /**
   * The era this side's requests will be spoken in, once known: a companion 2025 session is
   * opened (or found not offered) first. Never rejects (a companion that cannot open is refused
   * at the request, naming the server). Absent: `era()` already says it.
   */
  readonly settledEra?: () => Promise<UpstreamEra>;
};

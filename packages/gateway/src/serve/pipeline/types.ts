import { RingfenceError } from '@ringfence/policy';
import type { SecretScanner } from '../../credentials/scan/scanner.js';
import type { AuditSink } from '../../ports/audit.js';
import type { Caller, CallToolResult } from '../../ports/caller.js';
import type { CallObserver } from '../../ports/observer.js';
import type { PolicyView } from '../../ports/policy.js';
import type { SchemaChecks } from '../../ports/schema.js';
import type { CallProgress, ClientGrants, UpstreamInput, UpstreamRequests } from '../../ports/upstream.js';
import type { CallTracer, Span } from '../../traces/index.js';
import type { CatalogEntry, PromptEntry, TemplateEntry } from '../catalog.js';

export type { CallToolResult };

/**
 * A request the gateway forwards to one upstream after its checks: a tool call or a prompt
 * request, each resolved by the catalog first. Both run the same steps; only the arguments check,
 * the forwarding and the result check differ by method (`run.ts`).
 */
interface RequestBase {
  readonly args: unknown;
  readonly caller: Caller;
  /** Undefined when the server is not running; `unavailableReason` then says why. */
  readonly upstream: UpstreamRequests | undefined;
  readonly unavailableReason: string;
  /**
   * The MCP version negotiated with this client: it decides what a result may carry. Undefined
   * when the client never initialised; the oldest version's members then apply.
   */
  readonly protocolVersion: string | undefined;
  /** Aborts when the client cancels the request; the upstream request is cancelled with it. */
  readonly signal?: AbortSignal;
  /** Where the call's progress goes, when the client asked for it (it has its own token). */
  readonly onProgress?: (progress: CallProgress) => void;
  /** The client's W3C trace context (`_meta.traceparent`), already checked: passed on upstream. */
  readonly traceparent?: string;
  /** The call's span, when traces are on and this call is sampled (`runForward` sets it). */
  readonly span?: Span;
  /**
   * Present when the caller relays a 2026 server's `input_required` (serve/input-required/): such
   * an answer is then the reply as it is, for the relay to decide (see `CallOptions`).
   */
  readonly upstreamInput?: UpstreamInput;
  /** What the client declared it can answer: a 2026 server is told it, narrowed (see `CallOptions`). */
  readonly clientCapabilities?: ClientGrants;
  /** Whose request it is (`ports/call-owner.ts`): named on the upstream call (`CallOptions.owner`). */
  readonly owner?: object;
}

export interface ToolCallRequest extends RequestBase {
  readonly method: 'tools/call';
  /** What the client named, as the catalog resolved it (server, upstream name, pinned schemas). */
  readonly entry: CatalogEntry;
}

export interface PromptGetRequest extends RequestBase {
  readonly method: 'prompts/get';
  /** The pinned prompt the client named, with its declared arguments. */
  readonly entry: PromptEntry;
}

/** What a `resources/read` reads: one URI of one server, resolved and vetted before the pipeline. */
export interface ResourceTarget {
  readonly kind: 'resource';
  readonly server: string;
  /** The URI as the server knows it. */
  readonly uri: string;
  /** The URI as the client named it. */
  readonly exposedName: string;
}

export interface ResourceReadRequest extends RequestBase {
  readonly method: 'resources/read';
  readonly entry: ResourceTarget;
}

/**
 * A `completion/complete` for an exposed prompt's argument or an exposed template's variable. Its
 * `args` are what the rules, the invisible-argument refusal and the digest read, and all that is
 * forwarded: the context's arguments with the one being completed (`argument`) set to the value
 * typed, as the prompt would be requested (or the template expanded) with them.
 */
export interface CompletionRequest extends RequestBase {
  readonly method: 'completion/complete';
  readonly entry: PromptEntry | TemplateEntry;
  /** The name of the argument (or variable) being completed; its value is `args[argument]`. */
  readonly argument: string;
}

/** `resources/subscribe` or `resources/unsubscribe` for one URI of one server; `args` is `{uri}`, as a read's. */
export interface SubscriptionRequest extends RequestBase {
  readonly method: 'resources/subscribe' | 'resources/unsubscribe';
  readonly entry: ResourceTarget;
}

/** What a `logging/setLevel` forwarded to one server is about: the level (in `name`). */
export interface LogLevelTarget {
  readonly kind: 'log-level';
  readonly server: string;
  readonly name: string;
}

/** A client's `logging/setLevel`, as forwarded to one server; `args` is `{level}`. */
export interface LogLevelRequest extends RequestBase {
  readonly method: 'logging/setLevel';
  readonly entry: LogLevelTarget;
  /** Told the server's own error, when it failed: the gateway's report line quotes it as it came. */
  readonly failed?: (error: unknown) => void;
}

export type ForwardedRequest =
  | ToolCallRequest
  | PromptGetRequest
  | ResourceReadRequest
  | CompletionRequest
  | SubscriptionRequest
  | LogLevelRequest;

/** The methods the pipeline forwards. */
export type ForwardedMethod = ForwardedRequest['method'];

/** A checked `resources/read` answer: only its contents go on. */
export interface ReadResult {
  contents: unknown[];
  [key: string]: unknown;
}

/** A checked `prompts/get` answer: only its description and messages go on. */
export interface PromptResult {
  description?: string;
  messages: unknown[];
  [key: string]: unknown;
}

/** What every request's checks share: one per gateway. */
export interface PipelineDeps {
  readonly policy: PolicyView;
  readonly guard: SchemaChecks;
  readonly audit: AuditSink;
  readonly policyRef: { policy?: { name: string; digest: `sha256:${string}`; signer: string } };
  /** Cap on the serialized arguments (bytes); results are capped per server (`Upstream.limits`). */
  readonly maxResultBytes: number;
  /** stderr, for an audit write that failed after the reply was decided. */
  readonly log: (line: string) => void;
  /**
   * The URI the client is shown for a URI a server put in a result (a link, an embedded or a
   * read resource). With `follow`, the client may then read it from that server alone; a read's
   * own contents are not made readable so (a URI stays readable only while listed or matched).
   */
  readonly linkUri: (server: string, uri: string, follow: boolean) => string;
  /** The credential scan: arguments as egress, results as ingress (`secrets.ts`). */
  readonly secrets: SecretScanner;
  /** OpenTelemetry spans per call (traces/); absent when the OTEL_* variables do not turn them on. */
  readonly tracer?: CallTracer;
  /**
   * ringfence's own server (`mcp serve --sandbox-tools`), when served: a call to one of its tools
   * names in its audit entries the sandbox it acts on (its `name` argument).
   */
  readonly ownServer?: string;
  /** Told each request's decision and times (metrics, traces); absent: nothing is observed. */
  readonly observer?: CallObserver;
}

export type RefusalCode =
  | 'UNKNOWN_TOOL'
  | 'UNKNOWN_PROMPT'
  | 'UNKNOWN_RESOURCE'
  | 'ARGUMENTS_NOT_OBJECT'
  | 'ARGUMENTS_TOO_LARGE'
  | 'ARGUMENTS_TOO_DEEP'
  | 'POLICY_DENIED'
  | 'INVISIBLE_ARGUMENTS'
  | 'ASK_UNSUPPORTED'
  | 'ASK_TOO_LONG'
  | 'ASK_DECLINED'
  | 'INPUT_SCHEMA'
  | 'PROMPT_ARGUMENTS'
  | 'COMPLETION_ARGUMENTS'
  | 'ASK_NOT_OFFERED'
  | 'UNAVAILABLE'
  | 'CANCELLED'
  | 'TASK_LIMIT'
  | 'EGRESS_SECRET'
  | 'SECRETS_UNCHECKED';

/**
 * Why a step stopped a request. `rule` and `reason` go to the audit entry; the reply to the
 * caller says `what` happened and, in `next`, what to do about it.
 */
export interface Refusal {
  readonly pass: false;
  readonly code: RefusalCode;
  readonly rule: string;
  readonly reason: string;
  readonly what: string;
  readonly next?: string;
  /** "refused" for a check that said no; "could not call" when nothing was there to call. */
  readonly verb?: 'refused' | 'could not call';
  /** The secrets the arguments carried (classes and paths, never values), for the decision entry. */
  readonly secrets?: string;
}

export const PASS = { pass: true } as const;
export type StepOutcome = typeof PASS | Refusal;

/** The allowing rule, kept for the decision entry written just before forwarding. */
export interface Verdict {
  readonly rule: string;
  readonly reason: string;
}

/**
 * A request refused with a JSON-RPC error rather than a tool result: a name never listed, and
 * every refusal of a prompt request or a completion (neither has an error result to carry it).
 */
export class CallRefused extends RingfenceError<
  'UNKNOWN_TOOL' | 'UNKNOWN_PROMPT' | 'UNKNOWN_RESOURCE' | 'REFUSED'
> {}

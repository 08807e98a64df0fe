import { RingfenceError } from '@ringfence/policy';
import type { AuditSink } from '../../ports/audit.js';
import type { Caller, CallToolResult } from '../../ports/caller.js';
import type { PolicyView } from '../../ports/policy.js';
import type { SchemaChecks } from '../../ports/schema.js';
import type { CallProgress, Upstream } from '../../ports/upstream.js';
import type { CatalogEntry } from '../catalog.js';

export type { CallToolResult };

/**
 * A request the gateway forwards to one upstream after its checks. `tools/call` is the only kind
 * today; prompts, resources and completions are meant to run through the same steps.
 */
export interface ForwardedRequest {
  readonly method: 'tools/call';
  /** What the client named, as the catalog resolved it (server, upstream name, pinned schemas). */
  readonly entry: CatalogEntry;
  readonly args: unknown;
  readonly caller: Caller;
  /** Undefined when the server is not running; `unavailableReason` then says why. */
  readonly upstream: Upstream | undefined;
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
}

export type RefusalCode =
  | 'UNKNOWN_TOOL'
  | 'ARGUMENTS_NOT_OBJECT'
  | 'ARGUMENTS_TOO_LARGE'
  | 'ARGUMENTS_TOO_DEEP'
  | 'POLICY_DENIED'
  | 'INVISIBLE_ARGUMENTS'
  | 'ASK_UNSUPPORTED'
  | 'ASK_TOO_LONG'
  | 'ASK_DECLINED'
  | 'INPUT_SCHEMA'
  | 'UNAVAILABLE'
  | 'CANCELLED';

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
}

export const PASS = { pass: true } as const;
export type StepOutcome = typeof PASS | Refusal;

/** The allowing rule, kept for the decision entry written just before forwarding. */
export interface Verdict {
  readonly rule: string;
  readonly reason: string;
}

/** A request the gateway will not forward and that is not a tool result (a name never listed). */
export class CallRefused extends RingfenceError<'UNKNOWN_TOOL'> {}

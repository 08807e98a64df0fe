import type { PrecomputedDigest } from '../../audit/format.js';
import { AUDIT_STRING_MAX, type AuditMethod } from '../../audit/types.js';
import type { Caller, CallToolResult } from '../../ports/caller.js';
import { checkedTraceparent, traceIdOf } from '../../traces/index.js';
import { FORWARDED_METHODS, requestName, shownRequestLabel } from './methods.js';
import type { ForwardedRequest, PipelineDeps, Refusal } from './types.js';

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/**
 * Audit refs name the definition in `tool` (a read: its URI, cut to what an entry holds; the
 * arguments digest covers all of it), mark a prompt, a read, a template or a log level with
 * `kind` (tool entries keep their first form), and name the method when it is not the one the
 * kind implies (a completion, a subscription, a log level).
 */
function subject(request: ForwardedRequest): {
  server: string;
  tool: string;
  kind?: Exclude<ForwardedRequest['entry']['kind'], 'tool'>;
  method?: AuditMethod;
} {
  const { audited } = FORWARDED_METHODS[request.method];
  return {
    server: request.entry.server,
    tool: requestName(request).slice(0, AUDIT_STRING_MAX),
    ...(request.entry.kind === 'tool' ? {} : { kind: request.entry.kind }),
    ...(audited ? { method: audited } : {}),
  };
}

/**
 * The call's W3C trace id, so a SIEM can join the entry with the trace: the gateway's span's when
 * traced, else the client's traceparent's (checked at the edge), else none.
 */
function traceRef(request: ForwardedRequest): { trace_id?: string } {
  if (request.span) return { trace_id: request.span.traceId };
  const client = checkedTraceparent(request.traceparent);
  return client ? { trace_id: traceIdOf(client) } : {};
}

/** ringfence's sandbox names (sandbox/args.ts): only a name of that form is written. */
const SANDBOX_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

/**
 * A call to one of ringfence's own tools names the sandbox it acts on (its `name` argument) as
 * `sandbox` in its decision and result entries, so a reader finds every step taken in one sandbox
 * without the arguments, which the log never holds. Any other server's `name` means nothing here.
 */
function actedOn(deps: PipelineDeps, request: ForwardedRequest): { sandbox?: string } {
  if (deps.ownServer === undefined || request.method !== 'tools/call') return {};
  if (request.entry.server !== deps.ownServer) return {};
  const args = request.args;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) return {};
  const name = Object.hasOwn(args, 'name') ? (args as { name?: unknown }).name : undefined;
  return typeof name === 'string' && SANDBOX_NAME.test(name) ? { sandbox: name } : {};
}

function who(caller: Caller): { agent?: string; scope?: string } {
  return {
    ...(caller.agent ? { agent: caller.agent } : {}),
    ...(caller.scope ? { scope: caller.scope } : {}),
  };
}

/**
 * The one place a call's `mcp.decision` entry is written. The log keeps only the digest of the
 * arguments, never the arguments; `argsDigest` is that digest when the size check computed it.
 * Resolves with the entry's seq once it is durable.
 */
export function recordDecision(
  deps: PipelineDeps,
  request: ForwardedRequest,
  decision: { allowed: boolean; rule: string; reason: string; task?: string; secrets?: string },
  argsDigest?: PrecomputedDigest,
): Promise<number> {
  const written = deps.audit.append({
    type: 'mcp.decision',
    ...who(request.caller),
    refs: {
      phase: 'call',
      ...subject(request),
      allowed: decision.allowed,
      rule: decision.rule,
      reason: decision.reason.slice(0, 1000),
      arguments: argsDigest ?? (request.args === undefined ? {} : request.args),
      ...deps.policyRef,
      ...(decision.task ? { task: decision.task } : {}),
      ...actedOn(deps, request),
      ...(decision.secrets ? { secrets: decision.secrets } : {}),
      ...traceRef(request),
    },
  });
  const { span } = request;
  if (!span) return written;
  // The decision on the call's span: allowed or refused, the deciding rule, and the entry's seq.
  return written.then((seq) => {
    span.set('ringfence.decision', decision.allowed ? 'allowed' : 'refused');
    span.set('ringfence.rule', decision.rule).set('ringfence.audit.seq', seq);
    if (!decision.allowed) span.fail('refused by ringfence');
    return seq;
  });
}

/** A refusal: its decision entry is durable before the caller is told. */
export async function refuse(
  deps: PipelineDeps,
  request: ForwardedRequest,
  refusal: Refusal,
  argsDigest?: PrecomputedDigest,
): Promise<CallToolResult> {
  await recordDecision(
    deps,
    request,
    {
      allowed: false,
      rule: refusal.rule,
      reason: refusal.reason,
      ...(refusal.secrets ? { secrets: refusal.secrets } : {}),
    },
    argsDigest,
  );
  const next = refusal.next ? ` ${refusal.next}` : '';
  return errorResult(
    // A URI (a read's, a subscription's) is partly the client's own text: shown rendered, so a
    // refusal for invisible characters shows where they are instead of carrying them on.
    `ringfence ${refusal.verb ?? 'refused'} ${shownRequestLabel(request)}: ${refusal.what}${next}`,
  );
}

/**
 * The one place a call's `mcp.result` entry is written, child of its decision. The digest is of
 * what the server sent, whether or not it was passed on; `reason` says why it was not, and
 * `dropped` how many of its members and content items the sanitiser did not pass on.
 */
export function recordResult(
  deps: PipelineDeps,
  request: ForwardedRequest,
  decisionSeq: number,
  outcome: {
    result: unknown;
    isError: boolean;
    reason?: string;
    dropped?: number;
    cancelled?: 'client' | 'timeout';
    /** The gateway task whose result this is. */
    task?: string;
    /** How many secrets the ingress scan replaced, and their classes. */
    redacted?: number;
    redactedClasses?: string;
  },
  options: { defer?: boolean } = {},
): Promise<number> {
  return deps.audit.append(
    {
      type: 'mcp.result',
      ...who(request.caller),
      parentSeq: decisionSeq,
      refs: {
        ...subject(request),
        result: outcome.result,
        is_error: outcome.isError,
        ...(outcome.reason ? { reason: outcome.reason.slice(0, 1000) } : {}),
        ...(outcome.dropped ? { dropped: outcome.dropped } : {}),
        ...(outcome.cancelled ? { cancelled: outcome.cancelled } : {}),
        ...(outcome.task ? { task: outcome.task } : {}),
        ...actedOn(deps, request),
        ...(outcome.redacted ? { redacted: outcome.redacted } : {}),
        ...(outcome.redactedClasses ? { redacted_classes: outcome.redactedClasses } : {}),
        ...traceRef(request),
      },
    },
    options,
  );
}

import type { PrecomputedDigest } from '../../audit/format.js';
import { AUDIT_STRING_MAX } from '../../audit/types.js';
import { definitionLabel } from '../../pins/kinds.js';
import type { Caller, CallToolResult } from '../../ports/caller.js';
import { rendered } from '../../text/render.js';
import type { ForwardedRequest, PipelineDeps, Refusal } from './types.js';

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** The name the server lists the requested tool or prompt under, or the URI read. */
export function requestName(request: ForwardedRequest): string {
  return request.method === 'prompts/get'
    ? request.entry.prompt
    : request.method === 'resources/read'
      ? request.entry.uri
      : request.entry.tool;
}

/** `files/read` for a tool, `files/prompt greet` for a prompt. */
export function requestLabel(request: ForwardedRequest): string {
  return definitionLabel(request.entry.server, request.entry.kind, requestName(request));
}

/** The same label for a stderr report line: both names rendered once, as names. */
export function shownRequestLabel(request: ForwardedRequest): string {
  return definitionLabel(
    rendered(request.entry.server, 'name'),
    request.entry.kind,
    rendered(requestName(request), 'name'),
  );
}

/**
 * Audit refs name the definition in `tool` (a read: its URI, cut to what an entry holds; the
 * arguments digest covers all of it) and mark a prompt or a read with `kind` (tool entries keep
 * their first form).
 */
function subject(request: ForwardedRequest): {
  server: string;
  tool: string;
  kind?: 'prompt' | 'resource';
} {
  return {
    server: request.entry.server,
    tool: requestName(request).slice(0, AUDIT_STRING_MAX),
    ...(request.method === 'tools/call' ? {} : { kind: request.entry.kind }),
  };
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
  decision: { allowed: boolean; rule: string; reason: string },
  argsDigest?: PrecomputedDigest,
): Promise<number> {
  return deps.audit.append({
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
    },
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
    { allowed: false, rule: refusal.rule, reason: refusal.reason },
    argsDigest,
  );
  const next = refusal.next ? ` ${refusal.next}` : '';
  return errorResult(
    `ringfence ${refusal.verb ?? 'refused'} ${requestLabel(request)}: ${refusal.what}${next}`,
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
      },
    },
    options,
  );
}

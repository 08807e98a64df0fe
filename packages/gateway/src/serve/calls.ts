import { canonicalize, RingfenceError } from '@ringfence/policy';
import { printable } from '../text/printable.js';
import type { Upstream } from '../upstream/types.js';
import type { CatalogEntry } from './catalog.js';
import type { PolicyView } from './policy-view.js';
import type { AuditSink, Caller, CallToolResult, SchemaChecks } from './types.js';

/** A call the gateway will not forward and that is not a tool result (e.g. a name never listed). */
export class CallRefused extends RingfenceError<'UNKNOWN_TOOL'> {}

interface CallContext {
  readonly entry: CatalogEntry;
  readonly args: unknown;
  readonly caller: Caller;
  /** Undefined when the server is not running (then `unavailableReason` says why). */
  readonly upstream: Upstream | undefined;
  readonly unavailableReason: string;
  readonly policy: PolicyView;
  readonly guard: SchemaChecks;
  readonly audit: AuditSink;
  readonly policyRef: { policy?: { name: string; digest: `sha256:${string}`; signer: string } };
  readonly maxResultBytes: number;
  /** stderr, for an audit write that failed after the reply was decided. */
  readonly log: (line: string) => void;
}

/** The most a person is asked to read; longer arguments are refused rather than shown cut. */
const PREVIEW_CHARS = 2000;

export function errorResult(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

/** Arguments for a person, in canonical (sorted) order, whole; undefined when too long to show. */
function preview(args: Record<string, unknown>): string | undefined {
  let text: string;
  try {
    text = canonicalize(args);
  } catch {
    return undefined;
  }
  return text.length > PREVIEW_CHARS ? undefined : printable(text);
}

const ERROR_TEXT_MAX = 300;

/** An upstream failure as the model may read it: its code, and at most 300 printable characters. */
export function upstreamErrorText(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const text = printable(String((error as Error)?.message ?? error));
  const clipped =
    text.length > ERROR_TEXT_MAX ? `${text.slice(0, ERROR_TEXT_MAX)}… (${text.length} characters)` : text;
  return typeof code === 'number' || typeof code === 'string' ? `[${code}] ${clipped}` : clipped;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * lookup (done by the caller) → call rules (allow / deny / ask) → arguments against the pinned
 * input schema → audit the decision → forward with a timeout → check the result (shape, size,
 * output schema) → audit the result → reply. Every refusal is an error result that says what
 * happened and what to do; nothing refused reaches the upstream.
 */
export async function runCall(ctx: CallContext): Promise<CallToolResult> {
  const { entry, caller } = ctx;
  const label = `${entry.server}/${entry.tool}`;
  const who = {
    ...(caller.agent ? { agent: caller.agent } : {}),
    ...(caller.scope ? { scope: caller.scope } : {}),
  };
  const args = ctx.args === undefined ? {} : ctx.args;

  // The log writes only the digest of the arguments, never the arguments.
  const decide = async (allowed: boolean, rule: string, reason: string) =>
    ctx.audit.append({
      type: 'mcp.decision',
      ...who,
      refs: {
        phase: 'call',
        server: entry.server,
        tool: entry.tool,
        allowed,
        rule,
        reason: reason.slice(0, 1000),
        arguments: args,
        ...ctx.policyRef,
      },
    });

  if (!isPlainObject(args)) {
    await decide(false, 'arguments', 'arguments are not a JSON object');
    return errorResult(
      `ringfence refused ${label}: the arguments must be a JSON object of plain JSON values.`,
    );
  }
  // Before any rule reads them: rules match arguments (globs, pointers), so their size is capped
  // first, as it would be by the schema check that comes after.
  const argumentBytes = Buffer.byteLength(JSON.stringify(args));
  if (argumentBytes > ctx.maxResultBytes) {
    await decide(
      false,
      'arguments',
      `arguments of ${argumentBytes} bytes are over the ${ctx.maxResultBytes}-byte cap`,
    );
    return errorResult(
      `ringfence refused ${label}: the arguments are ${argumentBytes} bytes, over the ${ctx.maxResultBytes}-byte cap. Send less.`,
    );
  }

  const decision = ctx.policy.decideCall({ server: entry.server, tool: entry.tool, ...who, arguments: args });
  if (decision.action === 'deny') {
    await decide(false, decision.rule, decision.reason);
    return errorResult(`ringfence refused ${label}: ${decision.reason} (policy rule "${decision.rule}").`);
  }
  if (decision.action === 'ask') {
    if (!caller.ask) {
      await decide(
        false,
        decision.rule,
        'a person must approve this call and the client cannot ask (no elicitation)',
      );
      return errorResult(
        `ringfence refused ${label}: policy rule "${decision.rule}" needs a person to approve this call, and this client cannot ask (it does not support MCP elicitation). Use a client that supports elicitation, or ask your policy admin.`,
      );
    }
    // A person approves only what they can read whole: arguments too long to show are refused.
    const shown = preview(args);
    if (shown === undefined) {
      await decide(
        false,
        decision.rule,
        'the arguments are too long to show the person who must approve them',
      );
      return errorResult(
        `ringfence refused ${label}: policy rule "${decision.rule}" needs a person to approve this call, and its arguments are too long (over ${PREVIEW_CHARS} characters) to show them whole. Send shorter arguments, or ask your policy admin.`,
      );
    }
    const answer = await caller
      .ask(
        `Allow ${label}? Arguments go to ${entry.server} (${ctx.upstream?.destination ?? 'unavailable'}). Rule "${decision.rule}": ${decision.reason}. Arguments: ${shown}`,
      )
      .catch(() => 'cancel' as const);
    if (answer !== 'accept') {
      await decide(false, decision.rule, `the person answered ${answer}`);
      return errorResult(`ringfence refused ${label}: the person you asked did not approve it (${answer}).`);
    }
  }

  const argumentCheck = await ctx.guard.checkArguments(entry.inputSchema, args, { key: entry.server });
  if (!argumentCheck.ok) {
    await decide(false, 'input-schema', argumentCheck.message ?? String(argumentCheck.code));
    return errorResult(
      `ringfence refused ${label}: the arguments do not match the tool's pinned input schema: ${argumentCheck.message ?? argumentCheck.code}. Fix the arguments and call again.`,
    );
  }

  if (!ctx.upstream) {
    await decide(false, 'unavailable', ctx.unavailableReason);
    return errorResult(
      `ringfence could not call ${label}: the server ${entry.server} is not available (${ctx.unavailableReason}). Restart the gateway; the server's last output is shown by: ringfence mcp ls --logs`,
    );
  }

  const decisionSeq = await decide(true, decision.rule, decision.reason);
  let result: unknown;
  try {
    result = await ctx.upstream.callTool(entry.tool, args);
  } catch (error) {
    // The server chooses this text: it is capped and made printable for the model, and the audit
    // log keeps only its digest (it may echo the arguments, which are never stored).
    const message = upstreamErrorText(error);
    await ctx.audit.append({
      type: 'mcp.result',
      ...who,
      parentSeq: decisionSeq,
      refs: {
        server: entry.server,
        tool: entry.tool,
        is_error: true,
        result: message,
        reason: 'upstream failed',
      },
    });
    return errorResult(
      `ringfence: ${label} failed upstream: ${message}. The server's last output is shown by: ringfence mcp ls --logs`,
    );
  }

  const checked = await checkResult(ctx, result);
  // The digest is of what the server sent (what reached us), whether or not it was passed on.
  // The decision was made durable before forwarding; the result entry is deferred (it shares the
  // next call's write and fsync, or is written within 50 ms; the log keeps its order) and not
  // awaited, so neither this reply nor the next call waits for a second fsync.
  ctx.audit
    .append(
      {
        type: 'mcp.result',
        ...who,
        parentSeq: decisionSeq,
        refs: {
          server: entry.server,
          tool: entry.tool,
          result,
          is_error: checked.reply.isError === true,
          ...(checked.refused ? { reason: `result withheld: ${checked.refused}`.slice(0, 1000) } : {}),
        },
      },
      { defer: true },
    )
    .catch((error: unknown) =>
      ctx.log(`ringfence: audit: the result of ${label} could not be recorded: ${(error as Error).message}`),
    );
  return checked.reply;
}

async function checkResult(
  ctx: CallContext,
  result: unknown,
): Promise<{ reply: CallToolResult; refused?: string }> {
  const label = `${ctx.entry.server}/${ctx.entry.tool}`;
  const refuse = (why: string) => ({
    reply: errorResult(
      `ringfence withheld the result of ${label}: ${why}. The call reached the server; its answer was not passed on.`,
    ),
    refused: why,
  });
  if (!isPlainObject(result) || !Array.isArray(result.content))
    return refuse('the server sent a malformed result');
  if (result.isError !== undefined && typeof result.isError !== 'boolean')
    return refuse('the server sent a malformed isError');
  if (result.structuredContent !== undefined && !isPlainObject(result.structuredContent)) {
    return refuse('the server sent structuredContent that is not an object');
  }
  const size = Buffer.byteLength(JSON.stringify(result));
  if (size > ctx.maxResultBytes)
    return refuse(`the result is ${size} bytes, over the ${ctx.maxResultBytes}-byte cap`);
  const verdict = await ctx.guard.checkResult(ctx.entry.outputSchema, result, { key: ctx.entry.server });
  if (!verdict.ok)
    return refuse(`it does not match the tool's pinned output schema (${verdict.message ?? verdict.code})`);
  const { _meta: _dropped, ...reply } = result;
  // An error result was not checked against the output schema, so its structured part goes no further.
  if (reply.isError === true) delete reply.structuredContent;
  return { reply: reply as CallToolResult };
}

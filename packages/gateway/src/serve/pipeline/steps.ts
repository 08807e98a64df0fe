import { canonicalize } from '@ringfence/policy';
import { printable } from '../../text/printable.js';
import type { CatalogEntry, PromptEntry } from '../catalog.js';
import { requestLabel, requestName } from './record.js';
import {
  type ForwardedRequest,
  PASS,
  type PipelineDeps,
  type Refusal,
  type StepOutcome,
  type ToolCallRequest,
} from './types.js';

/** The most a person is asked to read; longer arguments are refused rather than shown cut. */
export const PREVIEW_CHARS = 2000;

export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Lookup: only a name this gateway listed goes on. Not audited: it names nothing upstream. */
export function lookup<E extends CatalogEntry | PromptEntry>(
  catalog: ReadonlyMap<string, E>,
  name: string,
  kind: E['kind'] = 'tool',
): { pass: true; entry: E } | Refusal {
  const entry = catalog.get(name);
  if (entry) return { pass: true, entry };
  return {
    pass: false,
    code: kind === 'tool' ? 'UNKNOWN_TOOL' : 'UNKNOWN_PROMPT',
    rule: 'catalog',
    reason: `not a listed ${kind}`,
    what: `"${name}" is not a ${kind} this gateway listed; it was not forwarded.`,
  };
}

/**
 * Shape and size: a JSON object, capped before any rule reads it (rules match arguments with
 * globs and pointers, so their size is capped first, as the schema check after would).
 */
export function shapeAndSize(deps: PipelineDeps, request: ForwardedRequest): StepOutcome {
  const args = request.args === undefined ? {} : request.args;
  if (!isPlainObject(args)) {
    return {
      pass: false,
      code: 'ARGUMENTS_NOT_OBJECT',
      rule: 'arguments',
      reason: 'arguments are not a JSON object',
      what: 'the arguments must be a JSON object of plain JSON values.',
    };
  }
  const bytes = Buffer.byteLength(JSON.stringify(args));
  if (bytes > deps.maxResultBytes) {
    return {
      pass: false,
      code: 'ARGUMENTS_TOO_LARGE',
      rule: 'arguments',
      reason: `arguments of ${bytes} bytes are over the ${deps.maxResultBytes}-byte cap`,
      what: `the arguments are ${bytes} bytes, over the ${deps.maxResultBytes}-byte cap.`,
      next: 'Send less.',
    };
  }
  return PASS;
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

/**
 * Rules and ask: the organisation policy's call rules. `ask` puts the whole arguments before a
 * person through the client (MCP elicitation); anything but "accept" refuses. On pass, the
 * deciding rule is returned for the decision entry.
 */
export async function rulesAndAsk(
  deps: PipelineDeps,
  request: ForwardedRequest,
  args: Record<string, unknown>,
): Promise<{ pass: true; rule: string; reason: string } | Refusal> {
  const { entry, caller } = request;
  // Rules name tools and prompts apart (`match.tool`, `match.prompt`), so one never stands for the other.
  const decision = deps.policy.decideCall({
    server: entry.server,
    ...(request.method === 'prompts/get' ? { prompt: requestName(request) } : { tool: requestName(request) }),
    ...(caller.agent ? { agent: caller.agent } : {}),
    ...(caller.scope ? { scope: caller.scope } : {}),
    arguments: args,
  });
  const refusal = (code: Refusal['code'], reason: string, what: string): Refusal => ({
    pass: false,
    code,
    rule: decision.rule,
    reason,
    what,
  });
  if (decision.action === 'deny') {
    return refusal('POLICY_DENIED', decision.reason, `${decision.reason} (policy rule "${decision.rule}").`);
  }
  if (decision.action === 'ask') {
    if (!caller.ask) {
      return refusal(
        'ASK_UNSUPPORTED',
        'a person must approve this call and the client cannot ask (no elicitation)',
        `policy rule "${decision.rule}" needs a person to approve this call, and this client cannot ask (it does not support MCP elicitation). Use a client that supports elicitation, or ask your policy admin.`,
      );
    }
    const shown = preview(args);
    if (shown === undefined) {
      return refusal(
        'ASK_TOO_LONG',
        'the arguments are too long to show the person who must approve them',
        `policy rule "${decision.rule}" needs a person to approve this call, and its arguments are too long (over ${PREVIEW_CHARS} characters) to show them whole. Send shorter arguments, or ask your policy admin.`,
      );
    }
    const answer = await caller
      .ask(
        `Allow ${requestLabel(request)}? Arguments go to ${entry.server} (${request.upstream?.destination ?? 'unavailable'}). Rule "${decision.rule}": ${decision.reason}. Arguments: ${shown}`,
      )
      .catch(() => 'cancel' as const);
    if (answer !== 'accept') {
      return refusal(
        'ASK_DECLINED',
        `the person answered ${answer}`,
        `the person you asked did not approve it (${answer}).`,
      );
    }
  }
  return { pass: true, rule: decision.rule, reason: decision.reason };
}

/** Input schema: the arguments against the tool's pinned input schema (in the schema workers). */
export async function inputSchema(
  deps: PipelineDeps,
  request: ToolCallRequest,
  args: Record<string, unknown>,
): Promise<StepOutcome> {
  const check = await deps.guard.checkArguments(request.entry.inputSchema, args, {
    key: request.entry.server,
  });
  if (check.ok) return PASS;
  const why = check.message ?? String(check.code);
  return {
    pass: false,
    code: 'INPUT_SCHEMA',
    rule: 'input-schema',
    reason: why,
    what: `the arguments do not match the tool's pinned input schema: ${check.message ?? check.code}.`,
    next: 'Fix the arguments and call again.',
  };
}

/** Availability: the server must be running to be called. */
export function availability(request: ForwardedRequest): StepOutcome {
  if (request.upstream) return PASS;
  return {
    pass: false,
    code: 'UNAVAILABLE',
    verb: 'could not call',
    rule: 'unavailable',
    reason: request.unavailableReason,
    what: `the server ${request.entry.server} is not available (${request.unavailableReason}).`,
    next: "Restart the gateway; the server's last output is shown by: ringfence mcp ls --logs",
  };
}

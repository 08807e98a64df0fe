import { canonicalize } from '@ringfence/policy';
import { AskDeferred } from '../../ports/caller.js';
import { escapedCharacterCount, rendered, renderJsonText } from '../../text/render.js';
import type { CatalogEntry, PromptEntry } from '../catalog.js';
import { FORWARDED_METHODS, requestLabel, requestName } from './methods.js';
import { egressSecrets } from './secrets.js';
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
export function shapeAndSize(
  deps: PipelineDeps,
  request: ForwardedRequest,
  /** The arguments' JSON (their canonical form counts the same bytes), when the caller has it. */
  json?: string,
): StepOutcome {
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
  let bytes: number;
  try {
    bytes = Buffer.byteLength(json ?? JSON.stringify(args));
  } catch {
    // Nested past what the engine can serialise (a stack overflow): no rule or schema could read it.
    return {
      pass: false,
      code: 'ARGUMENTS_TOO_DEEP',
      rule: 'arguments',
      reason: 'arguments nested too deeply to check',
      what: 'the arguments are nested too deeply to check.',
      next: 'Send flatter arguments.',
    };
  }
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

/**
 * Arguments for a person: canonical (sorted) JSON, whole, every character they could not see shown
 * as \u{…}; undefined when what they would read is too long to show.
 */
function preview(args: Record<string, unknown>): string | undefined {
  let json: string;
  try {
    json = canonicalize(args);
  } catch {
    return undefined;
  }
  const { text } = renderJsonText(json);
  return text.length > PREVIEW_CHARS ? undefined : text;
}

/** The question `ask` puts to a person: all of it rendered, and how many characters are escaped. */
function question(
  request: ForwardedRequest,
  decision: { rule: string; reason: string },
  shown: string,
  hidden: number,
): string {
  const { entry } = request;
  const where = rendered(request.upstream?.destination ?? 'unavailable', 'line');
  const escapes =
    hidden > 0
      ? ` They hold ${hidden} invisible or control character(s), each shown as \\u{HEX}: all of it goes to the server.`
      : '';
  const what = requestLabel(request, (part) => rendered(part, 'name'));
  return `Allow ${what}? Arguments go to ${rendered(entry.server, 'name')} (${where}). Rule "${rendered(decision.rule, 'name')}": ${rendered(decision.reason, 'line')}.${escapes} Arguments: ${shown}`;
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
): Promise<{ pass: true; rule: string; reason: string; secrets?: string; asked?: true } | Refusal> {
  const { entry, caller } = request;
  // Rules name tools and prompts apart (`match.tool`, `match.prompt`), so one never stands for the
  // other; a prompt's completion is decided as the prompt requested with those arguments.
  const decision = deps.policy.decideCall({
    server: entry.server,
    // A read, a subscription, a template's completion and a log level name neither: only rules
    // that name neither (a whole server) decide them.
    ...(entry.kind === 'prompt'
      ? { prompt: requestName(request) }
      : entry.kind === 'tool'
        ? { tool: requestName(request) }
        : {}),
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
    return {
      ...refusal('POLICY_DENIED', decision.reason, `${decision.reason} (policy rule "${decision.rule}").`),
      next: 'If it should be allowed, ask your policy admin (`ringfence doctor` names the policy in force).',
    };
  }
  const hidden = escapedCharacterCount(args);
  if (decision.refuseInvisible && hidden > 0) {
    const setting =
      decision.refuseInvisible === 'rule'
        ? `policy rule "${decision.rule}" (refuse_invisible)`
        : 'the organisation policy (refuse_invisible_arguments)';
    return {
      ...refusal(
        'INVISIBLE_ARGUMENTS',
        `the arguments hold ${hidden} invisible or control character(s), refused by ${setting}`,
        `the arguments hold ${hidden} invisible or control character(s) (zero-width, bidirectional, Unicode TAG, control or other characters a person cannot see), and ${setting} refuses such arguments; nothing was sent.`,
      ),
      next: 'Send the arguments without those characters; if they are needed, ask your policy admin.',
    };
  }
  // Before any person is asked about the call: a secret that may not go refuses it first.
  const secrets = await egressSecrets(deps, request, args, decision.egressSecrets, decision.rule);
  if (!secrets.pass) return secrets;
  const noted = secrets.secrets ? { secrets: secrets.secrets } : {};
  if (decision.action === 'ask') {
    const handling = FORWARDED_METHODS[request.method].ask;
    if (handling.mode === 'refuse') {
      return {
        ...refusal(
          'ASK_NOT_OFFERED',
          `a person must approve it, and ${handling.why}`,
          `policy rule "${decision.rule}" needs a person to approve it, and ${handling.why}; nothing was sent.`,
        ),
        next: 'If it should be allowed, ask your policy admin for a rule that allows it (`ringfence doctor` names the policy in force).',
      };
    }
    if (handling.mode === 'approved')
      return {
        pass: true,
        rule: decision.rule,
        reason: `${decision.reason} (not asked: ${handling.why})`,
        ...noted,
      };
    if (!caller.ask) {
      const why = caller.askUnavailable;
      return refusal(
        'ASK_UNSUPPORTED',
        why
          ? `a person must approve this call and the client cannot be asked (${why})`
          : 'a person must approve this call and the client cannot ask (no elicitation)',
        why
          ? `policy rule "${decision.rule}" needs a person to approve this call, and this client cannot be asked: ${why}. Ask your policy admin if it should be allowed.`
          : `policy rule "${decision.rule}" needs a person to approve this call, and this client cannot ask (it does not support MCP elicitation). Use a client that supports elicitation, or ask your policy admin.`,
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
    const answer = await caller.ask(question(request, decision, shown, hidden)).catch((error: unknown) => {
      // Asked in the next round (MCP 2026, input-required/): nothing is decided or written in this one;
      // the endpoint returns the question, and the retry brings the answer.
      if (error instanceof AskDeferred) throw error;
      return 'cancel' as const;
    });
    if (answer !== 'accept') {
      return refusal(
        'ASK_DECLINED',
        `the person answered ${answer}`,
        `the person you asked did not approve it (${answer}).`,
      );
    }
    return { pass: true, rule: decision.rule, reason: decision.reason, ...noted, asked: true };
  }
  return { pass: true, rule: decision.rule, reason: decision.reason, ...noted };
}

/**
 * A schema verdict's message as a reply shows it: rendered once, as one line. It quotes what the
 * server chose (a key of its structuredContent in the instance path, a property name or pattern
 * of its pinned schema) and what the model sent (an argument's key); the schema guard only
 * flattens controls, so a bidirectional or invisible character would otherwise reach the reply as
 * it came. The audit keeps the message as it came (`audit tail` renders it once).
 */
export const shownVerdict = (message: string): string => rendered(message, 'line');

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
    what: `the arguments do not match the tool's pinned input schema: ${shownVerdict(why)}.`,
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

import { definitionLabel } from '../pins/kinds.js';
import type { Caller } from '../ports/caller.js';
import type { PolicyView } from '../ports/policy.js';
import type { Upstream } from '../ports/upstream.js';
import { printable } from '../text/printable.js';
import type { PromptEntry, TemplateEntry } from './catalog.js';
import { CallRefused, lookup, upstreamErrorText } from './pipeline/index.js';
import { isPlainObject } from './pipeline/steps.js';

/** MCP's own limit on the values of one completion. */
export const COMPLETION_MAX_VALUES = 100;
/** Completions are shown to people as they type: longer values are cut. */
export const COMPLETION_VALUE_MAX = 200;

export interface CompletionAnswer {
  completion: { values: string[]; total?: number; hasMore?: boolean };
}

export const NO_COMPLETION: CompletionAnswer = { completion: { values: [] } };

/** What a client's `completion/complete` asks about a prompt, once checked. */
export interface PromptCompletion {
  readonly argument: { name: string; value: string };
  readonly context: Record<string, string> | undefined;
}

/**
 * Checks a `completion/complete` for an exposed prompt: the argument must be one the pinned
 * prompt declares, values strings, and the organisation policy must allow requesting that prompt
 * with those arguments (an `ask` rule refuses: nobody is asked at every keystroke). Returns the
 * refusal text, or what to forward.
 */
export function checkPromptCompletion(
  entry: PromptEntry,
  params: { argument?: unknown; context?: unknown },
  policy: PolicyView,
  who: { agent?: string; scope?: string },
): PromptCompletion | string {
  const { argument, context } = params;
  if (!isPlainObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string')
    return 'the argument to complete must have a string name and value.';
  const declared = new Set(entry.arguments.map((a) => a.name));
  if (!declared.has(argument.name))
    return `the prompt does not declare an argument ${JSON.stringify(argument.name)}; nothing was asked.`;
  let known: Record<string, string> | undefined;
  if (context !== undefined) {
    const args = isPlainObject(context) ? context.arguments : undefined;
    if (args !== undefined && !isPlainObject(args)) return 'context.arguments must be an object of strings.';
    for (const [name, value] of Object.entries(args ?? {})) {
      if (!declared.has(name) || typeof value !== 'string')
        return `context argument ${JSON.stringify(name)} is not a declared string argument of the prompt.`;
    }
    known = (args ?? {}) as Record<string, string>;
  }
  const decision = policy.decideCall({
    server: entry.server,
    prompt: entry.prompt,
    ...(who.agent ? { agent: who.agent } : {}),
    ...(who.scope ? { scope: who.scope } : {}),
    arguments: { ...known, [argument.name]: argument.value },
  });
  if (decision.action !== 'allow') {
    return `policy rule "${decision.rule}" does not allow this prompt to be completed (${decision.action}: ${decision.reason}).`;
  }
  return { argument: { name: argument.name, value: argument.value }, context: known };
}

/**
 * A server's completion answer as a client may show it: at most 100 values, each a string cut
 * to 200 characters and made printable; `total` and `hasMore` only when well-formed.
 */
export function cleanCompletion(result: unknown): CompletionAnswer | string {
  const completion = isPlainObject(result) ? result.completion : undefined;
  if (!isPlainObject(completion) || !Array.isArray(completion.values))
    return 'the server sent a malformed completion';
  if (!completion.values.every((v) => typeof v === 'string'))
    return 'the server sent completion values that are not strings';
  const values = (completion.values as string[])
    .slice(0, COMPLETION_MAX_VALUES)
    .map((v) => printable(v.length > COMPLETION_VALUE_MAX ? `${v.slice(0, COMPLETION_VALUE_MAX)}…` : v));
  const { total, hasMore } = completion;
  const cut = completion.values.length > COMPLETION_MAX_VALUES;
  return {
    completion: {
      values,
      ...(Number.isSafeInteger(total) && (total as number) >= 0 ? { total: total as number } : {}),
      ...(typeof hasMore === 'boolean' || cut ? { hasMore: cut || hasMore === true } : {}),
    },
  };
}

/** The variable names of an RFC 6570 URI template (`{a}`, `{+b}`, `{?c,d*}`, `{e:3}`). */
export function templateVariables(template: string): Set<string> {
  const names = new Set<string>();
  for (const [, body] of template.matchAll(/\{([^{}]*)\}/g)) {
    for (const part of (body ?? '').replace(/^[+#./;?&]/, '').split(','))
      names.add(part.replace(/(\*|:\d+)$/, ''));
  }
  return names;
}

/**
 * What a client's `completion/complete` asks about an exposed template, once checked: the
 * argument and any context must be variables of the pinned template, and the organisation policy
 * must allow reading from the server with those values (only rules naming neither a tool nor a
 * prompt decide a read). Returns the refusal text, or what to forward.
 */
export function checkTemplateCompletion(
  entry: TemplateEntry,
  params: { argument?: unknown; context?: unknown },
  policy: PolicyView,
  who: { agent?: string; scope?: string },
): PromptCompletion | string {
  const { argument, context } = params;
  if (!isPlainObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string')
    return 'the argument to complete must have a string name and value.';
  const declared = templateVariables(entry.template);
  if (!declared.has(argument.name))
    return `the template has no variable ${JSON.stringify(argument.name)}; nothing was asked.`;
  let known: Record<string, string> | undefined;
  if (context !== undefined) {
    const args = isPlainObject(context) ? context.arguments : undefined;
    if (args !== undefined && !isPlainObject(args)) return 'context.arguments must be an object of strings.';
    for (const [name, value] of Object.entries(args ?? {})) {
      if (!declared.has(name) || typeof value !== 'string')
        return `context argument ${JSON.stringify(name)} is not a variable of the template.`;
    }
    known = (args ?? {}) as Record<string, string>;
  }
  const decision = policy.decideCall({
    server: entry.server,
    ...(who.agent ? { agent: who.agent } : {}),
    ...(who.scope ? { scope: who.scope } : {}),
    arguments: { ...known, [argument.name]: argument.value },
  });
  if (decision.action !== 'allow') {
    return `policy rule "${decision.rule}" does not allow reading from ${entry.server} (${decision.action}: ${decision.reason}).`;
  }
  return { argument: { name: argument.name, value: argument.value }, context: known };
}

/**
 * `completion/complete` for an exposed prompt or template only (its exposed name or URI template mapped back): the argument
 * must be one the pinned prompt declares and the policy must allow the prompt with it. Values
 * come back capped and printable. A server that does not offer completions gets no request and
 * the answer is empty. Every refusal is a `CallRefused`. Not audited: it runs at every keystroke
 * and forwards only what the client is typing into that prompt's arguments or template's variables.
 */
export async function completePrompt(
  prompts: ReadonlyMap<string, PromptEntry>,
  params: Record<string, unknown>,
  deps: {
    policy: PolicyView;
    caller: Caller;
    target: (server: string) => { upstream: Upstream | undefined; unavailableReason: string };
    template: (exposedUriTemplate: string) => TemplateEntry | undefined;
  },
): Promise<CompletionAnswer> {
  const ref = params.ref as { type?: unknown; name?: unknown; uri?: unknown } | undefined;
  let server: string;
  let label: string;
  let upstreamRef: Record<string, unknown>;
  let checked: PromptCompletion | string;
  if (ref?.type === 'ref/resource') {
    const uri = String(ref.uri);
    const entry = deps.template(uri);
    if (!entry) {
      throw new CallRefused(
        'UNKNOWN_RESOURCE',
        `ringfence: ${JSON.stringify(uri.slice(0, 200))} is not a resource template this gateway listed (a withheld template is completed only once approved); nothing was asked.`,
      );
    }
    server = entry.server;
    label = definitionLabel(entry.server, 'template', entry.template);
    upstreamRef = { type: 'ref/resource', uri: entry.template };
    checked = checkTemplateCompletion(entry, params, deps.policy, deps.caller);
  } else if (ref?.type === 'ref/prompt') {
    const name = String(ref.name);
    const found = lookup(prompts, name, 'prompt');
    if (!found.pass) {
      throw new CallRefused(
        'UNKNOWN_PROMPT',
        `ringfence: "${name}" is not a prompt this gateway listed (a withheld prompt is completed only once approved); nothing was asked.`,
      );
    }
    const { entry } = found;
    server = entry.server;
    label = definitionLabel(entry.server, 'prompt', entry.prompt);
    upstreamRef = { type: 'ref/prompt', name: entry.prompt };
    checked = checkPromptCompletion(entry, params, deps.policy, deps.caller);
  } else {
    throw new CallRefused(
      'REFUSED',
      'ringfence: completions are offered for prompts (ref/prompt) and resource templates (ref/resource) only.',
    );
  }
  if (typeof checked === 'string')
    throw new CallRefused('REFUSED', `ringfence refused to complete ${label}: ${checked}`);
  const { upstream, unavailableReason } = deps.target(server);
  if (!upstream) {
    throw new CallRefused(
      'REFUSED',
      `ringfence could not complete ${label}: the server ${server} is not available (${unavailableReason}).`,
    );
  }
  if (!upstream.capabilities().completions) return NO_COMPLETION;
  let answer: unknown;
  try {
    answer = await upstream.complete({
      ref: upstreamRef,
      argument: checked.argument,
      ...(checked.context ? { context: { arguments: checked.context } } : {}),
    });
  } catch (error) {
    throw new CallRefused(
      'REFUSED',
      `ringfence: completing ${label} failed upstream: ${upstreamErrorText(error)}`,
    );
  }
  const clean = cleanCompletion(answer);
  if (typeof clean === 'string')
    throw new CallRefused('REFUSED', `ringfence withheld the completion of ${label}: ${clean}.`);
  return clean;
}

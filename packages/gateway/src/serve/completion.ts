import type { Caller } from '../ports/caller.js';
import type { UpstreamRequests } from '../ports/upstream.js';
import type { PromptEntry, TemplateEntry } from './catalog.js';
import {
  CallRefused,
  type CompletionAnswer,
  lookup,
  type PipelineDeps,
  runForward,
} from './pipeline/index.js';
import { isPlainObject } from './pipeline/steps.js';
import { refusedText } from './refused.js';

export {
  COMPLETION_MAX_VALUES,
  COMPLETION_VALUE_MAX,
  type CompletionAnswer,
  templateVariables,
} from './pipeline/index.js';

export const NO_COMPLETION: CompletionAnswer = { completion: { values: [] } };

/**
 * A completion's arguments as the pipeline reads them: `context.arguments` with the argument being
 * completed set to the value typed (the prompt as it would be requested, the template as it would
 * be expanded). A context entry for the argument being completed is dropped: the value typed is
 * the one that counts, and what is not checked is not forwarded. A string describes what is
 * malformed (nothing is asked).
 */
export function completionArgs(params: {
  argument?: unknown;
  context?: unknown;
}): { name: string; args: Record<string, string> } | string {
  const { argument, context } = params;
  if (!isPlainObject(argument) || typeof argument.name !== 'string' || typeof argument.value !== 'string')
    return 'the argument to complete must have a string name and value.';
  const known = isPlainObject(context) ? context.arguments : undefined;
  if (context !== undefined && (!isPlainObject(context) || (known !== undefined && !isPlainObject(known))))
    return 'context.arguments must be an object of strings.';
  const args: Record<string, string> = {};
  for (const [name, value] of Object.entries(known ?? {})) {
    if (typeof value !== 'string') return `context argument ${JSON.stringify(name)} must be a string.`;
    // Defined as data, so a name like "__proto__" is an argument like any other.
    Object.defineProperty(args, name, { value, enumerable: true, writable: true, configurable: true });
  }
  Object.defineProperty(args, argument.name, {
    value: argument.value,
    enumerable: true,
    writable: true,
    configurable: true,
  });
  return { name: argument.name, args };
}

/**
 * `completion/complete` for an exposed prompt or template only (its exposed name or URI template
 * mapped back), through the pipeline as a call is: the policy's rules (a prompt's as for
 * requesting it with those arguments, a template's the whole-server rules), the invisible-argument
 * refusal, the declared-argument check, the decision and result entries (digests only). An `ask`
 * rule refuses: nobody is asked at every keystroke. A server that does not offer completions is
 * not asked and the answer is empty. Values come back capped and printable. Every refusal is a
 * `CallRefused`.
 */
export async function completePrompt(
  prompts: ReadonlyMap<string, PromptEntry>,
  params: Record<string, unknown>,
  deps: {
    pipeline: PipelineDeps;
    caller: Caller;
    target: (server: string) => { upstream: UpstreamRequests | undefined; unavailableReason: string };
    template: (exposedUriTemplate: string) => TemplateEntry | undefined;
  },
  call: { signal?: AbortSignal } = {},
): Promise<CompletionAnswer> {
  const entry = completedEntry(prompts, params.ref, deps.template);
  const parsed = completionArgs(params);
  if (typeof parsed === 'string')
    throw new CallRefused('REFUSED', `ringfence refused the completion: ${parsed}`);
  const target = deps.target(entry.server);
  // Nothing is sent to a server that does not complete; there is nothing to decide.
  if (target.upstream && !target.upstream.capabilities().completions) return NO_COMPLETION;
  const reply = await runForward(deps.pipeline, {
    method: 'completion/complete',
    entry,
    argument: parsed.name,
    args: parsed.args,
    caller: deps.caller,
    ...target,
    protocolVersion: undefined,
    ...(call.signal ? { signal: call.signal } : {}),
  });
  const refused = refusedText(reply);
  if (refused !== undefined) throw new CallRefused('REFUSED', refused);
  return reply as CompletionAnswer;
}

/** The exposed prompt or template a completion's `ref` names; anything else is refused, unaudited. */
function completedEntry(
  prompts: ReadonlyMap<string, PromptEntry>,
  ref: unknown,
  template: (exposedUriTemplate: string) => TemplateEntry | undefined,
): PromptEntry | TemplateEntry {
  const named = isPlainObject(ref) ? ref : {};
  if (named.type === 'ref/resource') {
    // Only a string names anything; the SDK checks the shape, the gateway does not rely on it.
    const uri = typeof named.uri === 'string' ? named.uri : '';
    const entry = template(uri);
    if (entry) return entry;
    throw new CallRefused(
      'UNKNOWN_RESOURCE',
      `ringfence: ${JSON.stringify(uri.slice(0, 200))} is not a resource template this gateway listed (a withheld template is completed only once approved); nothing was asked.`,
    );
  }
  if (named.type === 'ref/prompt') {
    const name = typeof named.name === 'string' ? named.name : '';
    const found = lookup(prompts, name, 'prompt');
    if (found.pass) return found.entry;
    throw new CallRefused(
      'UNKNOWN_PROMPT',
      `ringfence: "${name}" is not a prompt this gateway listed (a withheld prompt is completed only once approved); nothing was asked.`,
    );
  }
  throw new CallRefused(
    'REFUSED',
    'ringfence: completions are offered for prompts (ref/prompt) and resource templates (ref/resource) only.',
  );
}

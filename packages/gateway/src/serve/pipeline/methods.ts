import type { AuditMethod } from '../../audit/types.js';
import { definitionLabel } from '../../pins/kinds.js';
import { rendered } from '../../text/render.js';
import type { ForwardedMethod, ForwardedRequest } from './types.js';

/**
 * How a rule whose action is `ask` is met: a person is asked through the client (as for a call);
 * nobody is asked and the request is refused (`why` nobody is); or the request goes on unasked,
 * `why` saying what a person already approved.
 */
export type AskHandling =
  | { readonly mode: 'person' }
  | { readonly mode: 'refuse'; readonly why: string }
  | { readonly mode: 'approved'; readonly why: string };

/** What the pipeline needs to know of a forwarded method besides its steps (`method-steps.ts`). */
export interface MethodIdentity {
  /** The audit entries' `method`; absent when it is the one the subject's kind implies. */
  readonly audited?: AuditMethod;
  readonly ask: AskHandling;
  /** A noun phrase for the request, around how people read its subject (`docs/prompt greet`). */
  readonly phrase: (subject: string) => string;
}

/**
 * Every method the pipeline forwards. A request of each goes through the same steps (shape and
 * size, rules and ask, the invisible-argument refusal, its arguments check, availability, the
 * decision entry, the forward, its result check, the result entry); only this and the steps of
 * `method-steps.ts` differ.
 */
export const FORWARDED_METHODS: { readonly [M in ForwardedMethod]: MethodIdentity } = {
  'tools/call': { ask: { mode: 'person' }, phrase: (s) => s },
  'prompts/get': { ask: { mode: 'person' }, phrase: (s) => s },
  'resources/read': { ask: { mode: 'person' }, phrase: (s) => s },
  'completion/complete': {
    audited: 'completion/complete',
    // A completion is asked for at every keystroke: nobody can be asked that often.
    ask: { mode: 'refuse', why: 'nobody is asked about a completion (one runs at every keystroke)' },
    phrase: (s) => `the completion of ${s}`,
  },
  'resources/subscribe': {
    audited: 'resources/subscribe',
    ask: { mode: 'person' },
    phrase: (s) => `the subscription to ${s}`,
  },
  'resources/unsubscribe': {
    audited: 'resources/unsubscribe',
    // Only a URI this very session subscribed to is unsubscribed (the endpoint keeps them), and its
    // subscription was decided by the same rule: ending it sends the server nothing new, and at a
    // session's close there is nobody left to ask.
    ask: { mode: 'approved', why: 'it ends a subscription this session was allowed' },
    phrase: (s) => `ending the subscription to ${s}`,
  },
  'logging/setLevel': {
    audited: 'logging/setLevel',
    ask: { mode: 'refuse', why: 'nobody is asked about a log level' },
    phrase: (s) => s,
  },
};

/** The name the server knows the requested definition by, the URI, or the log level. */
export function requestName(request: ForwardedRequest): string {
  switch (request.entry.kind) {
    case 'tool':
      return request.entry.tool;
    case 'prompt':
      return request.entry.prompt;
    case 'template':
      return request.entry.template;
    case 'resource':
      return request.entry.uri;
    case 'log-level':
      return request.entry.name;
  }
}

/**
 * How people read the request (`files/read`, `files/prompt greet`, `the completion of files/prompt
 * greet`); `render` renders each part the server chose (its name and the definition's) for where
 * the text goes.
 */
export function requestLabel(request: ForwardedRequest, render: (part: string) => string = (p) => p): string {
  const { server, kind } = request.entry;
  const name = render(requestName(request));
  const subject =
    kind === 'log-level'
      ? `${render(server)}/log-level ${name}`
      : definitionLabel(render(server), kind, name);
  return FORWARDED_METHODS[request.method].phrase(subject);
}

/** The same label for a stderr report line: the names rendered once, as names. */
export function shownRequestLabel(request: ForwardedRequest): string {
  return requestLabel(request, (part) => rendered(part, 'name'));
}

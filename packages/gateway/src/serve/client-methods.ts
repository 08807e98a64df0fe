import type { ForwardedMethod } from './pipeline/index.js';

/**
 * How the endpoint handles one client request or notification: answered by the gateway alone
 * (`reaches: []`), or sent on to a server only through the pipeline as the `reaches` methods
 * (decided by the policy's rules, the invisible-argument refusal and the method's own checks,
 * with a decision entry before and a result entry after). `checks` is what people read in
 * docs/gateway.md ("Every client request, and what reaches a server"), which lists these rows.
 */
export interface ClientMethod {
  readonly kind: 'request' | 'notification';
  readonly reaches: readonly ForwardedMethod[];
  readonly checks: string;
}

/**
 * Every method the endpoint registers a handler for, the SDK's own included. `client-methods.test.ts`
 * fails when the endpoint handles a method this table does not name, so no method can come to
 * reach a server without a decision; anything not registered is answered `-32601 Method not
 * found` (a request) or dropped (a notification) and reaches nothing.
 */
export const CLIENT_METHODS: Readonly<Record<string, ClientMethod>> = {
  initialize: { kind: 'request', reaches: [], checks: 'answered by the gateway (its capabilities)' },
  ping: { kind: 'request', reaches: [], checks: 'answered by the gateway' },
  'tools/list': {
    kind: 'request',
    reaches: [],
    checks: 'answered from the catalog (pinned, exposed tools; each expose decision is audited at listing)',
  },
  'tools/call': {
    kind: 'request',
    reaches: ['tools/call'],
    checks:
      'lookup, shape and size, rules and ask, invisible arguments, pinned input schema, availability, decision, result checks, sanitise, result',
  },
  'prompts/list': {
    kind: 'request',
    reaches: [],
    checks: 'answered from the catalog (pinned, exposed prompts)',
  },
  'prompts/get': {
    kind: 'request',
    reaches: ['prompts/get'],
    checks:
      'lookup, shape and size, rules (the prompt’s) and ask, invisible arguments, declared arguments, availability, decision, result checks, sanitise, result',
  },
  'completion/complete': {
    kind: 'request',
    reaches: ['completion/complete'],
    checks:
      'lookup (an exposed prompt or template), rules (the prompt’s; a template’s: whole-server), an `ask` rule refuses, invisible arguments (value, context names and values), declared argument, availability, decision, values capped and rendered, result',
  },
  'resources/list': {
    kind: 'request',
    reaches: [],
    checks: 'answered from the catalog (pinned, exposed resources)',
  },
  'resources/templates/list': {
    kind: 'request',
    reaches: [],
    checks: 'answered from the catalog (pinned, exposed templates)',
  },
  'resources/read': {
    kind: 'request',
    reaches: ['resources/read'],
    checks:
      'URI resolution (one server, listed or matched), rules (whole-server, `{uri}`) and ask, invisible arguments, availability, decision, result checks, sanitise, result',
  },
  'resources/subscribe': {
    kind: 'request',
    reaches: ['resources/subscribe'],
    checks:
      'URI resolution as a read, rules (whole-server, `{uri}`) and ask, invisible arguments, availability, decision, result; updates go only to sessions allowed to subscribe',
  },
  'resources/unsubscribe': {
    kind: 'request',
    reaches: ['resources/unsubscribe'],
    checks:
      'ends this session’s subscription in the gateway; the server is told only when the last session leaves: rules as a read (an `ask` rule is not asked again), invisible arguments, decision, result',
  },
  'logging/setLevel': {
    kind: 'request',
    reaches: ['logging/setLevel'],
    checks:
      'sets this session’s filter; forwarded to each server offering logging whose whole-server rules allow `{level}` (an `ask` rule refuses), one decision and result per server',
  },
  'notifications/initialized': { kind: 'notification', reaches: [], checks: 'kept by the gateway' },
  'notifications/cancelled': {
    kind: 'notification',
    reaches: [],
    checks:
      'aborts the client’s request in flight; a request already decided and forwarded is cancelled upstream, and its result entry says `cancelled: "client"`',
  },
  'notifications/progress': {
    kind: 'notification',
    reaches: [],
    checks: 'progress of the gateway’s own requests to the client (sampling, elicitation); never forwarded',
  },
};

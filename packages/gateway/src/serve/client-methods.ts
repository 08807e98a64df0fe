import type { ForwardedMethod } from './pipeline/index.js';

/**
 * How the endpoint handles one client request or notification: answered by the gateway alone
 * (`reaches: []`), or sent on to a server only through the pipeline as the `reaches` methods
 * (decided by the policy's rules, the invisible-argument refusal and the method's own checks,
 * with a decision entry before and a result entry after). `route` and `checks` are what people read
 * in docs/gateway.md ("Every client request, and what reaches a server"), whose table is these
 * rows word for word (`client-methods.test.ts` compares them).
 */
export interface ClientMethod {
  readonly kind: 'request' | 'notification';
  readonly reaches: readonly ForwardedMethod[];
  /** The table's "reaches a server" column, as people read it. */
  readonly route: string;
  readonly checks: string;
}

/**
 * Every method the endpoint registers a handler for, the SDK's own included. `client-methods.test.ts`
 * fails when the endpoint handles a method this table does not name, so no method can come to
 * reach a server without a decision; anything not registered is answered `-32601 Method not
 * found` (a request) or dropped (a notification) and reaches nothing.
 */
export const CLIENT_METHODS: Readonly<Record<string, ClientMethod>> = {
  initialize: {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: 'answered by the gateway (its capabilities)',
  },
  ping: {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: 'answered by the gateway',
  },
  'tools/list': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: 'answered from the catalog (pinned, exposed tools; each expose decision is audited at listing)',
  },
  'tools/call': {
    kind: 'request',
    reaches: ['tools/call'],
    route: 'through the pipeline',
    checks:
      'lookup, shape and size, rules and ask, invisible arguments, pinned input schema, availability, decision, result checks, sanitise, result',
  },
  'prompts/list': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: 'answered from the catalog',
  },
  'prompts/get': {
    kind: 'request',
    reaches: ['prompts/get'],
    route: 'through the pipeline',
    checks:
      "lookup, shape and size, rules (the prompt's) and ask, invisible arguments, declared arguments, availability, decision, result checks, sanitise, result",
  },
  'completion/complete': {
    kind: 'request',
    reaches: ['completion/complete'],
    route: 'through the pipeline',
    checks:
      "lookup (an exposed prompt or template), rules (the prompt's; a template's: whole-server), an `ask` rule refuses, invisible arguments (value, context names and values), declared argument, availability, decision, values capped and rendered, result",
  },
  'resources/list': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: 'answered from the catalog',
  },
  'resources/templates/list': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: 'answered from the catalog',
  },
  'resources/read': {
    kind: 'request',
    reaches: ['resources/read'],
    route: 'through the pipeline',
    checks:
      'URI resolution (one server, listed or matched), rules (whole-server, `{uri}`) and ask, invisible arguments, availability, decision, result checks, sanitise, result',
  },
  'resources/subscribe': {
    kind: 'request',
    reaches: ['resources/subscribe'],
    route: 'through the pipeline, each time',
    checks:
      "URI resolution as a read, rules (whole-server, `{uri}`) and ask, invisible arguments, availability, decision, result; updates go only to sessions whose subscribe was allowed; a session's repeat of its own subscribe is answered by the gateway",
  },
  'resources/unsubscribe': {
    kind: 'request',
    reaches: ['resources/unsubscribe'],
    route: 'through the pipeline, last only',
    checks:
      "ends this session's subscription in the gateway (nothing to decide); the server is told only when the last session leaves: rules as a read (an `ask` rule is not asked again), invisible arguments, decision, result",
  },
  'logging/setLevel': {
    kind: 'request',
    reaches: ['logging/setLevel'],
    route: 'through the pipeline, per server',
    checks:
      "sets this session's filter; forwarded to each server offering logging whose whole-server rules allow `{level}` (an `ask` rule refuses), one decision and result per server",
  },
  'notifications/initialized': {
    kind: 'notification',
    reaches: [],
    route: 'never',
    checks: 'kept by the gateway',
  },
  'notifications/cancelled': {
    kind: 'notification',
    reaches: [],
    route: 'as the cancel of a decided call',
    checks:
      'aborts the request in flight; one already decided and forwarded is cancelled upstream, and its result entry says `cancelled: "client"`',
  },
  'notifications/progress': {
    kind: 'notification',
    reaches: [],
    route: 'never',
    checks: "progress of the gateway's own requests to the client (sampling, elicitation)",
  },
  // Tasks (MCP 2025-11-25): a task is a `tools/call` decided when it was created (`params.task`),
  // run by the gateway, and bound to the caller's agent and scope (docs/gateway.md, Tasks).
  'tasks/get': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks:
      "answered from the gateway's tasks, the caller's own only: another's id is answered as an unknown one, and the attempt is audited",
  },
  'tasks/result': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks:
      "waits for the caller's own task; its answer had the result checks and sanitise of a call, and its result entry is written on the first fetch",
  },
  'tasks/list': {
    kind: 'request',
    reaches: [],
    route: 'never',
    checks: "the caller's own tasks only",
  },
  'tasks/cancel': {
    kind: 'request',
    reaches: [],
    route: 'as the cancel of a decided call',
    checks:
      "the caller's own task only (another's id: as an unknown one, audited); cancels its call upstream (a server's own task with `tasks/cancel`), audited, and its result entry says `cancelled: \"client\"`",
  },
};

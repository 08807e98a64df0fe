/** What a call rule or the default does: run it, refuse it, or ask the person. */
export type Action = 'allow' | 'deny' | 'ask';

/**
 * What happens to the definitions of a server the gateway has never pinned: `pin` them at once
 * (trust on first use) or `withhold` them all until a person approves them at a terminal.
 */
export type FirstSight = 'pin' | 'withhold';

/** What a server lists (or, for its instructions, says when it starts) and a policy can pin. */
export type PinKind = 'tool' | 'prompt' | 'resource' | 'template' | 'instructions';

export const PIN_KINDS: readonly PinKind[] = ['tool', 'prompt', 'resource', 'template', 'instructions'];

/**
 * An organisation pin: the only fingerprint this tool (or prompt, resource by its URI, resource
 * template by its URI template) of this server may have. `digest` is `sha256:<64 hex>` of the
 * canonical definition (see the gateway's fingerprint).
 */
export type PolicyPin =
  | { tool: string; digest: string }
  | { prompt: string; digest: string }
  | { resource: string; digest: string }
  | { template: string; digest: string }
  /** The server's instructions: one text per server, pinned under the name `instructions`. */
  | { instructions: true; digest: string };

/** Which kind a pin pins, and the name (or URI, or URI template) it pins. */
export function pinSubject(pin: PolicyPin): { kind: PinKind; name: string } {
  if ('tool' in pin) return { kind: 'tool', name: pin.tool };
  if ('prompt' in pin) return { kind: 'prompt', name: pin.prompt };
  if ('resource' in pin) return { kind: 'resource', name: pin.resource };
  if ('instructions' in pin) return { kind: 'instructions', name: 'instructions' };
  return { kind: 'template', name: pin.template };
}

/** What the organisation allows for one server. */
export interface PolicyServer {
  server: string;
  /** Absent: no restriction from the policy. Empty: no tool allowed. */
  allow_tools?: string[];
  /** When present, the only pins that count for this server. */
  pins?: PolicyPin[];
  /** The most network access this server may be given. */
  egress_allow?: string[];
  read_only_tools?: string[];
  /** The longest one call to this server may run in all, in seconds; absent: no extra cap. */
  max_call_seconds?: number;
  /** The server may ask the person's model (`sampling/createMessage`) through the client; absent: no. */
  allow_sampling?: boolean;
  /** The server may ask the person questions (`elicitation/create`) through the client; absent: no. */
  allow_elicitation?: boolean;
  /** For this server, overrides the policy's `first_sight` (absent: the policy's). */
  first_sight?: FirstSight;
  /** For this server, overrides the policy's `oauth`. */
  oauth?: PolicyOAuth;
}

/** Which authorization servers an OAuth login may use (issuer identifiers, compared exactly). */
export interface PolicyOAuth {
  /** Absent: any. Empty: none. */
  authorization_servers?: string[];
}

/** One `when` condition on the call arguments, addressed by JSON Pointer. */
export type Condition =
  | { arg: string; equals: unknown }
  | { arg: string; in: unknown[] }
  | { arg: string; glob: string }
  | { arg: string; exists: boolean };

/** A call rule; the first rule whose match and conditions all hold decides. */
export interface Rule {
  id: string;
  match?: { server?: string; tool?: string; prompt?: string; agent?: string; scope?: string };
  when?: Condition[];
  action: Action;
  reason?: string;
  /** For the calls this rule decides, overrides `refuse_invisible_arguments` (true refuses, false lets through). */
  refuse_invisible?: boolean;
}

/** A policy payload after verification and schema validation. */
export interface Policy {
  _type: 'ringfence/policy';
  spec_version: 1;
  name: string;
  version: number;
  issued_at: string;
  expires: string;
  default_egress?: 'deny' | 'any';
  allowed_mcp?: string[];
  mcp?: PolicyServer[];
  default_action: Action;
  /** Refuse calls whose arguments hold invisible characters, unless the deciding rule says otherwise. */
  refuse_invisible_arguments?: boolean;
  /** What a server never seen before gets (an `mcp[]` entry's `first_sight` overrides it); absent: `pin`. */
  first_sight?: FirstSight;
  rules?: Rule[];
  /** OAuth remote servers: the authorization servers a login may use (an `mcp[]` entry overrides it). */
  oauth?: PolicyOAuth;
}

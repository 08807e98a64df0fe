import type { ImageIdentity, PinKind } from '@ringfence/policy';
import type { EgressRule } from '../config/servers.js';

/** The organisation policy in force, as audit entries name it. */
export interface PolicyRef {
  readonly name: string;
  readonly version: number;
  readonly digest: string;
  /** keyid of the first policy-role key whose signature counted. */
  readonly signer: string;
  readonly signers: readonly string[];
  readonly expires: string;
}

/**
 * What the gateway asks of the organisation policy. With no policy installed, `LOCAL_ONLY`
 * answers: nothing is restricted beyond the local configuration and every call is allowed.
 */
export interface PolicyView {
  readonly ref: PolicyRef | undefined;
  /** Tools the policy lets this server expose; undefined = no restriction. */
  allowedTools(server: string): ReadonlySet<string> | undefined;
  /**
   * Organisation pins for a server, of one kind (name → digest); undefined = local pins count.
   * When the policy pins the server, a kind with no pins gets an empty map (nothing exposed).
   */
  orgPins(server: string, kind?: PinKind): ReadonlyMap<string, string> | undefined;
  isReadOnly(server: string, tool: string): boolean;
  /** Why this image may not run, or undefined when it may. */
  imageRefusal(image: ImageIdentity): string | undefined;
  /** Why this egress rule exceeds what the policy grants the server, or undefined. */
  egressRefusal(server: string, egress: EgressRule): string | undefined;
  /** The longest one call to this server may run in all (`mcp[].max_call_seconds`); undefined = no cap. */
  maxCallSeconds(server: string): number | undefined;
  /**
   * Whether the policy lets this server send `sampling/createMessage` (`mcp[].allow_sampling`) or
   * `elicitation/create` (`allow_elicitation`) to the client; absent under a policy means no.
   * The server's registration must allow it as well.
   */
  allowsServerRequest(server: string, kind: 'sampling' | 'elicitation'): boolean;
  /**
   * What the policy says a server never pinned gets (`first_sight`: its `mcp[]` entry's, else the
   * policy's): `pin` (trust on first use) or `withhold` (until a person approves). A local
   * `review_first` can only make it stricter; the catalog combines the two.
   */
  firstSight(server: string): 'pin' | 'withhold';
  /** The egress a new server gets when it names no hosts. */
  readonly defaultEgress: 'deny' | 'any';
  /** A tool call names `tool`; a prompt request names `prompt` (rules tell them apart). */
  decideCall(call: {
    server: string;
    tool?: string;
    prompt?: string;
    agent?: string;
    scope?: string;
    arguments: Record<string, unknown>;
  }): {
    action: 'allow' | 'deny' | 'ask';
    rule: string;
    reason: string;
    /**
     * Present when arguments holding characters people are shown escaped must be refused: by the
     * deciding rule's `refuse_invisible`, or by the policy's `refuse_invisible_arguments`.
     */
    refuseInvisible?: 'rule' | 'policy';
    /**
     * What a secret not bound for the server does to the call (`egress_secrets`), and whose
     * setting says so; absent: refused (the default).
     */
    egressSecrets?: { action: 'refuse' | 'ask' | 'allow'; from: 'rule' | 'policy' };
  };
  /** The organisation's own secret formats (`secret_patterns`); absent: none. */
  readonly secretPatterns?: readonly { class: string; pattern: string }[];
}

export const LOCAL_ONLY: PolicyView = {
  ref: undefined,
  allowedTools: () => undefined,
  orgPins: () => undefined,
  isReadOnly: () => false,
  imageRefusal: () => undefined,
  egressRefusal: () => undefined,
  maxCallSeconds: () => undefined,
  allowsServerRequest: () => true,
  firstSight: () => 'pin',
  defaultEgress: 'deny',
  decideCall: () => ({ action: 'allow', rule: 'no-policy', reason: 'no organisation policy is installed' }),
};

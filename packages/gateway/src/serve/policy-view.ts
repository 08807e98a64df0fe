import { allowedTools, decideCall, isReadOnlyTool, orgPins, type VerifiedPolicy } from '@ringfence/policy';

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
  /** Organisation pins for a server (tool → digest); undefined = local pins count. */
  orgPins(server: string): ReadonlyMap<string, string> | undefined;
  isReadOnly(server: string, tool: string): boolean;
  decideCall(call: {
    server: string;
    tool: string;
    agent?: string;
    scope?: string;
    arguments: Record<string, unknown>;
  }): { action: 'allow' | 'deny' | 'ask'; rule: string; reason: string };
}

export const LOCAL_ONLY: PolicyView = {
  ref: undefined,
  allowedTools: () => undefined,
  orgPins: () => undefined,
  isReadOnly: () => false,
  decideCall: () => ({ action: 'allow', rule: 'no-policy', reason: 'no organisation policy is installed' }),
};

/** Answers from a verified organisation policy (the policy package's pure evaluators). */
export function policyView(verified: VerifiedPolicy): PolicyView {
  const { policy } = verified;
  return {
    ref: {
      name: policy.name,
      version: policy.version,
      digest: verified.digest,
      signer: verified.signers[0] ?? '',
      signers: verified.signers,
      expires: new Date(verified.expiresAt).toISOString(),
    },
    allowedTools: (server) => {
      const tools = allowedTools(policy, server);
      return tools ? new Set(tools) : undefined;
    },
    orgPins: (server) => orgPins(policy, server),
    isReadOnly: (server, tool) => isReadOnlyTool(policy, server, tool),
    decideCall: (call) => {
      const decision = decideCall(policy, call);
      return { action: decision.action, rule: decision.rule ?? 'default_action', reason: decision.reason };
    },
  };
}

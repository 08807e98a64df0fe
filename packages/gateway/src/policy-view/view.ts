import {
  allowedTools,
  allowsServerRequest,
  decideCall,
  type EgressCeiling,
  egressCeiling,
  firstSight,
  isEgressWithinCeiling,
  isImageAllowed,
  isReadOnlyTool,
  maxCallSeconds,
  orgPins,
  type VerifiedPolicy,
} from '@ringfence/policy';
import type { EgressRule } from '../config/servers.js';
import type { PolicyView } from '../ports/policy.js';

function describeCeiling(ceiling: EgressCeiling): string {
  return ceiling.mode === 'allow'
    ? `only ${ceiling.hosts.join(', ')}`
    : ceiling.mode === 'any'
      ? 'any host'
      : 'no network';
}

/**
 * Compare a server's egress rule with the policy's ceiling for it. Private-address exemptions
 * (`egress.addresses`) widen what the proxy may reach in a way the policy cannot express, so
 * under a policy they need a ceiling of `any`.
 */
export function egressProblem(
  policyName: string,
  ceiling: EgressCeiling,
  server: string,
  egress: EgressRule,
): string | undefined {
  const refuse = (what: string) =>
    `The organisation policy "${policyName}" allows ${server} ${describeCeiling(ceiling)}; ${what} is refused. Register it within that, or ask your policy admin to widen egress_allow.`;
  if (ceiling.mode === 'any' || egress.mode === 'deny') return undefined;
  if (egress.mode === 'any') return refuse('unrestricted egress (--egress any)');
  const wider = (egress.hosts ?? []).filter((host) => !isEgressWithinCeiling(ceiling, host));
  if (wider.length > 0) return refuse(`egress to ${wider.join(', ')}`);
  if ((egress.addresses ?? []).length > 0)
    return refuse(`reaching private addresses ${egress.addresses!.join(', ')}`);
  return undefined;
}

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
    orgPins: (server, kind) => orgPins(policy, server, kind),
    isReadOnly: (server, tool) => isReadOnlyTool(policy, server, tool),
    imageRefusal: (image) =>
      isImageAllowed(policy, image).allowed
        ? undefined
        : `The organisation policy "${policy.name}" (version ${policy.version}) does not allow the image ${image.name}; allowed_mcp lists: ${(policy.allowed_mcp ?? []).join(', ')}. Use an allowed image or ask your policy admin.`,
    egressRefusal: (server, egress) =>
      egressProblem(policy.name, egressCeiling(policy, server), server, egress),
    maxCallSeconds: (server) => maxCallSeconds(policy, server),
    allowsServerRequest: (server, kind) => allowsServerRequest(policy, server, kind),
    firstSight: (server) => firstSight(policy, server),
    defaultEgress: policy.default_egress ?? 'deny',
    secretPatterns: policy.secret_patterns ?? [],
    decideCall: (call) => {
      const decision = decideCall(policy, call);
      return {
        action: decision.action,
        rule: decision.rule ?? 'default_action',
        reason: decision.reason,
        ...(decision.refuseInvisible ? { refuseInvisible: decision.refuseInvisible } : {}),
        ...(decision.egressSecrets ? { egressSecrets: decision.egressSecrets } : {}),
      };
    },
  };
}

/**
 * Where what a server is sent can go from there: what the credential scan weighs a secret
 * against (a server with no network has nowhere legitimate to send one) and what an `ask` names.
 */

import type { EgressRule } from '../../config/servers.js';

export type Reach =
  | { readonly kind: 'none' }
  | { readonly kind: 'hosts'; readonly hosts: readonly string[] }
  | { readonly kind: 'any' }
  | { readonly kind: 'remote'; readonly host: string };

/**
 * A contained server's reach, from its egress rule (hosts and address ranges alike). A
 * registration without one gets no network (the default of `mcp add`).
 */
export function reachOf(egress: EgressRule | undefined): Reach {
  if (egress === undefined || egress.mode === 'deny') return { kind: 'none' };
  if (egress.mode === 'any') return { kind: 'any' };
  return { kind: 'hosts', hosts: [...(egress.hosts ?? []), ...(egress.addresses ?? [])] };
}

/** The reach in words, for a person asked to approve a secret going there. */
export function describeReach(reach: Reach | undefined): string {
  if (!reach) return 'a network ringfence does not know';
  switch (reach.kind) {
    case 'none':
      return 'no network';
    case 'any':
      return 'any host on the internet';
    case 'remote':
      return `the remote host ${reach.host}`;
    case 'hosts':
      return reach.hosts.length <= 5
        ? `only ${reach.hosts.join(', ')}`
        : `only ${reach.hosts.slice(0, 5).join(', ')} and ${reach.hosts.length - 5} more hosts`;
  }
}

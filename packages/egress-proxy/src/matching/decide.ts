import type { AddressPolicy } from '../address/policy.js';
import type { NameResolver } from '../dns/resolve.js';
import type { Allowlist } from './allowlist.js';
import type { TargetParse } from './target.js';

/** The decision before dialling: refuse with a status, or go ahead with vetted addresses. */
export type Verdict =
  | {
      readonly allowed: false;
      readonly status: number;
      readonly reason: string;
      readonly host: string;
      readonly port: number;
      readonly address?: string;
    }
  | {
      readonly allowed: true;
      readonly host: string;
      readonly port: number;
      readonly addresses: readonly string[];
    };

export interface DecideContext {
  readonly allowlist: Allowlist;
  readonly resolver: NameResolver;
  readonly policy: AddressPolicy;
}

/**
 * The whole rule, in the order that keeps refusals cheap and side-effect free: syntax, then IP
 * literals (no DNS), then the allowlist (no DNS for unlisted names, so a client cannot use the
 * proxy to make queries), then resolution, then every answer against the forbidden ranges.
 */
export async function decide(target: TargetParse, ctx: DecideContext): Promise<Verdict> {
  const { host, port } = target;
  if (target.kind === 'malformed') return { allowed: false, status: 400, reason: target.reason, host, port };
  if (target.kind === 'ip-literal') return { allowed: false, status: 403, reason: 'ip-literal', host, port };
  const listed = ctx.allowlist.check(host, port);
  if (listed !== 'allowed') return { allowed: false, status: 403, reason: listed, host, port };
  const pinned = ctx.resolver.pinned(host);
  const resolved = pinned ? { ok: true as const, addresses: pinned } : await ctx.resolver.resolve(host);
  if (!resolved.ok) {
    return {
      allowed: false,
      status: resolved.reason === 'dns-timeout' ? 504 : 502,
      reason: resolved.reason,
      host,
      port,
    };
  }
  for (const address of resolved.addresses) {
    const refused = ctx.policy.checkText(address, port);
    if (refused) {
      return { allowed: false, status: 403, reason: `forbidden-address:${refused}`, host, port, address };
    }
  }
  return { allowed: true, host, port, addresses: resolved.addresses };
}

import type { Policy } from '@ringfence/policy';

/**
 * The organisation's list of authorization servers (signed policy, `oauth.authorization_servers`,
 * an `mcp[]` entry's overriding the top level). Issuers are compared as strings, exactly as the
 * authorization server's metadata spells its `issuer` (RFC 8414 §3.3, no normalisation).
 * `policy` is the verified payload (`loadInstalledPolicy`): an unverifiable policy never gets here,
 * the caller refuses to log in at all (fail closed).
 */

/** The list that applies to a server: its entry's, else the top level's; undefined: no list. */
export function listedIssuers(policy: Policy | undefined, serverName: string): readonly string[] | undefined {
  if (!policy) return undefined;
  const entry = policy.mcp?.find((server) => server.server === serverName);
  return entry?.oauth?.authorization_servers ?? policy.oauth?.authorization_servers;
}

/** undefined when the policy lets `serverName` log in at `issuer`, else the reason and who to ask. */
export function issuerAllowed(
  policy: Policy | undefined,
  serverName: string,
  issuer: string,
): string | undefined {
  const listed = listedIssuers(policy, serverName);
  if (listed === undefined || listed.includes(issuer)) return undefined;
  return `The organisation's policy "${policy!.name}" (version ${policy!.version}) does not list the authorization server ${issuer} for ${serverName} (${
    listed.length ? `it lists: ${listed.join(', ')}` : 'it allows no OAuth login'
  }); ringfence will not log in there. Ask whoever publishes your organisation's ringfence policy to add it to oauth.authorization_servers.`;
}

/** True when the policy names `issuer` for `serverName` (its endpoints may then leave its origin). */
export function issuerListed(policy: Policy | undefined, serverName: string, issuer: string): boolean {
  return listedIssuers(policy, serverName)?.includes(issuer) ?? false;
}

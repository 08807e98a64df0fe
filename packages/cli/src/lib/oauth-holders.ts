import type { AuditLog } from '@ringfence/gateway/audit';
import type { HttpServerConfig } from '@ringfence/gateway/config';
import { issuerAllowed, issuerListed, OAuthTokenStore, TokenHolder } from '@ringfence/gateway/remote-auth';
import type { Policy } from '@ringfence/policy';

/**
 * The token holder of each OAuth registration `mcp serve` serves (`mcp add --oauth`), one per
 * server for the whole process, so what it learnt (a refresh token refused, a token the server
 * refused for good) outlives a restart of the server's connection. Its uses, refreshes and
 * refusals go to the audit log by digest. The verified organisation `policy` (absent: none
 * installed) lists the authorization servers its tokens may come from
 * (`oauth.authorization_servers`), checked at each use and refresh, not only at login; only a
 * listed issuer's token endpoint may be on another origin than the issuer's.
 */
export function oauthAuthorizers(
  home: string,
  audit: Pick<AuditLog, 'append'>,
  policy?: Policy,
): (config: HttpServerConfig) => TokenHolder | undefined {
  const store = new OAuthTokenStore(home);
  const holders = new Map<string, TokenHolder>();
  return (config) => {
    if (!config.oauth) return undefined;
    let holder = holders.get(config.name);
    if (!holder) {
      holder = new TokenHolder(config, {
        store,
        issuerAllowed: (issuer: string) => issuerAllowed(policy, config.name, issuer),
        // A token endpoint off the issuer's origin: only while the policy lists the issuer.
        issuerListed: (issuer: string) => issuerListed(policy, config.name, issuer),
        // The entry is written in the background: a full disk is reported by the log itself.
        onEvent: (event) =>
          void audit.append({ type: 'mcp.oauth', refs: { server: config.name, ...event } }).catch(() => {}),
      });
      holders.set(config.name, holder);
    }
    return holder;
  };
}

import type { OAuthTokenStore } from '../remote-auth/store.js';
import type { KnownCredential, KnownCredentials } from './known.js';
import type { CredentialStore } from './store.js';

/**
 * Every credential ringfence holds, for the scanner: the store's, and each OAuth registration's
 * tokens (read-only). An access token is class `bearer` bound to its own server; a refresh token
 * and a client secret go to the authorization server only, never in a tool call, so they are
 * bound to no server (any hit is refused).
 */
export class StoredCredentials implements KnownCredentials {
  constructor(
    private readonly store: CredentialStore,
    private readonly oauth?: OAuthTokenStore,
  ) {}

  async all(): Promise<readonly KnownCredential[]> {
    const out = [...(await this.store.all())];
    for (const [server, entry] of Object.entries((await this.oauth?.all()) ?? {})) {
      const id = `oauth:${server}`;
      if (entry.tokens?.access_token)
        out.push({
          id: `${id}:access`,
          class: 'bearer',
          value: entry.tokens.access_token,
          boundTo: [server],
        });
      if (entry.tokens?.refresh_token)
        out.push({ id: `${id}:refresh`, class: 'bearer', value: entry.tokens.refresh_token, boundTo: [] });
      if (entry.client.client_secret)
        out.push({
          id: `${id}:client-secret`,
          class: 'generic',
          value: entry.client.client_secret,
          boundTo: [],
        });
    }
    return out;
  }
}

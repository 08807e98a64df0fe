import { Args } from '@oclif/core';
import { ServerStore } from '@ringfence/gateway/config';
import { resolveHome } from '@ringfence/gateway/home';
import { loginCommand, OAuthTokenStore, safeScopes, tokenDigest } from '@ringfence/gateway/remote-auth';
import { RingfenceCommand } from '../../../lib/base-command.js';
import { inSeconds } from '../../../lib/oauth.js';

/** One OAuth registration as `mcp auth status --json` prints it: never a token, only its digest. */
export interface AuthStatusEntry {
  name: string;
  url: string;
  logged_in: boolean;
  issuer?: string;
  client_via?: string;
  scope?: string;
  pending_scope?: string;
  expires_at?: number;
  expired?: boolean;
  refresh_token: boolean;
  token_digest?: string;
}

export default class McpAuthStatus extends RingfenceCommand {
  static override summary = 'Show the OAuth login of each remote server (never a token).';

  static override examples = [
    '<%= config.bin %> mcp auth status',
    '<%= config.bin %> mcp auth status issues --json',
  ];

  static override enableJsonFlag = true;

  static override args = {
    name: Args.string({ required: false, description: 'server name (default: all)' }),
  };

  async run(): Promise<{ stored: string; servers: AuthStatusEntry[] }> {
    const { args } = await this.parse(McpAuthStatus);
    const home = resolveHome();
    const store = new OAuthTokenStore(home);
    const servers = (await new ServerStore(home).list()).filter(
      (server) => server.transport === 'http' && server.oauth && (!args.name || server.name === args.name),
    );
    const all = await store.all();
    const now = Date.now();
    const entries: AuthStatusEntry[] = servers.map((server) => {
      const entry = all[server.name];
      const tokens = entry?.tokens;
      return {
        name: server.name,
        url: server.transport === 'http' ? server.url : '',
        logged_in: tokens !== undefined,
        ...(entry ? { issuer: entry.authorization_server.issuer, client_via: entry.client.via } : {}),
        ...(tokens?.scope ? { scope: tokens.scope } : {}),
        // The server chose it: only its shell-safe scope tokens are shown (scope-tokens.ts).
        ...(entry?.pending_scope ? { pending_scope: safeScopes(entry.pending_scope).kept.join(' ') } : {}),
        ...(tokens?.expires_at !== undefined
          ? { expires_at: tokens.expires_at, expired: tokens.expires_at <= now }
          : {}),
        refresh_token: tokens?.refresh_token !== undefined,
        ...(tokens ? { token_digest: tokenDigest(tokens.access_token) } : {}),
      };
    });
    if (args.name && entries.length === 0)
      this.log(
        `${args.name} is not a remote server registered for OAuth (ringfence mcp add ${args.name} --url URL --oauth).`,
      );
    else if (entries.length === 0)
      this.log('No remote server is registered for OAuth (ringfence mcp add NAME --url URL --oauth).');
    for (const entry of entries) {
      const tokens = all[entry.name]?.tokens;
      this.log(`${entry.name}  ${entry.url}`);
      if (!entry.logged_in) {
        this.log(`  not logged in: ringfence mcp auth login ${entry.name}`);
        continue;
      }
      this.log(`  issuer         ${entry.issuer}`);
      this.log(`  client via     ${entry.client_via}`);
      this.log(`  scopes         ${entry.scope ?? '(none said)'}`);
      if (all[entry.name]?.pending_scope)
        this.log(
          `  needs more     ${entry.pending_scope || '(a wider scope)'}: ${loginCommand(entry.name, { kind: 'insufficient-scope', scope: entry.pending_scope ?? '' })}`,
        );
      this.log(`  expires in     ${inSeconds(tokens?.expires_at, now)}`);
      this.log(`  refresh token  ${entry.refresh_token ? 'yes' : 'no'}`);
      this.log(`  token          ${entry.token_digest}`);
    }
    this.log(`Stored in ${store.where}; no keyring in this version.`);
    return { stored: store.path, servers: entries };
  }
}

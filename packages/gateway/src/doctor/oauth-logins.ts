import { type ServerConfig, ServerStore } from '../config/servers.js';
import { resolveHome } from '../home/home.js';
import { loginStateOf } from '../remote-auth/holder.js';
import { loginCommand, loginNeededText } from '../remote-auth/login-needed.js';
import { type OAuthEntry, OAuthTokenStore, tokenDigest } from '../remote-auth/store.js';

/** The doctor's check of OAuth logins (a `DoctorCheck`; declared here, as doctor.ts imports this file). */
export interface OAuthLoginsCheck {
  readonly id: 'oauth-logins';
  readonly title: string;
  readonly status: 'ok' | 'warn';
  readonly required: false;
  readonly summary: string;
  readonly fix?: string;
}

/**
 * One OAuth registration's login as people read it (doctor, `mcp ls`), without spending a
 * refresh: `needed` when a login must be made (none yet, expired with no refresh token, a step-up
 * waiting), with the words and the command. The token is named by its digest only.
 */
export function oauthLoginLine(
  server: string,
  entry: OAuthEntry | undefined,
  now = Date.now(),
): { readonly needed: boolean; readonly line: string; readonly command?: string } {
  const reason = loginStateOf(entry, now);
  if (reason)
    return { needed: true, line: loginNeededText(server, reason), command: loginCommand(server, reason) };
  const tokens = entry!.tokens!;
  const expiry =
    tokens.expires_at === undefined
      ? 'no expiry given'
      : tokens.expires_at > now
        ? `expires ${new Date(tokens.expires_at).toISOString()}`
        : 'expired, renewed with its refresh token at the next use';
  return {
    needed: false,
    line: `${server}: logged in (token ${tokenDigest(tokens.access_token)}, ${expiry})`,
  };
}

const isOAuth = (server: ServerConfig): boolean => server.transport === 'http' && server.oauth !== undefined;

/**
 * The OAuth registrations (`mcp add --oauth`) whose tokens are missing, expired without a refresh
 * token, or waiting for a step-up, each with the command that fixes it. Never required: the other
 * servers work without them.
 */
export async function checkOAuthLogins(env: { readonly env: NodeJS.ProcessEnv }): Promise<OAuthLoginsCheck> {
  const base = { id: 'oauth-logins', title: 'OAuth logins', required: false } as const;
  const home = resolveHome(env.env);
  let servers: ServerConfig[];
  let entries: Readonly<Record<string, OAuthEntry>>;
  const store = new OAuthTokenStore(home);
  try {
    servers = (await new ServerStore(home).list()).filter(isOAuth);
    if (servers.length === 0) return { ...base, status: 'ok', summary: 'no OAuth registrations' };
    entries = await store.all();
  } catch (error) {
    return { ...base, status: 'warn', summary: (error as Error).message };
  }
  const lines = servers.map((server) => oauthLoginLine(server.name, entries[server.name]));
  const needed = lines.filter((line) => line.needed);
  return {
    ...base,
    status: needed.length > 0 ? 'warn' : 'ok',
    summary: `${lines.map((line) => line.line).join('; ')} (tokens in ${store.where})`,
    ...(needed.length > 0 ? { fix: needed.map((line) => line.command).join('; ') } : {}),
  };
}

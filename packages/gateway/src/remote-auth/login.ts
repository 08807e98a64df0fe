import type { HttpServerConfig } from '../config/servers.js';
import { clip, rendered } from '../text/render.js';
import { checkAuthorizationResponse, listenPreferring } from './callback.js';
import { type Discovery, discover } from './discovery.js';
import { RemoteAuthError } from './errors.js';
import { createPkcePair, randomState } from './pkce.js';
import { obtainClient } from './registration.js';
import type { FetchLike } from './safe-fetch.js';
import { safeScopes } from './scope-tokens.js';
import { type OAuthEntry, type OAuthTokenStore, tokenDigest } from './store.js';
import { requestToken } from './token-request.js';

/**
 * One browser login for one registration (authorization code + PKCE S256, loopback redirect,
 * `state`, RFC 9207 `iss`, RFC 8707 `resource` on both requests), saved with
 * `OAuthTokenStore.put`. Nothing secret is printed: `print` gets the authorization URL (which
 * carries the PKCE challenge and the state, not the verifier) and what is asked and why.
 */

export const DEFAULT_LOGIN_TIMEOUT_MS = 5 * 60_000;

export interface LoginOptions {
  readonly store: OAuthTokenStore;
  /** Scopes this login must obtain besides those already granted (`--scope`). */
  readonly scope?: string;
  /** Opens the person's browser at the URL; absent: the URL is only printed (`--no-browser`). */
  readonly openBrowser?: (url: string) => Promise<void> | void;
  /** A line for the person (stderr in the CLI). */
  readonly print: (line: string) => void;
  /** The 401's WWW-Authenticate header when the login starts from one. */
  readonly wwwAuthenticate?: string | null;
  /** A pre-registered client's secret (read from stdin by the CLI, never argv). */
  readonly clientSecret?: string;
  /** The organisation's policy: undefined when the issuer is allowed, else why not. */
  readonly issuerAllowed?: (issuer: string) => string | undefined;
  /** True when the policy lists the issuer by name (see discovery.ts, endpoint origins). */
  readonly issuerListed?: (issuer: string) => boolean;
  readonly timeoutMs?: number;
  readonly fetch?: FetchLike;
  readonly now?: () => number;
}

export interface LoginResult {
  readonly issuer: string;
  readonly client_via: OAuthEntry['client']['via'];
  readonly scope?: string;
  readonly expires_at?: number;
  readonly refresh_token: boolean;
  readonly token_digest: string;
  readonly resource: string;
}

const scopes = (...lists: (string | undefined)[]): string[] => [
  ...new Set(lists.flatMap((list) => (list ?? '').split(/\s+/)).filter(Boolean)),
];

/** Scopes (partly the servers' words) on one printable line. */
const shown = (list: readonly string[]): string => rendered(clip(list.join(' '), 300), 'line');

/**
 * The scope to ask for (MCP spec "Scope Selection Strategy" and "Step-Up"): the union of what is
 * already granted, what a step-up is waiting for (`pending_scope`) and `--scope`; with none of
 * these, the 401's challenge scope, else the registration's scope, else the resource metadata's
 * `scopes_supported`; else no scope parameter. Says why when it widens a grant.
 */
export function chooseScope(
  discovery: Pick<Discovery, 'challenge_scope' | 'scopes_supported'>,
  configured: string | undefined,
  previous: OAuthEntry | undefined,
  asked: string | undefined,
): { scope?: string; why?: string } {
  const granted = scopes(previous?.tokens?.scope);
  // The stored step-up scope is filtered again (the file may predate the filter, or be edited).
  const needed = scopes(safeScopes(previous?.pending_scope).kept.join(' '), asked, discovery.challenge_scope);
  if (needed.length > 0) {
    const missing = needed.filter((scope) => !granted.includes(scope));
    const why =
      missing.length > 0 && granted.length > 0
        ? `Asking for more access: ${shown(missing)} (${
            previous?.pending_scope ? 'the server said a call needs it' : 'asked for with --scope'
          }), besides what you granted before (${shown(granted)}).`
        : undefined;
    return { scope: scopes(configured, ...granted, ...needed).join(' '), ...(why ? { why } : {}) };
  }
  if (granted.length > 0) return { scope: granted.join(' ') };
  if (configured) return { scope: configured };
  if (discovery.scopes_supported?.length) return { scope: discovery.scopes_supported.join(' ') };
  return {};
}

export async function login(
  name: string,
  config: Pick<HttpServerConfig, 'url' | 'oauth'>,
  options: LoginOptions,
): Promise<LoginResult> {
  const previous = await options.store.get(name);
  const discovery = await discover(config.url, {
    wwwAuthenticate: options.wwwAuthenticate,
    issuerAllowed: options.issuerAllowed,
    issuerListed: options.issuerListed,
    fetch: options.fetch,
  });
  const issuer = discovery.authorization_server.issuer;
  const sameIssuer = previous?.authorization_server.issuer === issuer ? previous : undefined;
  const listener = await listenPreferring(sameIssuer?.client.redirect_uri);
  try {
    const { scope, why } = chooseScope(discovery, config.oauth?.scope, sameIssuer, options.scope);
    if (why) options.print(why);
    const client = await obtainClient(
      discovery,
      listener.redirectUri,
      {
        ...(config.oauth?.client_id ? { client_id: config.oauth.client_id } : {}),
        ...((options.clientSecret ??
        (sameIssuer?.client.via === 'pre-registered' ? sameIssuer.client.client_secret : undefined))
          ? { client_secret: options.clientSecret ?? sameIssuer?.client.client_secret }
          : {}),
        ...(config.oauth?.client_metadata_url
          ? { client_metadata_url: config.oauth.client_metadata_url }
          : {}),
        ...(sameIssuer ? { previous: { issuer, client: sameIssuer.client } } : {}),
      },
      { fetch: options.fetch },
    );
    const pkce = createPkcePair();
    const state = randomState();
    const authorizationUrl = new URL(discovery.authorization_server.authorization_endpoint);
    const query = authorizationUrl.searchParams;
    query.set('response_type', 'code');
    query.set('client_id', client.client_id);
    query.set('redirect_uri', listener.redirectUri);
    query.set('code_challenge', pkce.challenge);
    query.set('code_challenge_method', pkce.method);
    query.set('state', state);
    query.set('resource', discovery.resource);
    if (scope) query.set('scope', scope);
    options.print(`Log in to ${name} (${discovery.resource}) at ${issuer}.`);
    options.print(`Open this URL in your browser if it did not open by itself:\n${authorizationUrl.href}`);
    if (options.openBrowser) {
      try {
        await options.openBrowser(authorizationUrl.href);
      } catch {
        options.print('The browser could not be opened; open the URL above yourself.');
      }
    }
    const timeoutMs = options.timeoutMs ?? DEFAULT_LOGIN_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const answer = await Promise.race([
      listener.response,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () =>
            reject(
              new RemoteAuthError(
                'OAUTH_TIMEOUT',
                `The login was not finished within ${Math.round(timeoutMs / 1000)} s; run ringfence mcp auth login ${name} again.`,
              ),
            ),
          timeoutMs,
        );
      }),
    ]).finally(() => clearTimeout(timer));
    const code = checkAuthorizationResponse(answer.path, answer.params, {
      state,
      issuer,
      issRequired: discovery.iss_parameter_supported,
    });
    const tokens = await requestToken({
      token_endpoint: discovery.authorization_server.token_endpoint,
      client,
      ...(discovery.token_endpoint_auth_methods_supported
        ? { auth_methods: discovery.token_endpoint_auth_methods_supported }
        : {}),
      params: {
        grant_type: 'authorization_code',
        code,
        redirect_uri: listener.redirectUri,
        code_verifier: pkce.verifier,
      },
      resource: discovery.resource,
      fetch: options.fetch,
      ...(options.now ? { now: options.now } : {}),
    });
    // RFC 6749 §5.1: no scope in the answer means the scope asked for was granted.
    const granted = tokens.scope ?? scope;
    // Kept for the next step-up command: shell-safe scope tokens only (scope-tokens.ts).
    const stillPending = safeScopes(sameIssuer?.pending_scope).kept.filter(
      (s) => !scopes(granted).includes(s),
    );
    const entry: OAuthEntry = {
      resource: discovery.resource,
      resource_origin: discovery.resource_origin,
      authorization_server: discovery.authorization_server,
      client,
      tokens: { ...tokens, ...(granted ? { scope: granted } : {}) },
      ...(stillPending.length ? { pending_scope: stillPending.join(' ') } : {}),
    };
    await options.store.put(name, entry);
    if (stillPending.length)
      options.print(
        `The authorization server did not grant ${shown(stillPending)}; calls that need it will still be refused.`,
      );
    return {
      issuer,
      client_via: client.via,
      ...(granted ? { scope: granted } : {}),
      ...(tokens.expires_at !== undefined ? { expires_at: tokens.expires_at } : {}),
      refresh_token: tokens.refresh_token !== undefined,
      token_digest: tokenDigest(tokens.access_token),
      resource: discovery.resource,
    };
  } finally {
    await listener.close();
  }
}

import { stat } from 'node:fs/promises';
import type { HttpServerConfig } from '../config/servers.js';
import { UpstreamError } from '../ports/errors.js';
import { clip, rendered } from '../text/render.js';
import { LoginNeededError, type LoginNeededReason } from './login-needed.js';
import { endpointRefusal, offOriginRefusal, RefreshRefused, refreshTokens } from './refresh.js';
import { safeScopes } from './scope-tokens.js';
import { type OAuthEntry, type OAuthTokenStore, type TokenRecord, tokenDigest } from './store.js';
import { parseWwwAuthenticate } from './www-authenticate.js';

/** What the audit log records of a held token: always by its digest, never the token. */
export type TokenEvent =
  /** A token was sent to its server (once per token per process). */
  | { readonly event: 'used'; readonly token: string }
  /** A refresh at the token endpoint gave a new token. */
  | { readonly event: 'refreshed'; readonly token: string; readonly previous: string }
  /** The server refused a token (401/403), or a refresh failed; `token` absent when none was sent. */
  | { readonly event: 'refused'; readonly token?: string; readonly status?: number; readonly reason: string };

export interface TokenHolderOptions {
  readonly store: OAuthTokenStore;
  /** The organisation's check of the stored issuer: undefined when allowed, else why not. */
  readonly issuerAllowed?: (issuer: string) => string | undefined;
  /**
   * Whether the organisation's policy lists the issuer (`oauth.authorization_servers`): only then
   * may its token endpoint be on another origin than the issuer's, as at login (discovery.ts).
   * Absent: no issuer is listed.
   */
  readonly issuerListed?: (issuer: string) => boolean;
  /** Told of each use, refresh and refusal (the audit log). */
  readonly onEvent?: (event: TokenEvent) => void;
  readonly now?: () => number;
}

/** A refusal by the MCP server of one of our requests. */
export interface AuthRefusal {
  readonly status: number;
  readonly wwwAuthenticate: string | undefined;
  /** The Authorization header the refused request carried (undefined: none). */
  readonly sent: string | undefined;
  /** The refused request was already the retry. */
  readonly retried: boolean;
}

/** Refresh this long before expiry: a tenth of the token's lifetime, at most a minute. */
export function refreshMarginMs(tokens: TokenRecord): number {
  if (tokens.expires_at === undefined) return 0;
  return Math.min(60_000, Math.max(0, (tokens.expires_at - tokens.obtained_at) / 10));
}

/**
 * Why a record cannot be used as it is without the network: nothing stored, expired with no
 * refresh token, or a step-up asked for. Undefined: usable (perhaps after a refresh). For
 * `doctor` and `mcp ls`, which must not spend a refresh.
 */
export function loginStateOf(entry: OAuthEntry | undefined, now: number): LoginNeededReason | undefined {
  if (!entry?.tokens) return { kind: 'missing' };
  if (entry.pending_scope) {
    // Filtered again: the file may predate the filter, or have been edited.
    const { kept, dropped } = safeScopes(entry.pending_scope);
    return { kind: 'insufficient-scope', scope: kept.join(' '), ...(dropped.length ? { dropped } : {}) };
  }
  const { expires_at, refresh_token } = entry.tokens;
  if (expires_at !== undefined && expires_at <= now && !refresh_token) return { kind: 'expired' };
  return undefined;
}

const bearerOf = (header: string | undefined): string | undefined =>
  header?.startsWith('Bearer ') ? header.slice(7) : undefined;

/**
 * The OAuth tokens of one remote registration, as the gateway uses them. A token goes only to
 * the registration's own origin, and only when that is the origin the login recorded
 * (`resource_origin`); every other request gets none. It is refreshed ahead of expiry and once
 * after a 401, one refresh at a time per registration and under the store's lock (so two
 * processes never spend a rotated refresh token twice); a refresh that fails, a second 401 and
 * an `insufficient_scope` 403 end in a {@link LoginNeededError} naming the command. The store is
 * read again whenever the file changed, so a login made while `mcp serve` runs is picked up at
 * the next request. The issuer is re-checked at each use (`issuerAllowed`), and so are the token
 * endpoint's scheme (https, or http on loopback only) and its origin (the issuer's, unless the
 * policy still lists the issuer: `issuerListed`).
 */
export class TokenHolder {
  readonly server: string;
  /** The registration's URL origin: the only one a token may go to. */
  readonly origin: string;
  private readonly store: OAuthTokenStore;
  private readonly now: () => number;
  private cache: { key: string; entry: OAuthEntry | undefined } | undefined;
  private refreshing: Promise<OAuthEntry> | undefined;
  /** Digests of tokens already recorded as used by this process. */
  private readonly used = new Set<string>();
  /** A refresh token the authorization server refused: not tried again until the store changes. */
  private deadRefresh: string | undefined;
  /** An access token the server refused for good (no refresh helped): not sent again until the store changes. */
  private deadAccess: string | undefined;

  constructor(
    config: Pick<HttpServerConfig, 'name' | 'url'>,
    private readonly options: TokenHolderOptions,
  ) {
    this.server = config.name;
    this.origin = new URL(config.url).origin;
    this.store = options.store;
    this.now = options.now ?? Date.now;
  }

  /** The stored record, read again only when the file changed (size, mtime, inode). */
  private async current(): Promise<OAuthEntry | undefined> {
    let key = 'absent';
    try {
      const info = await stat(this.store.path, { bigint: true });
      key = `${info.ino}:${info.size}:${info.mtimeNs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    if (this.cache?.key !== key) {
      this.cache = { key, entry: key === 'absent' ? undefined : await this.store.get(this.server) };
      this.deadRefresh = undefined;
      this.deadAccess = undefined;
    }
    return this.cache.entry;
  }

  private event(event: TokenEvent): void {
    this.options.onEvent?.(event);
  }

  /** Refusals of a record that no login fixes without care: issuer policy, a plain-http endpoint. */
  private checkUsable(entry: OAuthEntry): void {
    const issuer = entry.authorization_server.issuer;
    const why = this.options.issuerAllowed?.(issuer);
    if (why !== undefined)
      throw new UpstreamError(
        'AUTH_REFUSED',
        `${this.server}'s token was not used: its authorization server ${rendered(clip(issuer, 200), 'line')} is not allowed (${why}). Ask whoever signs the policy, or remove the server: ringfence mcp rm ${this.server}`,
      );
    const plain = endpointRefusal(entry.authorization_server.token_endpoint, 'token endpoint');
    if (plain)
      throw new UpstreamError(
        'AUTH_REFUSED',
        `${this.server}'s token was not used: ${plain}. Log in again: ringfence mcp auth login ${this.server}`,
      );
    const offOrigin = offOriginRefusal(
      entry.authorization_server.token_endpoint,
      issuer,
      'token endpoint',
      this.options.issuerListed,
    );
    if (offOrigin)
      throw new UpstreamError(
        'AUTH_REFUSED',
        `${this.server}'s token was not used and not renewed: ${offOrigin}. Log in again (its metadata is checked anew): ringfence mcp auth login ${this.server}`,
      );
    if (entry.tokens && entry.tokens.token_type.toLowerCase() !== 'bearer')
      throw new UpstreamError(
        'AUTH_REFUSED',
        `${this.server}'s token is of type ${rendered(clip(entry.tokens.token_type, 40), 'line')}, which ringfence cannot send (only Bearer). Log in again: ringfence mcp auth login ${this.server}`,
      );
  }

  private due(tokens: TokenRecord): boolean {
    return tokens.expires_at !== undefined && this.now() >= tokens.expires_at - refreshMarginMs(tokens);
  }

  private expired(tokens: TokenRecord): boolean {
    return tokens.expires_at !== undefined && this.now() >= tokens.expires_at;
  }

  /**
   * The `Authorization` value for a request to `url`, or undefined when no token may go there
   * (another origin than the registration's). Rejects with {@link LoginNeededError} when no
   * usable token is held, or an `AUTH_REFUSED` error when the held one may not be used.
   */
  async authorization(url: URL): Promise<string | undefined> {
    if (url.origin !== this.origin) return undefined;
    let entry = await this.current();
    if (!entry?.tokens) throw new LoginNeededError(this.server, { kind: 'missing' });
    if (entry.resource_origin !== this.origin)
      throw new LoginNeededError(this.server, {
        kind: 'other-origin',
        loggedInAt: entry.resource_origin,
        registeredAt: this.origin,
      });
    this.checkUsable(entry);
    if (entry.tokens.access_token === this.deadAccess)
      throw new LoginNeededError(this.server, { kind: 'revoked' });
    if (this.due(entry.tokens)) entry = await this.renewIfDue(entry);
    const token = entry.tokens!.access_token;
    const digest = tokenDigest(token);
    if (!this.used.has(digest)) {
      this.used.add(digest);
      this.event({ event: 'used', token: digest });
    }
    return `Bearer ${token}`;
  }

  /** Ahead of expiry: a failed refresh keeps a token that has not expired yet. */
  private async renewIfDue(entry: OAuthEntry): Promise<OAuthEntry> {
    const tokens = entry.tokens!;
    if (!tokens.refresh_token || tokens.refresh_token === this.deadRefresh) {
      if (!this.expired(tokens)) return entry;
      throw new LoginNeededError(
        this.server,
        tokens.refresh_token ? { kind: 'revoked' } : { kind: 'expired' },
      );
    }
    try {
      return await this.refresh(tokens.access_token);
    } catch (error) {
      if (!this.expired(tokens) && !(error instanceof LoginNeededError)) return entry;
      throw error;
    }
  }

  /**
   * One refresh per registration at a time, made under the store's lock: if another process (or
   * a login) replaced the token `stale` meanwhile and the new one is not due, that one is taken.
   */
  private refresh(stale: string): Promise<OAuthEntry> {
    this.refreshing ??= this.store
      .update(this.server, async (current) => {
        if (!current?.tokens) throw new LoginNeededError(this.server, { kind: 'missing' });
        this.checkUsable(current);
        if (current.tokens.access_token !== stale && !this.due(current.tokens)) return { result: current };
        const previous = tokenDigest(current.tokens.access_token);
        let tokens: TokenRecord;
        try {
          tokens = await refreshTokens(current, { now: this.now });
        } catch (error) {
          if (!(error instanceof RefreshRefused)) {
            this.event({
              event: 'refused',
              token: previous,
              reason: `refresh failed: ${(error as Error).message}`,
            });
            throw error;
          }
          this.deadRefresh = current.tokens.refresh_token;
          this.event({
            event: 'refused',
            token: previous,
            reason: `refresh refused: ${rendered(clip(error.oauthError, 80), 'line')}`,
          });
          throw new LoginNeededError(this.server, { kind: 'revoked', detail: error.message });
        }
        this.event({ event: 'refreshed', token: tokenDigest(tokens.access_token), previous });
        const next: OAuthEntry = { ...current, tokens };
        return { entry: next, result: next };
      })
      .then((entry) => {
        this.cache = undefined;
        return entry;
      })
      .finally(() => {
        this.refreshing = undefined;
      });
    return this.refreshing;
  }

  /**
   * The server refused a request (401 or 403). Resolves true when it is worth one retry (a new
   * token is held now); false when the refusal is none of OAuth's business (a 403 for another
   * reason); rejects with the {@link LoginNeededError} the request ends with otherwise. A 403
   * `insufficient_scope` records the scope to ask for (`pending_scope`: what was granted and what
   * the server asks) for the step-up login.
   */
  async refused(refusal: AuthRefusal): Promise<boolean> {
    // Undefined when the header has no (readable) Bearer challenge: a bare refusal.
    const challenge = parseWwwAuthenticate(refusal.wwwAuthenticate);
    const sent = bearerOf(refusal.sent);
    const digest = sent === undefined ? undefined : tokenDigest(sent);
    const why = challenge?.error ?? `HTTP ${refusal.status}`;
    // A refusal of a request that carried no token (another origin's) or not about OAuth: not ours.
    if (sent === undefined || (refusal.status === 403 && challenge?.error !== 'insufficient_scope'))
      return false;
    this.event({
      event: 'refused',
      ...(digest ? { token: digest } : {}),
      status: refusal.status,
      reason: rendered(clip(why, 80), 'line'),
    });
    if (refusal.status === 403) return this.stepUp(challenge?.scope);
    this.cache = undefined;
    const entry = await this.current();
    if (!entry?.tokens) throw new LoginNeededError(this.server, { kind: 'missing' });
    const gone = () => {
      this.deadAccess = sent;
      return new LoginNeededError(this.server, { kind: 'revoked', detail: `the server answered ${why}` });
    };
    if (refusal.retried) throw gone();
    // A login or another process put a new token there since: try it.
    if (entry.tokens.access_token !== sent && !this.due(entry.tokens)) return true;
    if (!entry.tokens.refresh_token || entry.tokens.refresh_token === this.deadRefresh) throw gone();
    try {
      await this.refresh(sent);
    } catch (error) {
      if (error instanceof LoginNeededError) this.deadAccess = sent;
      throw error;
    }
    return true;
  }

  /**
   * Records what the step-up login asks for: only shell-safe scope tokens (scope-tokens.ts), as
   * the scope is the server's choice and goes into the command people are told to run.
   */
  private async stepUp(required: string | undefined): Promise<never> {
    const { kept, dropped } = await this.store.update(this.server, (current) => {
      const wanted = safeScopes(current?.tokens?.scope, current?.pending_scope, required);
      const pending = wanted.kept.join(' ');
      if (!current || !pending) return { result: wanted };
      return { entry: { ...current, pending_scope: pending }, result: wanted };
    });
    this.cache = undefined;
    throw new LoginNeededError(this.server, {
      kind: 'insufficient-scope',
      scope: kept.join(' '),
      ...(dropped.length ? { dropped } : {}),
    });
  }
}

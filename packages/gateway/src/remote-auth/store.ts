import { createHash } from 'node:crypto';
import { expectObject, expectOnlyKeys, JsonStore, StoreError } from '../store/json-store.js';

/**
 * What a login learnt about where tokens come from, kept so a refresh needs no discovery and so
 * the token is only ever sent where this record says. Every URL here was checked at login
 * (`remote-auth/discovery.ts`: https except loopback, the issuer rule, the origin rules).
 */
export interface AuthorizationServerRecord {
  /** The issuer the metadata named and matched (RFC 8414 §3.3). */
  readonly issuer: string;
  readonly authorization_endpoint: string;
  readonly token_endpoint: string;
  readonly registration_endpoint?: string;
  readonly revocation_endpoint?: string;
}

/** How ringfence is known to the authorization server. */
export interface ClientRecord {
  readonly client_id: string;
  /** Only for a confidential client (pre-registered or given one by dynamic registration). */
  readonly client_secret?: string;
  readonly via: 'metadata-document' | 'dynamic' | 'pre-registered';
  /** The loopback redirect URI registered (RFC 8252 §7.3); the port may differ at each login. */
  readonly redirect_uri?: string;
  /**
   * How the client authenticates at the token endpoint, as registered (RFC 7591 §2). Absent:
   * `client_secret_basic` with a secret (RFC 7591's default), `none` without.
   */
  readonly token_endpoint_auth_method?: 'none' | 'client_secret_basic' | 'client_secret_post';
}

export interface TokenRecord {
  readonly access_token: string;
  readonly token_type: string;
  readonly refresh_token?: string;
  /** Epoch ms; absent: the server did not say (treated as valid until a 401). */
  readonly expires_at?: number;
  /** The scopes granted (space-separated), as the token endpoint said. */
  readonly scope?: string;
  /** Epoch ms of the login or refresh that produced it. */
  readonly obtained_at: number;
}

/** One registration's OAuth state. Keyed by server name: a token is never shared between two. */
export interface OAuthEntry {
  /** The resource indicator (RFC 8707) asked for: the server's canonical URI. */
  readonly resource: string;
  /**
   * The only origin the access token is ever sent to: the MCP server's own (its URL's scheme,
   * host and port). A request elsewhere gets no token, whatever the metadata later says.
   */
  readonly resource_origin: string;
  readonly authorization_server: AuthorizationServerRecord;
  readonly client: ClientRecord;
  readonly tokens?: TokenRecord;
  /** The scope a step-up asked for and did not get yet (`insufficient_scope`), for people. */
  readonly pending_scope?: string;
}

export interface OAuthTokensFile {
  readonly version: 1;
  readonly servers: Record<string, OAuthEntry>;
}

/** A short digest naming a token in the audit log and in `mcp auth status`, never the token. */
export const tokenDigest = (token: string): string =>
  `sha256:${createHash('sha256').update(token, 'utf8').digest('hex').slice(0, 16)}`;

const string = (value: unknown, what: string, optional = false): void => {
  if (value === undefined && optional) return;
  if (typeof value !== 'string' || value === '')
    throw new StoreError('STORE_SHAPE', `${what} must be a non-empty string`);
};

function parseEntry(value: unknown, what: string): OAuthEntry {
  const entry = expectObject(value, what);
  expectOnlyKeys(
    entry,
    ['resource', 'resource_origin', 'authorization_server', 'client', 'tokens', 'pending_scope'],
    what,
  );
  string(entry.resource, `${what}.resource`);
  string(entry.resource_origin, `${what}.resource_origin`);
  string(entry.pending_scope, `${what}.pending_scope`, true);
  const as = expectObject(entry.authorization_server, `${what}.authorization_server`);
  expectOnlyKeys(
    as,
    ['issuer', 'authorization_endpoint', 'token_endpoint', 'registration_endpoint', 'revocation_endpoint'],
    `${what}.authorization_server`,
  );
  for (const key of ['issuer', 'authorization_endpoint', 'token_endpoint'])
    string(as[key], `${what}.authorization_server.${key}`);
  for (const key of ['registration_endpoint', 'revocation_endpoint'])
    string(as[key], `${what}.authorization_server.${key}`, true);
  const client = expectObject(entry.client, `${what}.client`);
  expectOnlyKeys(
    client,
    ['client_id', 'client_secret', 'via', 'redirect_uri', 'token_endpoint_auth_method'],
    `${what}.client`,
  );
  if (
    client.token_endpoint_auth_method !== undefined &&
    !['none', 'client_secret_basic', 'client_secret_post'].includes(
      client.token_endpoint_auth_method as string,
    )
  )
    throw new StoreError(
      'STORE_SHAPE',
      `${what}.client.token_endpoint_auth_method must be none, client_secret_basic or client_secret_post`,
    );
  string(client.client_id, `${what}.client.client_id`);
  string(client.client_secret, `${what}.client.client_secret`, true);
  string(client.redirect_uri, `${what}.client.redirect_uri`, true);
  if (!['metadata-document', 'dynamic', 'pre-registered'].includes(client.via as string))
    throw new StoreError(
      'STORE_SHAPE',
      `${what}.client.via must be metadata-document, dynamic or pre-registered`,
    );
  if (entry.tokens !== undefined) {
    const tokens = expectObject(entry.tokens, `${what}.tokens`);
    expectOnlyKeys(
      tokens,
      ['access_token', 'token_type', 'refresh_token', 'expires_at', 'scope', 'obtained_at'],
      `${what}.tokens`,
    );
    string(tokens.access_token, `${what}.tokens.access_token`);
    string(tokens.token_type, `${what}.tokens.token_type`);
    string(tokens.refresh_token, `${what}.tokens.refresh_token`, true);
    string(tokens.scope, `${what}.tokens.scope`, true);
    for (const key of ['expires_at', 'obtained_at'])
      if ((tokens[key] !== undefined || key === 'obtained_at') && !Number.isSafeInteger(tokens[key]))
        throw new StoreError('STORE_SHAPE', `${what}.tokens.${key} must be a time in ms`);
  }
  return entry as unknown as OAuthEntry;
}

export function parseOAuthTokensFile(value: unknown): OAuthTokensFile {
  const file = expectObject(value, 'oauth-tokens.json');
  expectOnlyKeys(file, ['version', 'servers'], 'oauth-tokens.json');
  if (file.version !== 1)
    throw new StoreError('STORE_SHAPE', `version ${String(file.version)} is not supported (expected 1)`);
  const servers: Record<string, OAuthEntry> = Object.create(null);
  for (const [name, entry] of Object.entries(expectObject(file.servers, 'servers')))
    servers[name] = parseEntry(entry, `servers.${name}`);
  return { version: 1, servers };
}

/**
 * `oauth-tokens.json` in RINGFENCE_HOME (0600, written atomically under a lock): each OAuth
 * registration's authorization server, client and tokens. Where the values live is said by
 * {@link OAuthTokenStore.where} (printed by `mcp auth status` and `doctor`).
 */
export class OAuthTokenStore {
  private readonly store: JsonStore<OAuthTokensFile>;

  constructor(home: string) {
    this.store = new JsonStore(
      home,
      'oauth-tokens.json',
      parseOAuthTokensFile,
      () => ({ version: 1, servers: Object.create(null) }),
      'to start over (every OAuth server then needs ringfence mcp auth login NAME again)',
    );
  }

  get path(): string {
    return this.store.path;
  }

  /** Where the tokens are kept, for people. */
  get where(): string {
    // The path last: the shared redactor reads a word after `…tokens.json` as its value.
    return `a file readable by you only (mode 0600): ${this.store.path}`;
  }

  async get(name: string): Promise<OAuthEntry | undefined> {
    return (await this.store.read()).servers[name];
  }

  async all(): Promise<Readonly<Record<string, OAuthEntry>>> {
    return (await this.store.read()).servers;
  }

  /** Replace a registration's record (a login). */
  async put(name: string, entry: OAuthEntry): Promise<void> {
    parseEntry(entry, `servers.${name}`);
    await this.store.update((file) => {
      file.servers[name] = entry;
    });
  }

  /**
   * Change a registration's record under the lock (a refresh): `change` sees the current record,
   * so two processes refreshing at once do not lose the newer token. `change` may be async (a
   * refresh at the token endpoint is made under the lock, so a rotated refresh token is never
   * spent twice); the lock waits at most 10 s. Returns what it returned.
   */
  async update<R>(
    name: string,
    change: (
      entry: OAuthEntry | undefined,
    ) => { entry?: OAuthEntry; result: R } | Promise<{ entry?: OAuthEntry; result: R }>,
  ): Promise<R> {
    return this.store.update(async (file) => {
      const { entry, result } = await change(file.servers[name]);
      if (entry) {
        parseEntry(entry, `servers.${name}`);
        file.servers[name] = entry;
      }
      return result;
    });
  }

  /** Forget a registration's tokens (logout, `mcp rm`); true when there was a record. */
  async forget(name: string): Promise<boolean> {
    return this.store.update((file) => {
      const had = name in file.servers;
      delete file.servers[name];
      return had;
    });
  }
}

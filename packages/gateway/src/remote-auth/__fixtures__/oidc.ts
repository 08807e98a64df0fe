/// <reference path="./oidc-provider.d.ts" />
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair } from 'jose';
import Provider from 'oidc-provider';

/**
 * A real authorization server for the unit tests: `oidc-provider` on 127.0.0.1 with PKCE required,
 * dynamic registration, resource indicators issuing JWT access tokens, refresh tokens and
 * revocation; and a protected resource (a stand-in MCP endpoint) that answers 401 with a Bearer
 * challenge and serves its RFC 9728 metadata. The browser is played by {@link driveBrowser}
 * (fetch + a cookie jar through the provider's devInteractions login and consent forms).
 */

const listen = async (handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<{ server: Server; url: string }> => {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
};

export interface AuthServerOptions {
  /** The audience the provider puts in access tokens; default: the resource asked for. */
  readonly audience?: (resource: string) => string;
  readonly scopes?: readonly string[];
}

export interface AuthServer {
  readonly issuer: string;
  close(): Promise<void>;
}

export async function startAuthServer(options: AuthServerOptions = {}): Promise<AuthServer> {
  let issuer = '';
  const holder = { handle: (_req: IncomingMessage, _res: ServerResponse) => {} };
  const { server, url } = await listen((req, res) => holder.handle(req, res));
  issuer = url;
  const { privateKey } = await generateKeyPair('RS256', { extractable: true });
  const jwk = { ...(await exportJWK(privateKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  const scopes = options.scopes ?? ['files:read', 'files:write'];
  const provider = new Provider(issuer, {
    jwks: { keys: [jwk] },
    scopes: ['openid', 'offline_access', ...scopes],
    features: {
      devInteractions: { enabled: true },
      registration: { enabled: true },
      revocation: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: (_ctx: unknown, _client: unknown, oneOf?: string) => oneOf,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx: unknown, resource: string) => ({
          scope: scopes.join(' '),
          audience: options.audience ? options.audience(resource) : resource,
          accessTokenTTL: 3600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
    pkce: { required: () => true },
    ttl: { Interaction: 600, Session: 3600, Grant: 3600, AccessToken: 3600, RefreshToken: 86400 },
    findAccount: async (_ctx: unknown, sub: string) => ({ accountId: sub, claims: async () => ({ sub }) }),
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed('refresh_token'),
    clientDefaults: { grant_types: ['authorization_code', 'refresh_token'], token_endpoint_auth_method: 'none' },
  });
  // Loud errors from the provider would be lost in its own 500 pages; tests read them here.
  const callback = provider.callback();
  holder.handle = callback;
  return {
    issuer,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

export interface ResourceServer {
  /** The MCP endpoint's URL (…/mcp). */
  readonly url: string;
  readonly origin: string;
  /** The WWW-Authenticate header its 401 carries. */
  readonly challenge: string;
  close(): Promise<void>;
}

/** A protected resource at /mcp whose metadata lists `issuer` (and says `resource`, default its own URL). */
export async function startResourceServer(
  issuers: readonly string[],
  options: { resource?: (own: string) => string; scope?: string; scopes_supported?: string[] } = {},
): Promise<ResourceServer> {
  const state = { url: '', challenge: '' };
  const { server, url } = await listen((req, res) => {
    const path = new URL(req.url ?? '/', url).pathname;
    if (path === '/.well-known/oauth-protected-resource/mcp') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          resource: options.resource ? options.resource(state.url) : state.url,
          authorization_servers: issuers,
          ...(options.scopes_supported ? { scopes_supported: options.scopes_supported } : {}),
        }),
      );
      return;
    }
    if (path === '/mcp') {
      res.writeHead(401, { 'www-authenticate': state.challenge }).end();
      return;
    }
    res.writeHead(404).end();
  });
  state.url = `${url}/mcp`;
  state.challenge = `Bearer resource_metadata="${url}/.well-known/oauth-protected-resource/mcp"${
    options.scope ? `, scope="${options.scope}"` : ''
  }`;
  return {
    url: state.url,
    origin: url,
    challenge: state.challenge,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

class CookieJar {
  private readonly cookies = new Map<string, string>();
  take(response: Response): void {
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
  header(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }
}

const formOf = (html: string): { action: string; fields: Record<string, string> } | undefined => {
  const form = /<form[^>]*action="([^"]+)"[^>]*>([\s\S]*?)<\/form>/i.exec(html);
  if (!form) return undefined;
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input[^>]*>/gi)) {
    const name = /name="([^"]+)"/.exec(input[0])?.[1];
    const value = /value="([^"]*)"/.exec(input[0])?.[1] ?? '';
    if (name) fields[name] = value;
  }
  return { action: form[1]!.replace(/&amp;/g, '&'), fields };
};

/**
 * Plays the person's browser from the authorization URL to the redirect: logs in as `user` on
 * the devInteractions form, consents, and returns the URL the provider redirected to. With
 * `deliver` (default) it also opens that URL (the loopback listener of the login).
 */
export async function driveBrowser(start: string, options: { user?: string; deliver?: boolean; redirectPrefix?: string } = {}): Promise<string> {
  const jar = new CookieJar();
  let url = start;
  let method = 'GET';
  let body: URLSearchParams | undefined;
  const prefix = options.redirectPrefix ?? 'http://127.0.0.1:';
  const issuerOrigin = new URL(start).origin;
  for (let step = 0; step < 20; step++) {
    if (new URL(url).origin !== issuerOrigin && url.startsWith(prefix)) {
      if (options.deliver !== false) await fetch(url).then((r) => r.text());
      return url;
    }
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: { cookie: jar.header(), ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(body ? { body } : {}),
    });
    jar.take(response);
    method = 'GET';
    body = undefined;
    const location = response.headers.get('location');
    if (location) {
      await response.body?.cancel();
      url = new URL(location, url).href;
      continue;
    }
    const html = await response.text();
    const form = formOf(html);
    if (!form) throw new Error(`the provider answered ${response.status} without a form: ${html.slice(0, 500)}`);
    const fields = { ...form.fields };
    if ('login' in fields || /name="login"/.test(html)) {
      fields.login = options.user ?? 'alice';
      fields.password = 'any';
    }
    url = new URL(form.action, url).href;
    method = 'POST';
    body = new URLSearchParams(fields);
  }
  throw new Error('the browser was bounced more than 20 times');
}

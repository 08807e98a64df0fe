/**
 * Remote entries of a client's config as `mcp add --url` registrations: a `url` entry (with the
 * OAuth fields some clients keep beside it) and an `npx mcp-remote URL …` bridge. mcp-remote is
 * there to do the OAuth login the client cannot: ringfence logs in itself (`mcp auth login`), so
 * the bridge becomes an OAuth registration unless the entry sends a fixed Authorization header.
 */
import { type OAuthRegistration, validateRemoteUrl } from '../config/servers.js';
import { redactArgs } from '../text/redact.js';
import type { ClientEntry } from './formats.js';
import type { Translation } from './translation.js';

const skip = (reason: string): Translation => ({ kind: 'skip', reason });
const BY_HAND = 'add it by hand: ringfence mcp add NAME --url URL --oauth (see ringfence mcp add --help)';
const SSE_ONLY =
  'it uses the older SSE transport; ringfence speaks streamable HTTP only. If the server also offers it (often at /mcp), add it with: ringfence mcp add NAME --url URL';

/** The URL as ringfence will accept it at `mcp add`, or the refusal (which quotes no credential). */
function urlProblem(url: string): string | undefined {
  try {
    validateRemoteUrl(url);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

const isAuthorization = (name: string) => name.trim().toLowerCase() === 'authorization';
const pairs = (map: Record<string, string>) => Object.entries(map).map(([k, v]) => `${k}=${v}`);

/** A fixed Authorization header: sent as it is, so no OAuth login (a registration cannot have both). */
const STATIC_TOKEN =
  'its Authorization header is kept in the home (0600) and sent as it is; if the server logs in by OAuth instead, register it again with ringfence mcp add NAME --url URL --oauth';

/**
 * The OAuth fields a client keeps beside a `url`: Claude Code's `oauth {clientId, scopes,
 * callbackPort, authServerMetadataUrl}`, Cursor's `auth {CLIENT_ID, CLIENT_SECRET, scopes}`.
 * undefined: the entry has none; a string: why it cannot be imported.
 */
function clientOAuthFields(
  entry: ClientEntry,
): { oauth: OAuthRegistration; notes: string[] } | string | undefined {
  const field = entry.oauth ?? entry.auth;
  if (field === undefined) return undefined;
  if (!field || typeof field !== 'object' || Array.isArray(field))
    return `its ${entry.oauth !== undefined ? 'oauth' : 'auth'} field is not an object; ${BY_HAND}`;
  const f = field as Record<string, unknown>;
  if (f.CLIENT_SECRET !== undefined || f.clientSecret !== undefined || f.client_secret !== undefined)
    return `its OAuth client has a secret, which ringfence takes only at mcp add (never from a client's file); ${BY_HAND}`;
  const clientId = f.clientId ?? f.CLIENT_ID ?? f.client_id;
  const scopes = f.scopes ?? f.scope;
  if (clientId !== undefined && (typeof clientId !== 'string' || clientId === ''))
    return `its OAuth client ID is not a string; ${BY_HAND}`;
  const scope = Array.isArray(scopes) ? scopes.map(String).join(' ') : scopes;
  if (scope !== undefined && (typeof scope !== 'string' || scope.trim() === ''))
    return `its OAuth scopes are not a list or a string; ${BY_HAND}`;
  const notes: string[] = [];
  if (f.callbackPort !== undefined)
    notes.push(
      'its fixed callback port is not carried: ringfence logs in through a loopback redirect on a port of its own',
    );
  if (f.authServerMetadataUrl !== undefined)
    notes.push(
      'its authorization server metadata URL is not carried: ringfence finds the server from the MCP server’s own metadata',
    );
  return {
    oauth: {
      ...(clientId ? { client_id: clientId as string } : {}),
      ...(scope ? { scope: (scope as string).trim() } : {}),
    },
    notes,
  };
}

/** A client's own `url` entry (`type` http or absent). */
export function translateUrlEntry(entry: ClientEntry, headers: Record<string, string>): Translation {
  const type = String(entry.type ?? 'http');
  if (type === 'sse') return skip(SSE_ONLY);
  if (type !== 'http' && type !== 'streamable-http' && type !== 'streamableHttp')
    return skip(`its type "${type}" is not one ringfence knows`);
  const url = String(entry.url);
  const problem = urlProblem(url);
  if (problem) return skip(problem);
  const auth = clientOAuthFields(entry);
  if (typeof auth === 'string') return skip(auth);
  if (auth && Object.keys(headers).some(isAuthorization))
    return skip(
      `it has both an OAuth login and a fixed Authorization header; ${BY_HAND}, or with --header for the fixed one`,
    );
  return {
    kind: 'register',
    input: {
      url,
      ...(Object.keys(headers).length > 0 ? { headers: pairs(headers) } : {}),
      ...(auth ? { oauth: auth.oauth } : {}),
    },
    notes: auth?.notes ?? [],
  };
}

/** mcp-remote's flags that take a value (its README), and those that concern only its own process. */
const MCP_REMOTE_VALUE_FLAGS = new Set([
  '--header',
  '--transport',
  '--host',
  '--resource',
  '--auth-timeout',
  '--ignore-tool',
  '--static-oauth-client-info',
  '--static-oauth-client-metadata',
]);
const MCP_REMOTE_OWN_FLAGS = new Set(['--host', '--auth-timeout', '--debug', '--silent', '--enable-proxy']);

/**
 * `npx [-y] mcp-remote[@VERSION] URL [CALLBACK-PORT] [--header "K: V"]… [--transport T]
 * [--static-oauth-client-info JSON] …`: the URL registered for ringfence to reach itself, over
 * OAuth unless a fixed Authorization header is given.
 */
export function translateMcpRemote(args: readonly string[]): Translation {
  const positional: string[] = [];
  const flags: [string, string | undefined][] = [];
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    const value = eq !== -1 ? arg.slice(eq + 1) : MCP_REMOTE_VALUE_FLAGS.has(flag) ? args[++i] : undefined;
    flags.push([flag, value]);
  }
  const url = positional[0];
  if (!url) return skip('mcp-remote without a URL; add it by hand: ringfence mcp add NAME --url URL --oauth');
  const problem = urlProblem(url);
  if (problem) return skip(problem);
  const notes = [
    'was bridged by mcp-remote; ringfence reaches the URL itself over streamable HTTP (an SSE-only server will fail at start)',
  ];
  const headers: string[] = [];
  let staticToken = false;
  let clientId: string | undefined;
  let scope: string | undefined;
  for (const [flag, value = ''] of flags) {
    if (flag === '--header') {
      const colon = value.indexOf(':');
      if (colon <= 0) {
        notes.push(`${redactArgs(['--header', value]).join(' ')} not carried: not a "Name: value" header`);
        continue;
      }
      const name = value.slice(0, colon).trim();
      if (isAuthorization(name)) staticToken = true;
      headers.push(`${name}=${value.slice(colon + 1).trim()}`);
    } else if (flag === '--transport') {
      if (value === 'sse-only') return skip(SSE_ONLY);
    } else if (flag === '--static-oauth-client-info') {
      if (value.startsWith('@'))
        return skip(
          `mcp-remote reads its OAuth client from a file (--static-oauth-client-info @…); ${BY_HAND}`,
        );
      let info: Record<string, unknown>;
      try {
        info = JSON.parse(value) as Record<string, unknown>;
      } catch {
        return skip(`its --static-oauth-client-info is not JSON; ${BY_HAND}`);
      }
      if (info.client_secret !== undefined)
        return skip(
          `its OAuth client has a secret, which ringfence takes only at mcp add (never from a client's file); ${BY_HAND}`,
        );
      if (typeof info.client_id === 'string' && info.client_id !== '') clientId = info.client_id;
    } else if (flag === '--static-oauth-client-metadata') {
      try {
        const metadata = JSON.parse(value) as Record<string, unknown>;
        if (typeof metadata.scope === 'string' && metadata.scope.trim() !== '') scope = metadata.scope.trim();
      } catch {
        /* the scope is all ringfence would take from it */
      }
      notes.push('its client metadata is not carried: ringfence registers a client of its own');
    } else if (flag === '--resource') {
      notes.push(
        '--resource not carried: ringfence asks for tokens for the server’s URL, as its metadata names it',
      );
    } else if (flag === '--ignore-tool') {
      notes.push(
        '--ignore-tool not carried: ringfence lists the tools to keep instead (mcp add --allow-tool)',
      );
    } else if (flag !== '--allow-http' && !MCP_REMOTE_OWN_FLAGS.has(flag)) {
      notes.push(`${redactArgs([flag]).join(' ')} not carried: not an mcp-remote flag ringfence maps`);
    }
  }
  if (positional.length > 2 || (positional[1] !== undefined && !/^\d+$/.test(positional[1])))
    notes.push(`${redactArgs(positional.slice(1)).join(' ')} not carried: not a callback port`);
  if (staticToken && (clientId || scope))
    return skip(`it has both an OAuth client and a fixed Authorization header; ${BY_HAND}`);
  if (staticToken) notes.push(STATIC_TOKEN);
  return {
    kind: 'register',
    input: {
      url,
      ...(headers.length > 0 ? { headers } : {}),
      ...(staticToken
        ? {}
        : { oauth: { ...(clientId ? { client_id: clientId } : {}), ...(scope ? { scope } : {}) } }),
    },
    notes,
  };
}

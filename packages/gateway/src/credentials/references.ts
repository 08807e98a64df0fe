import type { ServerConfig } from '../config/servers.js';
import { hostsOutsideClass } from './classes.js';
import { CredentialError } from './errors.js';
import { type CredentialRecord, type CredentialStore, validateCredentialName } from './store.js';

/** `-e VAR=@secret:NAME` / `--header NAME=@secret:NAME`: the value is the stored credential NAME. */
export const SECRET_PREFIX = '@secret:';

export interface SecretReference {
  /** `env` of a contained server, `header` of a remote one. */
  readonly field: 'env' | 'header';
  /** The variable or header name. */
  readonly key: string;
  /** The credential's name in the store. */
  readonly credential: string;
}

export const secretReferenceName = (value: string): string | undefined =>
  value.startsWith(SECRET_PREFIX) ? value.slice(SECRET_PREFIX.length) : undefined;

/** Every `@secret:` value of a server's env or headers. */
export function secretReferences(server: ServerConfig): SecretReference[] {
  const [field, record] =
    server.transport === 'http'
      ? (['header', server.headers ?? {}] as const)
      : (['env', server.env ?? {}] as const);
  const refs: SecretReference[] = [];
  for (const [key, value] of Object.entries(record)) {
    const credential = secretReferenceName(value);
    if (credential === undefined) continue;
    validateCredentialName(credential);
    refs.push({ field, key, credential });
  }
  return refs;
}

/** The hosts a server can send what it holds to: its allowlist, its URL's host; none for deny. */
function destinations(server: ServerConfig): readonly string[] | 'any' {
  if (server.transport === 'http') return [new URL(server.url).host];
  if (server.egress.mode === 'any') return 'any';
  if (server.egress.mode === 'deny') return [];
  return server.egress.hosts ?? [];
}

/**
 * Why `server` may not hold credential `name` (undefined: it may). The refusal names the
 * credential, the server and what to do, never the value.
 */
export function credentialRefusal(
  server: ServerConfig,
  name: string,
  record: CredentialRecord,
): string | undefined {
  if (!record.bound_to.includes(server.name))
    return `credential "${name}" is not bound to server "${server.name}" (bound to: ${record.bound_to.join(', ') || 'none'}). If it is meant for this server, bind it first: ringfence secret bind ${name} --server ${server.name}`;
  if (server.transport === 'container' && server.egress.mode === 'deny')
    return `the server "${server.name}" has no network (egress deny), so credential "${name}" has nowhere legitimate to go; a server that needs a credential needs the hosts it is for: register it with --egress-allow HOST`;
  const hosts = destinations(server);
  if (hosts === 'any') return undefined;
  const outside = hostsOutsideClass(record.class, hosts);
  if (outside.length > 0)
    return `credential "${name}" is of class ${record.class}, which is meant only for its provider's hosts, but server "${server.name}" can reach ${outside.join(', ')}. Narrow the server's egress to the provider's hosts, or, if this host really takes it (a self-hosted instance), store it as class generic: ringfence secret set ${name} --class generic --bind ${record.bound_to.join(',')}`;
  return undefined;
}

/**
 * Registration's check (`mcp add`, `client import`): every `@secret:` of the server names a
 * stored credential bound to it, that fits where the server can send it.
 */
export async function checkSecretReferences(server: ServerConfig, store: CredentialStore): Promise<void> {
  for (const ref of secretReferences(server)) {
    const record = await store.get(ref.credential);
    const refusal = credentialRefusal(server, ref.credential, record);
    if (refusal) throw new CredentialError('CREDENTIAL_NOT_BOUND', `${refusal} (${ref.field} ${ref.key})`);
  }
}

/**
 * The server as it is started: each `@secret:` replaced by the value, read from the store at
 * this moment (checked again: a binding removed since registration stops the start). The result
 * is held in memory only, for the one container's Env or the one connection's headers.
 */
export async function resolveSecretReferences<T extends ServerConfig>(
  server: T,
  store: CredentialStore,
): Promise<T> {
  const refs = secretReferences(server);
  if (refs.length === 0) return server;
  const resolved: Record<string, string> = {
    ...(server.transport === 'http' ? server.headers : server.env),
  };
  for (const ref of refs) {
    const refusal = credentialRefusal(server, ref.credential, await store.get(ref.credential));
    if (refusal) throw new CredentialError('CREDENTIAL_NOT_BOUND', `${refusal} (${ref.field} ${ref.key})`);
    resolved[ref.key] = await store.value(ref.credential);
  }
  return server.transport === 'http' ? { ...server, headers: resolved } : { ...server, env: resolved };
}

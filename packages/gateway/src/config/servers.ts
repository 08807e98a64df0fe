import { isIP } from 'node:net';
import { parseAllowEntry, parseCidr } from '@ringfence/egress-proxy/contract';
import { RingfenceError } from '@ringfence/policy';
import { expectObject, expectOnlyKeys, JsonStore } from '../store/json-store.js';
import { redactText } from '../text/redact.js';
import { type CallTimeouts, limitsProblem } from './limits.js';

export type ConfigErrorCode =
  | 'SERVER_NAME'
  | 'SERVER_EXISTS'
  | 'SERVER_UNKNOWN'
  | 'SERVER_URL'
  | 'SERVER_FIELD'
  | 'SERVER_EGRESS';
export class ConfigError extends RingfenceError<ConfigErrorCode> {}

export const SERVER_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;
export const RESERVED_SERVER_NAMES = new Set(['ringfence']);

export interface EgressRule {
  readonly mode: 'deny' | 'allow' | 'any';
  readonly hosts?: readonly string[];
  readonly addresses?: readonly string[];
}

export interface MountRule {
  readonly path: string;
  readonly mode: 'ro' | 'rw';
}

export interface Limits {
  readonly memory_mb: number;
  readonly pids: number;
  readonly cpus: number;
}

interface ServerBase {
  readonly name: string;
  /** Empty or absent: every tool. */
  readonly allow_tools?: readonly string[];
  /** Absent: the defaults of `config/limits.ts` (60 s without progress, 600 s in all). */
  readonly timeouts?: CallTimeouts;
  /** The result cap in MiB, base64 content counted decoded; absent: 6. */
  readonly max_result_mb?: number;
  /** `mcp add --allow-sampling`: it may ask the client's model (within the policy); absent: no. */
  readonly allow_sampling?: boolean;
  /** `mcp add --allow-elicitation`: it may ask the person questions (within the policy); absent: no. */
  readonly allow_elicitation?: boolean;
  /**
   * `mcp add --review-first`: on its first sight every definition is withheld until a person
   * approves it (no trust on first use). Only ever stricter than the policy's `first_sight`.
   */
  readonly review_first?: boolean;
  /**
   * `mcp add --protocol 2025`: speak MCP 2025 (`initialize`) to this server even when it also
   * offers 2026-07-28; absent: the newest era both speak (negotiated once, kept in upstream-eras.json).
   */
  readonly protocol?: '2025';
}

export interface ContainerServerConfig extends ServerBase {
  readonly transport: 'container';
  readonly image: string;
  readonly image_id: string;
  readonly command?: readonly string[];
  readonly egress: EgressRule;
  readonly env?: Readonly<Record<string, string>>;
  readonly mounts?: readonly MountRule[];
  readonly limits?: Limits;
}

/**
 * `mcp add --oauth`: the server is protected by OAuth 2.1 (MCP's authorization spec); ringfence
 * logs in for this registration and holds its tokens in `oauth-tokens.json` (`remote-auth/`).
 * Nothing secret is kept here: a pre-registered client's secret lives with the tokens.
 */
export interface OAuthRegistration {
  /** A client registered by hand with the authorization server (`--client-id`); absent: discovered. */
  readonly client_id?: string;
  /** The scopes asked for at login (space-separated); absent: what the server's metadata advertises. */
  readonly scope?: string;
  /**
   * The organisation's client ID metadata document (`--client-metadata-url`): an https URL with a
   * path, used as the client_id where the authorization server supports such documents.
   */
  readonly client_metadata_url?: string;
}

export interface HttpServerConfig extends ServerBase {
  readonly transport: 'http';
  readonly url: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly oauth?: OAuthRegistration;
}

export type ServerConfig = ContainerServerConfig | HttpServerConfig;

export interface ServersFile {
  version: 1;
  servers: ServerConfig[];
}

export function validateServerName(name: string): void {
  if (!SERVER_NAME.test(name)) {
    throw new ConfigError(
      'SERVER_NAME',
      `"${name}" is not a valid server name: use 1-32 characters, lower-case letters, digits and "-", starting with a letter or digit.`,
    );
  }
  if (RESERVED_SERVER_NAMES.has(name)) {
    throw new ConfigError(
      'SERVER_NAME',
      `"${name}" is reserved for the gateway's own tools; choose another name.`,
    );
  }
}

function isLoopbackHost(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (isIP(bare) === 4) return bare.startsWith('127.');
  if (isIP(bare) === 6) return bare === '::1';
  return false;
}

/** https anywhere; plain http only to a loopback address (a server on this machine). */
export function validateRemoteUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(
      'SERVER_URL',
      `"${redactText(raw)}" is not a URL. Give the server's MCP endpoint, e.g. https://mcp.example.com/mcp.`,
    );
  }
  if (url.username || url.password) {
    throw new ConfigError(
      'SERVER_URL',
      'Put credentials in a header (--header "Authorization=Bearer …"), not in the URL.',
    );
  }
  if (url.protocol === 'https:') return url;
  if (url.protocol === 'http:' && isLoopbackHost(url.hostname)) return url;
  throw new ConfigError(
    'SERVER_URL',
    `${url.protocol}//${url.host} is refused: remote servers must use https (plain http is allowed only on a loopback address).`,
  );
}

/** How {@link validateEgressRule} names the lists: flag names for the CLI. */
export interface EgressRuleLabels {
  readonly hosts: string;
  readonly addresses: string;
}

/**
 * Checks every host and range with the sidecar's own parsers, so an entry the proxy would refuse
 * is refused when it is registered or loaded, not when the sidecar starts. `where` names the rule:
 * a prefix such as `mcp-servers.json servers[2] ("docs")`, to which `egress.hosts[i]` /
 * `egress.addresses[i]` is added, or the names of the two lists (flags).
 */
export function validateEgressEntries(
  rule: Pick<EgressRule, 'hosts' | 'addresses'>,
  where: string | EgressRuleLabels,
): void {
  const name = (list: 'hosts' | 'addresses', index: number): string =>
    typeof where === 'string' ? `${where} egress.${list}[${index}]` : where[list];
  for (const [index, host] of (rule.hosts ?? []).entries()) {
    try {
      parseAllowEntry(host);
    } catch (error) {
      throw new ConfigError(
        'SERVER_EGRESS',
        `${name('hosts', index)} "${host}" is refused: ${(error as Error).message}. ` +
          'Give a host name (api.example.com, *.example.com, HOST:PORT); address ranges go in --egress-allow-address (egress.addresses).',
        { cause: error },
      );
    }
  }
  for (const [index, range] of (rule.addresses ?? []).entries()) {
    try {
      parseCidr(range);
    } catch (error) {
      throw new ConfigError(
        'SERVER_EGRESS',
        `${name('addresses', index)} "${range}" is refused: ${(error as Error).message}. ` +
          'Give an address range as ADDRESS/PREFIX (10.20.0.0/16, fd00::/8); host names go in --egress-allow (egress.hosts).',
        { cause: error },
      );
    }
  }
}

/** {@link validateEgressEntries}, and an `allow` rule must name at least one host. */
export function validateEgressRule(rule: EgressRule, where: string | EgressRuleLabels): void {
  validateEgressEntries(rule, where);
  if (rule.mode === 'allow' && (rule.hosts ?? []).length === 0) {
    const hosts = typeof where === 'string' ? `${where} egress.hosts` : where.hosts;
    throw new ConfigError(
      'SERVER_EGRESS',
      `${hosts} is empty, but egress "allow" means "only these hosts": the sidecar would refuse to start. Give at least one host, or use egress "deny".`,
    );
  }
}

function stringArray(value: unknown, what: string): string[] {
  if (!Array.isArray(value) || value.some((item) => typeof item !== 'string'))
    throw new ConfigError('SERVER_FIELD', `${what} must be a list of strings`);
  return value as string[];
}

function stringRecord(value: unknown, what: string): Record<string, string> {
  const record = expectObject(value, what);
  for (const [key, item] of Object.entries(record)) {
    if (typeof item !== 'string') throw new ConfigError('SERVER_FIELD', `${what}.${key} must be a string`);
  }
  return record as Record<string, string>;
}

/**
 * Checks one server entry. `inFile` says it was read from mcp-servers.json (egress refusals then
 * name the file and the entry's position) rather than handed to `add` or `replace`.
 */
function parseServer(value: unknown, index: number, inFile: boolean): ServerConfig {
  const entry = expectObject(value, `servers[${index}]`);
  const what = `servers[${index}]`;
  if (typeof entry.name !== 'string') throw new ConfigError('SERVER_FIELD', `${what}.name must be a string`);
  validateServerName(entry.name);
  if (entry.allow_tools !== undefined) stringArray(entry.allow_tools, `${what}.allow_tools`);
  const limits = limitsProblem(entry, {
    timeouts: `${what}.timeouts`,
    call: `${what}.timeouts.call_seconds`,
    ceiling: `${what}.timeouts.ceiling_seconds`,
    maxResult: `${what}.max_result_mb`,
  });
  if (limits) throw new ConfigError('SERVER_FIELD', limits);
  for (const key of ['allow_sampling', 'allow_elicitation', 'review_first'] as const) {
    if (entry[key] !== undefined && typeof entry[key] !== 'boolean')
      throw new ConfigError('SERVER_FIELD', `${what}.${key} must be true or false`);
  }
  if (entry.protocol !== undefined && entry.protocol !== '2025')
    throw new ConfigError(
      'SERVER_FIELD',
      `${what}.protocol must be "2025" (or absent: the newest era the server speaks); re-register with: ringfence mcp rm ${entry.name}, then ringfence mcp add ${entry.name} ... [--protocol 2025]`,
    );
  const common = [
    'name',
    'transport',
    'allow_tools',
    'timeouts',
    'max_result_mb',
    'allow_sampling',
    'allow_elicitation',
    'review_first',
    'protocol',
  ];
  if (entry.transport === 'http') {
    expectOnlyKeys(entry, [...common, 'url', 'headers', 'oauth'], what);
    if (typeof entry.url !== 'string') throw new ConfigError('SERVER_FIELD', `${what}.url must be a string`);
    validateRemoteUrl(entry.url);
    if (entry.headers !== undefined) stringRecord(entry.headers, `${what}.headers`);
    if (entry.oauth !== undefined) parseOAuthRegistration(entry, `${what}.oauth`);
    return entry as unknown as HttpServerConfig;
  }
  if (entry.transport === 'container') {
    expectOnlyKeys(
      entry,
      [...common, 'image', 'image_id', 'command', 'egress', 'env', 'mounts', 'limits'],
      what,
    );
    if (typeof entry.image !== 'string' || !entry.image)
      throw new ConfigError('SERVER_FIELD', `${what}.image must be a string`);
    if (typeof entry.image_id !== 'string' || !/^sha256:[0-9a-f]{64}$/.test(entry.image_id)) {
      throw new ConfigError('SERVER_FIELD', `${what}.image_id must be sha256:<64 hex>`);
    }
    if (entry.command !== undefined) stringArray(entry.command, `${what}.command`);
    if (entry.env !== undefined) stringRecord(entry.env, `${what}.env`);
    const egress = expectObject(entry.egress, `${what}.egress`);
    expectOnlyKeys(egress, ['mode', 'hosts', 'addresses'], `${what}.egress`);
    if (egress.mode !== 'deny' && egress.mode !== 'allow' && egress.mode !== 'any') {
      throw new ConfigError('SERVER_FIELD', `${what}.egress.mode must be deny, allow or any`);
    }
    if (egress.hosts !== undefined) stringArray(egress.hosts, `${what}.egress.hosts`);
    if (egress.addresses !== undefined) stringArray(egress.addresses, `${what}.egress.addresses`);
    validateEgressRule(
      egress as unknown as EgressRule,
      inFile ? `mcp-servers.json ${what} ("${entry.name}")` : `server "${entry.name}"`,
    );
    if (entry.mounts !== undefined) {
      if (!Array.isArray(entry.mounts))
        throw new ConfigError('SERVER_FIELD', `${what}.mounts must be a list`);
      for (const [i, mount] of entry.mounts.entries()) {
        const m = expectObject(mount, `${what}.mounts[${i}]`);
        expectOnlyKeys(m, ['path', 'mode'], `${what}.mounts[${i}]`);
        if (typeof m.path !== 'string' || (m.mode !== 'ro' && m.mode !== 'rw')) {
          throw new ConfigError('SERVER_FIELD', `${what}.mounts[${i}] needs a path and mode ro|rw`);
        }
      }
    }
    if (entry.limits !== undefined) {
      const limits = expectObject(entry.limits, `${what}.limits`);
      expectOnlyKeys(limits, ['memory_mb', 'pids', 'cpus'], `${what}.limits`);
      for (const key of ['memory_mb', 'pids', 'cpus'] as const) {
        if (typeof limits[key] !== 'number' || !((limits[key] as number) > 0)) {
          throw new ConfigError('SERVER_FIELD', `${what}.limits.${key} must be a positive number`);
        }
      }
    }
    return entry as unknown as ContainerServerConfig;
  }
  throw new ConfigError('SERVER_FIELD', `${what}.transport must be "container" or "http"`);
}

function parseOAuthRegistration(entry: Record<string, unknown>, what: string): void {
  const oauth = expectObject(entry.oauth, what);
  expectOnlyKeys(oauth, ['client_id', 'scope', 'client_metadata_url'], what);
  for (const key of ['client_id', 'scope', 'client_metadata_url'] as const)
    if (oauth[key] !== undefined && (typeof oauth[key] !== 'string' || oauth[key] === ''))
      throw new ConfigError('SERVER_FIELD', `${what}.${key} must be a non-empty string`);
  if (oauth.client_metadata_url !== undefined) {
    // The document's URL is the client_id: the draft requires https and a path (no loopback exception).
    let url: URL | undefined;
    try {
      url = new URL(oauth.client_metadata_url as string);
    } catch {}
    if (url?.protocol !== 'https:' || url.pathname === '/' || url.hash || url.username)
      throw new ConfigError(
        'SERVER_FIELD',
        `${what}.client_metadata_url must be an https URL with a path (the organisation hosts the client ID metadata document there)`,
      );
  }
  // A token in a static header would be sent beside the one ringfence holds, and never refreshed.
  const headers = (entry.headers ?? {}) as Record<string, string>;
  if (Object.keys(headers).some((name) => name.toLowerCase() === 'authorization'))
    throw new ConfigError(
      'SERVER_FIELD',
      `${what}: a server logged in by OAuth cannot also have an Authorization header; re-register it without --header Authorization=…`,
    );
}

export function parseServersFile(value: unknown): ServersFile {
  const file = expectObject(value, 'mcp-servers.json');
  expectOnlyKeys(file, ['version', 'servers'], 'mcp-servers.json');
  if (file.version !== 1)
    throw new ConfigError('SERVER_FIELD', `version ${String(file.version)} is not supported (expected 1)`);
  if (!Array.isArray(file.servers)) throw new ConfigError('SERVER_FIELD', 'servers must be a list');
  const servers = file.servers.map((server, index) => parseServer(server, index, true));
  const seen = new Set<string>();
  for (const server of servers) {
    if (seen.has(server.name))
      throw new ConfigError('SERVER_FIELD', `server "${server.name}" is listed twice`);
    seen.add(server.name);
  }
  return { version: 1, servers };
}

/** `mcp-servers.json`: the registered servers, in the order they were added. */
export class ServerStore {
  private readonly store: JsonStore<ServersFile>;

  constructor(home: string) {
    this.store = new JsonStore(home, 'mcp-servers.json', parseServersFile, () => ({
      version: 1,
      servers: [],
    }));
  }

  get path(): string {
    return this.store.path;
  }

  async list(): Promise<ServerConfig[]> {
    return (await this.store.read()).servers;
  }

  async get(name: string): Promise<ServerConfig> {
    const server = (await this.list()).find((s) => s.name === name);
    if (!server) {
      throw new ConfigError(
        'SERVER_UNKNOWN',
        `No server named "${name}" is registered. See the registered ones with: ringfence mcp ls`,
      );
    }
    return server;
  }

  async add(server: ServerConfig): Promise<void> {
    try {
      parseServer(server, 0, false);
    } catch (error) {
      // A field error names a path inside the entry, which means little to someone who typed
      // flags: it is wrapped with where to look. Every other refusal already says what to do.
      if (error instanceof ConfigError && error.code !== 'SERVER_FIELD') throw error;
      throw new ConfigError(
        'SERVER_FIELD',
        `The server entry is not valid: ${(error as Error).message}. Check the flags against: ringfence mcp add --help`,
        { cause: error },
      );
    }
    await this.store.update((file) => {
      if (file.servers.some((s) => s.name === server.name)) {
        throw new ConfigError(
          'SERVER_EXISTS',
          `A server named "${server.name}" is already registered. Remove it first with: ringfence mcp rm ${server.name}`,
        );
      }
      file.servers.push(server);
    });
  }

  /** Replace a registered server's entry (same name), e.g. with a newly recorded image ID. */
  async replace(server: ServerConfig): Promise<void> {
    parseServer(server, 0, false);
    await this.store.update((file) => {
      const index = file.servers.findIndex((s) => s.name === server.name);
      if (index < 0) {
        throw new ConfigError(
          'SERVER_UNKNOWN',
          `No server named "${server.name}" is registered. See the registered ones with: ringfence mcp ls`,
        );
      }
      file.servers[index] = server;
    });
  }

  async remove(name: string): Promise<ServerConfig> {
    return this.store.update((file) => {
      const index = file.servers.findIndex((s) => s.name === name);
      const [removed] = index >= 0 ? file.servers.splice(index, 1) : [];
      if (!removed) {
        throw new ConfigError(
          'SERVER_UNKNOWN',
          `No server named "${name}" is registered. See the registered ones with: ringfence mcp ls`,
        );
      }
      return removed;
    });
  }
}

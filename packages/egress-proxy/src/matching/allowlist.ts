import { isIpLiteral } from '../address/ip.js';
import { EgressProxyError } from '../errors.js';
import { normalizeHostName } from './target.js';

export interface AllowEntry {
  /** Normalised name; for a wildcard, the domain below which names match (without `*.`). */
  readonly name: string;
  readonly wildcard: boolean;
  /** `null` means the default web ports, 80 and 443. */
  readonly port: number | null;
  readonly text: string;
}

export const DEFAULT_PORTS: ReadonlySet<number> = new Set([80, 443]);

/** Parses one `--allow` value: `HOST`, `HOST:PORT`, `*.DOMAIN` or `*.DOMAIN:PORT`. */
export function parseAllowEntry(text: string): AllowEntry {
  const fail = (why: string): never => {
    throw new EgressProxyError(
      'EGRESS_BAD_ALLOW_ENTRY',
      `--allow "${text}": ${why}; write a host name such as api.example.com, api.example.com:8443 or *.example.com`,
    );
  };
  const trimmed = text.trim();
  const colon = trimmed.lastIndexOf(':');
  let hostPart = trimmed;
  let port: number | null = null;
  if (colon >= 0) {
    const portText = trimmed.slice(colon + 1);
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) < 1 || Number(portText) > 65535) {
      fail('the port must be a number from 1 to 65535');
    }
    port = Number(portText);
    hostPart = trimmed.slice(0, colon);
  }
  const wildcard = hostPart.startsWith('*.');
  const bare = wildcard ? hostPart.slice(2) : hostPart;
  if (isIpLiteral(bare) || bare.startsWith('[')) {
    fail('IP addresses cannot be allowed by name (use --allow-address for a range the proxy may reach)');
  }
  const name = normalizeHostName(bare);
  if (name === null) fail('not a valid host name');
  return { name: name as string, wildcard, port, text };
}

/**
 * Exact-or-wildcard host matching. Lookups by exact name are a map hit; wildcards are checked by
 * walking the name's parent domains, so the cost is bounded by the number of labels, not entries.
 */
export class Allowlist {
  private readonly exact = new Map<string, AllowEntry[]>();
  private readonly wildcards = new Map<string, AllowEntry[]>();

  constructor(entries: readonly AllowEntry[]) {
    for (const entry of entries) {
      const map = entry.wildcard ? this.wildcards : this.exact;
      const list = map.get(entry.name) ?? [];
      list.push(entry);
      map.set(entry.name, list);
    }
  }

  /** Returns `'allowed'`, `'port-not-allowed'` (name listed, port not) or `'not-allowlisted'`. */
  check(host: string, port: number): 'allowed' | 'port-not-allowed' | 'not-allowlisted' {
    let listed = false;
    const portOk = (entries: readonly AllowEntry[] | undefined): boolean => {
      if (entries === undefined) return false;
      listed = true;
      return entries.some((e) => (e.port === null ? DEFAULT_PORTS.has(port) : e.port === port));
    };
    if (portOk(this.exact.get(host))) return 'allowed';
    let dot = host.indexOf('.');
    while (dot >= 0) {
      // Only a suffix that starts after a dot is a parent domain: `badexample.com` never reaches
      // `example.com` this way, and `example.com` itself is never its own parent.
      if (portOk(this.wildcards.get(host.slice(dot + 1)))) return 'allowed';
      dot = host.indexOf('.', dot + 1);
    }
    return listed ? 'port-not-allowed' : 'not-allowlisted';
  }
}

/** Pure helper: does `host:port` match any of the `--allow` texts? */
export function hostMatches(allow: readonly string[], host: string, port: number): boolean {
  const name = normalizeHostName(host);
  if (name === null) return false;
  return new Allowlist(allow.map(parseAllowEntry)).check(name, port) === 'allowed';
}

import { type AllowEntry, DEFAULT_PORTS, parseAllowEntry } from '../contract/allow.js';
import { normalizeHostName } from '../contract/hostname.js';

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

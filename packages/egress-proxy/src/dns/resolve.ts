import { Resolver } from 'node:dns';
import { isIP } from 'node:net';

export interface ResolveOptions {
  /** Per-query timeout in milliseconds (c-ares retries within `tries`). */
  readonly timeoutMs: number;
  readonly tries: number;
  /** DNS servers as `IP` or `IP:PORT`; empty means the system's configured servers. */
  readonly servers: readonly string[];
  /** `--resolve NAME=IP` pins; a pinned name never reaches DNS. */
  readonly pins: ReadonlyMap<string, readonly string[]>;
}

export type ResolveOutcome =
  | { readonly ok: true; readonly addresses: readonly string[] }
  | { readonly ok: false; readonly reason: 'dns-timeout' | 'dns-failure' | 'dns-no-address' };

const NO_ANSWER = new Set(['ENODATA', 'ENOTFOUND', 'ENONAME', 'NOTFOUND', 'NODATA']);

/**
 * Resolves names with c-ares (`dns.Resolver`), never `dns.lookup`: lookup runs getaddrinfo on the
 * libuv thread pool, blocks a worker per query with no timeout of ours, and consults
 * /etc/hosts and nsswitch, which an allowlisting proxy must not silently trust.
 */
export class NameResolver {
  private readonly resolver: Resolver;
  private readonly options: ResolveOptions;

  constructor(options: ResolveOptions) {
    this.options = options;
    this.resolver = new Resolver({ timeout: options.timeoutMs, tries: options.tries });
    if (options.servers.length > 0) this.resolver.setServers([...options.servers]);
  }

  /** The `--resolve` answers for a name, if pinned (synchronous: no DNS involved). */
  pinned(name: string): readonly string[] | undefined {
    return this.options.pins.get(name);
  }

  async resolve(name: string): Promise<ResolveOutcome> {
    const pinned = this.options.pins.get(name);
    if (pinned) return { ok: true, addresses: pinned };
    const query = (fn: 'resolve4' | 'resolve6') =>
      new Promise<{ addresses: string[]; error?: string }>((resolve) => {
        this.resolver[fn](name, (err, addresses) => {
          if (err) resolve({ addresses: [], error: (err as NodeJS.ErrnoException).code ?? 'EUNKNOWN' });
          else resolve({ addresses });
        });
      });
    // Both families are asked and *all* answers are vetted: a name with one public A record and
    // one loopback AAAA record is refused, whichever family a client would have picked.
    const [a, aaaa] = await Promise.all([query('resolve4'), query('resolve6')]);
    const addresses = [...a.addresses, ...aaaa.addresses].filter((x) => isIP(x) !== 0);
    const errors = [a.error, aaaa.error].filter((e): e is string => e !== undefined);
    if (errors.includes('ETIMEOUT')) return { ok: false, reason: 'dns-timeout' };
    if (errors.some((e) => !NO_ANSWER.has(e))) return { ok: false, reason: 'dns-failure' };
    if (addresses.length === 0) return { ok: false, reason: 'dns-no-address' };
    return { ok: true, addresses };
  }
}

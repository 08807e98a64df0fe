import { networkInterfaces } from 'node:os';
import { type Cidr, cidrContains } from '../contract/cidr.js';
import { canonicalIp, type IpBytes, parseIp } from '../contract/ip.js';
import { classifyAddress, HOST_LOOPBACK_REASON, isHostLoopbackAlias } from './ranges.js';

/**
 * Decides whether one resolved (or connected) address may be dialled. Order matters:
 * the proxy's own listening socket is refused even inside an exempted range (a loop through
 * itself would hide the real destination); then exemptions; then the forbidden ranges; then the
 * proxy's other addresses.
 */
export class AddressPolicy {
  private readonly exempt: readonly Cidr[];
  private readonly own = new Set<string>();
  private listenPort = 0;
  private listenAny = false;
  private readonly listenAddresses = new Set<string>();
  private readonly verdicts = new Map<string, string | null>();

  constructor(exempt: readonly Cidr[]) {
    this.exempt = exempt;
    for (const list of Object.values(networkInterfaces())) {
      for (const info of list ?? []) {
        const key = canonicalIp(info.address);
        if (key) this.own.add(key);
      }
    }
  }

  /** Records where the proxy listens, once it is listening. */
  setListening(address: string, port: number): void {
    this.listenPort = port;
    const ip = parseIp(address);
    if (ip?.bytes.every((b) => b === 0)) this.listenAny = true;
    const key = canonicalIp(address);
    if (key) {
      this.listenAddresses.add(key);
      this.own.add(key);
    }
  }

  /** Returns a refusal reason, or `null` when the address may be dialled on `port`. */
  check(ip: IpBytes, port: number): string | null {
    const key = `${Array.from(ip.bytes).join(',')}/${ip.family}`;
    const isListenHost = this.listenAddresses.has(key) || (this.listenAny && this.own.has(key));
    if (
      port === this.listenPort &&
      (isListenHost || (this.listenAny && classifyAddress(ip) === 'loopback'))
    ) {
      return 'proxy-itself';
    }
    if (isHostLoopbackAlias(ip)) return HOST_LOOPBACK_REASON;
    if (this.exempt.some((c) => cidrContains(c, ip))) return null;
    // The range class is the more informative reason; own-address catches a public address
    // assigned to this host (a sidecar with a routable interface).
    return classifyAddress(ip) ?? (this.own.has(key) ? 'proxy-own-address' : null);
  }

  /**
   * Text form, memoised per address: the verdict depends only on the address, except on the
   * proxy's own listening port, which always takes the full path. The memo is bounded (answers
   * come from a handful of allowed names) and dropped whole when full.
   */
  checkText(address: string, port: number): string | null {
    if (port === this.listenPort) {
      const ip = parseIp(address);
      return ip ? this.check(ip, port) : 'unparseable-address';
    }
    let verdict = this.verdicts.get(address);
    if (verdict === undefined) {
      const ip = parseIp(address);
      verdict = ip ? this.check(ip, port) : 'unparseable-address';
      if (this.verdicts.size >= 4096) this.verdicts.clear();
      this.verdicts.set(address, verdict);
    }
    return verdict;
  }
}

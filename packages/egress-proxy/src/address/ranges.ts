import { cidrContains, parseCidr } from '../contract/cidr.js';
import { type IpBytes, parseIp } from '../contract/ip.js';

/**
 * Addresses at which a rootless container engine puts the host's own loopback: Podman with pasta
 * maps 169.254.1.2 to the host's 127.0.0.1 (host.containers.internal). Reaching it is reaching
 * every service the host keeps on loopback, so it is refused like loopback, and no exemption
 * (not even 169.254.0.0/16 or 0.0.0.0/0) lets it through.
 */
export const HOST_LOOPBACK_REASON = 'host-loopback';
const HOST_LOOPBACK_ALIASES = [parseCidr('169.254.1.2/32')];

export function isHostLoopbackAlias(ip: IpBytes): boolean {
  return HOST_LOOPBACK_ALIASES.some((cidr) => cidrContains(cidr, ip));
}

/**
 * Ranges a vetted name must never resolve into. The reason string is what the decision log
 * carries, so it names the class of range rather than the range itself.
 */
const FORBIDDEN: ReadonlyArray<readonly [string, string]> = [
  // Before link-local, so the log names it for what it is.
  ['169.254.1.2/32', HOST_LOOPBACK_REASON],
  ['0.0.0.0/8', 'this-network'],
  ['10.0.0.0/8', 'private'],
  ['100.64.0.0/10', 'cgnat'],
  ['127.0.0.0/8', 'loopback'],
  ['169.254.0.0/16', 'link-local'],
  ['172.16.0.0/12', 'private'],
  ['192.0.0.0/24', 'reserved'],
  ['192.0.2.0/24', 'documentation'],
  ['192.88.99.0/24', '6to4-relay'],
  ['192.168.0.0/16', 'private'],
  ['198.18.0.0/15', 'benchmarking'],
  ['198.51.100.0/24', 'documentation'],
  ['203.0.113.0/24', 'documentation'],
  ['224.0.0.0/4', 'multicast'],
  ['255.255.255.255/32', 'broadcast'],
  ['240.0.0.0/4', 'reserved'],
  ['::/128', 'unspecified'],
  ['::1/128', 'loopback'],
  ['::ffff:0:0/96', 'ipv4-mapped'],
  ['::/96', 'ipv4-compatible'],
  ['64:ff9b::/96', 'nat64'],
  ['64:ff9b:1::/48', 'nat64'],
  ['100::/64', 'discard'],
  ['2001::/32', 'teredo'],
  ['2001:2::/48', 'benchmarking'],
  ['2001:10::/28', 'orchid'],
  ['2001:20::/28', 'orchid'],
  ['2001:db8::/32', 'documentation'],
  ['2002::/16', '6to4'],
  ['fc00::/7', 'unique-local'],
  ['fe80::/10', 'link-local'],
  ['fec0::/10', 'site-local'],
  ['ff00::/8', 'multicast'],
];

const FORBIDDEN_CIDRS = FORBIDDEN.map(([range, reason]) => ({ cidr: parseCidr(range), reason }));
const IPV6_GLOBAL_UNICAST = parseCidr('2000::/3');

/**
 * Returns the class of a forbidden address, or `null` when it is an ordinary public address.
 * `0.0.0.0` is reported as `unspecified` because that is what a reader of the log expects.
 * IPv6 outside 2000::/3 is not assigned for global unicast, so everything else is `reserved`.
 */
export function classifyAddress(ip: IpBytes): string | null {
  if (ip.family === 4 && ip.bytes.every((b) => b === 0)) return 'unspecified';
  for (const { cidr, reason } of FORBIDDEN_CIDRS) if (cidrContains(cidr, ip)) return reason;
  if (ip.family === 6 && !cidrContains(IPV6_GLOBAL_UNICAST, ip)) return 'reserved';
  return null;
}

/** Text-input variant of {@link classifyAddress}; unparseable text is itself forbidden. */
export function classifyAddressText(text: string): string | null {
  const ip = parseIp(text);
  return ip ? classifyAddress(ip) : 'unparseable-address';
}

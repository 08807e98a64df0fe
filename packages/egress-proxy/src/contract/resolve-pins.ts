import { isIP } from 'node:net';
import { EgressProxyError } from './errors.js';
import { normalizeHostName } from './hostname.js';

/** Parses `--resolve NAME=IP` values; several pins for one name give several answers. */
export function parseResolvePins(pins: readonly string[]): Map<string, string[]> {
  const map = new Map<string, string[]>();
  for (const pin of pins) {
    const eq = pin.indexOf('=');
    const name = normalizeHostName(eq > 0 ? pin.slice(0, eq) : '');
    const ip = eq > 0 ? pin.slice(eq + 1).trim() : '';
    if (name === null || isIP(ip) === 0) {
      throw new EgressProxyError(
        'EGRESS_BAD_RESOLVE_PIN',
        `--resolve "${pin}": write NAME=IP with a host name and an IPv4 or IPv6 address, e.g. api.test=127.0.0.1`,
      );
    }
    map.set(name, [...(map.get(name) ?? []), ip]);
  }
  return map;
}

import { EgressProxyError } from './errors.js';
import { type IpBytes, parseIp } from './ip.js';

export interface Cidr {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
  readonly prefix: number;
  readonly text: string;
}

/** Parses one `--allow-address` value: `ADDRESS/PREFIX`, or a bare address (a single host). */
export function parseCidr(text: string): Cidr {
  const [addr = '', prefixText, extra] = text.trim().split('/');
  const ip = parseIp(addr);
  const max = ip?.family === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? max : Number(prefixText);
  if (
    !ip ||
    extra !== undefined ||
    (prefixText !== undefined && !/^[0-9]{1,3}$/.test(prefixText)) ||
    !Number.isInteger(prefix) ||
    prefix < 0 ||
    prefix > max
  ) {
    throw new EgressProxyError(
      'EGRESS_BAD_CIDR',
      `"${text}" is not an address range; write it as ADDRESS/PREFIX, e.g. 10.20.0.0/16 or fd00::/8`,
    );
  }
  return { family: ip.family, bytes: ip.bytes, prefix, text };
}

export function cidrContains(cidr: Cidr, ip: IpBytes): boolean {
  if (cidr.family !== ip.family) return false;
  let bits = cidr.prefix;
  for (let i = 0; bits > 0; i++, bits -= 8) {
    const mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
    if (((cidr.bytes[i] ?? 0) & mask) !== ((ip.bytes[i] ?? 0) & mask)) return false;
  }
  return true;
}

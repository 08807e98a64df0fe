import { isIPv4, isIPv6 } from 'node:net';

/** An address as raw bytes: 4 for IPv4, 16 for IPv6. Byte form makes CIDR checks exact. */
export interface IpBytes {
  readonly family: 4 | 6;
  readonly bytes: Uint8Array;
}

/**
 * Parses an IPv4 host the way a WHATWG URL parser (and most HTTP clients behind a proxy) would:
 * decimal, octal (`0177`), hex (`0x7f`) and shorthand (`127.1`, `2130706433`) all name an address.
 * Returns `null` when the host does not look numeric at all (an ordinary name), and `'invalid'`
 * when it looks numeric but overflows: such a host must still be treated as an address, never
 * handed to DNS, because another parser may read it differently.
 */
export function parseIPv4Loose(host: string): number | 'invalid' | null {
  let parts = host.split('.');
  if (parts.length > 1 && parts[parts.length - 1] === '') parts = parts.slice(0, -1);
  const last = parts[parts.length - 1] ?? '';
  if (!looksNumeric(last)) return null;
  if (parts.length > 4) return 'invalid';
  const numbers: number[] = [];
  for (const part of parts) {
    const n = parseIPv4Number(part);
    if (n === null) return 'invalid';
    numbers.push(n);
  }
  const lastNumber = numbers.pop() ?? 0;
  for (const n of numbers) if (n > 255) return 'invalid';
  if (lastNumber >= 256 ** (5 - parts.length)) return 'invalid';
  let value = lastNumber;
  numbers.forEach((n, i) => {
    value += n * 256 ** (3 - i);
  });
  return value;
}

function looksNumeric(label: string): boolean {
  return /^(0[xX][0-9a-fA-F]*|[0-9]+)$/.test(label);
}

function parseIPv4Number(part: string): number | null {
  if (part === '') return null;
  let digits = part;
  let radix = 10;
  if (/^0[xX]/.test(part)) {
    digits = part.slice(2);
    radix = 16;
    if (digits === '') return 0;
    if (!/^[0-9a-fA-F]+$/.test(digits)) return null;
  } else if (part.length > 1 && part.startsWith('0')) {
    digits = part.slice(1);
    radix = 8;
    if (!/^[0-7]+$/.test(digits)) return null;
  } else if (!/^[0-9]+$/.test(digits)) {
    return null;
  }
  // Cap the length so a 500-digit label cannot turn into a float that silently rounds.
  if (digits.length > 12) return Number.MAX_SAFE_INTEGER;
  return Number.parseInt(digits, radix);
}

export function ipv4FromNumber(value: number): IpBytes {
  return {
    family: 4,
    bytes: Uint8Array.of((value >>> 24) & 255, (value >>> 16) & 255, (value >>> 8) & 255, value & 255),
  };
}

/** Parses a canonical address as produced by DNS answers or `socket.remoteAddress`. */
export function parseIp(text: string): IpBytes | null {
  if (isIPv4(text)) {
    return { family: 4, bytes: Uint8Array.from(text.split('.').map((p) => Number(p))) };
  }
  const withoutZone = text.split('%')[0] ?? '';
  if (isIPv6(withoutZone)) return { family: 6, bytes: parseIPv6Bytes(withoutZone) };
  return null;
}

function parseIPv6Bytes(text: string): Uint8Array {
  const out = new Uint8Array(16);
  let head = text;
  let tail = '';
  const gap = text.indexOf('::');
  if (gap >= 0) {
    head = text.slice(0, gap);
    tail = text.slice(gap + 2);
  }
  const toWords = (s: string): number[] => {
    if (s === '') return [];
    const words: number[] = [];
    for (const piece of s.split(':')) {
      if (piece.includes('.')) {
        const v4 = piece.split('.').map((p) => Number(p));
        words.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
      } else {
        words.push(Number.parseInt(piece, 16));
      }
    }
    return words;
  };
  const headWords = toWords(head);
  const tailWords = toWords(tail);
  const words = [...headWords, ...new Array(8 - headWords.length - tailWords.length).fill(0), ...tailWords];
  words.forEach((w, i) => {
    out[i * 2] = (w >> 8) & 255;
    out[i * 2 + 1] = w & 255;
  });
  return out;
}

export function formatIp(ip: IpBytes): string {
  if (ip.family === 4) return Array.from(ip.bytes).join('.');
  const words: string[] = [];
  for (let i = 0; i < 16; i += 2)
    words.push((((ip.bytes[i] ?? 0) << 8) | (ip.bytes[i + 1] ?? 0)).toString(16));
  // Good enough for logs and comparisons; DNS answers are already canonical.
  return words.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

/** Canonical text of an address, so `::ffff:7f00:1` and `::ffff:127.0.0.1` compare equal. */
export function canonicalIp(text: string): string | null {
  const ip = parseIp(text);
  return ip ? Array.from(ip.bytes).join(',') + `/${ip.family}` : null;
}

export type IpLiteralVerdict =
  | { readonly literal: false }
  | { readonly literal: true; readonly ip: IpBytes | null; readonly spelling: string };

/**
 * Decides whether a host (as it appeared in a request, before any normalisation that could hide
 * it) is an IP literal in any spelling. Such hosts are refused without a DNS lookup.
 */
export function detectIpLiteral(rawHost: string): IpLiteralVerdict {
  const host = rawHost.trim();
  if (host.startsWith('[') || host.includes(':')) {
    const inner = host.replace(/^\[/, '').replace(/\]$/, '');
    const withoutZone = inner.split('%')[0] ?? '';
    const ip = isIPv6(withoutZone) ? { family: 6 as const, bytes: parseIPv6Bytes(withoutZone) } : null;
    return { literal: true, ip, spelling: 'ipv6' };
  }
  const v4 = parseIPv4Loose(host);
  if (v4 === null) return { literal: false };
  if (v4 === 'invalid') return { literal: true, ip: null, spelling: 'ipv4-invalid' };
  const canonical = isIPv4(host.replace(/\.$/, ''));
  return { literal: true, ip: ipv4FromNumber(v4), spelling: canonical ? 'ipv4' : 'ipv4-noncanonical' };
}

/** True when `host` is an IP literal in any spelling (the pure helper exported for callers). */
export function isIpLiteral(host: string): boolean {
  return detectIpLiteral(host).literal;
}

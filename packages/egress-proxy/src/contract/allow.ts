import { EgressProxyError } from './errors.js';
import { normalizeHostName } from './hostname.js';
import { isIpLiteral } from './ip.js';

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
  const ipMessage =
    'IP addresses cannot be allowed by name (use --allow-address for a range the proxy may reach)';
  // A name has at most one colon (before its port); more, or a bracket, is an IPv6 address, which
  // must be refused as one rather than as a bad port.
  if (trimmed.startsWith('[') || trimmed.indexOf(':') !== trimmed.lastIndexOf(':')) fail(ipMessage);
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
  if (isIpLiteral(bare)) fail(ipMessage);
  const name = normalizeHostName(bare);
  if (name === null) fail('not a valid host name');
  // IDNA maps full-width digits and ideographic dots to ASCII (`１２７。０。０。１`), as it does for
  // requests, where such a host is refused as an address: an entry must not become one either.
  if (isIpLiteral(name as string)) fail(ipMessage);
  return { name: name as string, wildcard, port, text };
}

import { domainToASCII } from 'node:url';

const MAX_NAME = 253;

/**
 * Normalises a DNS name: lower case, one trailing dot removed, IDNA to A-labels. Returns `null`
 * for anything that is not a plausible host name, which callers answer with 400.
 */
export function normalizeHostName(raw: string): string | null {
  if (raw === '' || raw.length > 1024) return null;
  // Percent-encoding, whitespace, userinfo and path characters have no business in a host; reject
  // them before IDNA, which would otherwise quietly map or strip some of them.
  if (/[%@\\/?#\s[\]:,;"'<>^`{|}*!$&()+=~]/.test(raw)) return null;
  if (/[\u0000-\u001f\u007f]/.test(raw)) return null;
  let name = raw.endsWith('.') ? raw.slice(0, -1) : raw;
  if (name === '' || name.endsWith('.')) return null;
  name = domainToASCII(name.toLowerCase());
  if (name === '' || name.length > MAX_NAME) return null;
  for (const label of name.split('.')) {
    if (label.length === 0 || label.length > 63) return null;
    if (!/^[a-z0-9_]([a-z0-9_-]*[a-z0-9_])?$/.test(label)) return null;
  }
  return name;
}

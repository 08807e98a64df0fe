import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { ExportError } from './errors.js';

/** How a sink frames its records: RFC 5424 syslog (octet counting) or JSON lines. */
export type ExportFraming = 'syslog' | 'jsonl';
/** ringfence: each entry exactly as the chain holds it; ocsf: OCSF API Activity (class 6003). */
export type ExportFormat = 'ringfence' | 'ocsf';
export const EXPORT_FORMATS: readonly ExportFormat[] = ['ringfence', 'ocsf'];

export interface TlsFiles {
  /** PEM file of the CA(s) the collector's certificate must chain to (default: the system's). */
  readonly ca?: string;
  /** PEM client certificate and key, when the collector asks for one (mutual TLS). */
  readonly cert?: string;
  readonly key?: string;
  /** The name the collector's certificate must carry (default: the URL's host). */
  readonly serverName?: string;
}

export type ExportTarget =
  | {
      readonly kind: 'stream';
      readonly framing: ExportFraming;
      readonly host: string;
      readonly port: number;
      readonly tls?: TlsFiles;
      readonly url: string;
    }
  | { readonly kind: 'file'; readonly framing: 'jsonl'; readonly path: string; readonly url: string };

const SCHEMES = ['syslog+tcp:', 'syslog+tls:', 'jsonl+tcp:', 'jsonl+tls:'];

const usage =
  'Give one of syslog+tcp://HOST:PORT, syslog+tls://HOST:PORT, jsonl:FILE, jsonl+tcp://HOST:PORT or jsonl+tls://HOST:PORT.';

/**
 * Parses a sink URL. `tls` (CA, client certificate) applies to the `+tls` schemes only; given for
 * another scheme it is refused rather than silently unused.
 */
export function parseExportTarget(url: string, tls: TlsFiles = {}): ExportTarget {
  const hasTls = Object.values(tls).some((value) => value !== undefined);
  if (url.startsWith('jsonl:') && !url.startsWith('jsonl+')) {
    const path = url.slice('jsonl:'.length).replace(/^\/\/(?=\/)/, '');
    if (path === '' || path.includes('\0'))
      throw new ExportError('EXPORT_TARGET', `"${url}" names no file. ${usage}`);
    if (hasTls)
      throw new ExportError('EXPORT_TARGET', `TLS files were given for ${url}, which is a file. ${usage}`);
    return { kind: 'file', framing: 'jsonl', path, url };
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ExportError('EXPORT_TARGET', `"${url}" is not a sink URL. ${usage}`);
  }
  if (!SCHEMES.includes(parsed.protocol))
    throw new ExportError(
      'EXPORT_TARGET',
      `"${parsed.protocol}" is not a sink this version can send to. ${usage}`,
    );
  if (
    parsed.username ||
    parsed.password ||
    parsed.search ||
    parsed.hash ||
    (parsed.pathname !== '' && parsed.pathname !== '/')
  )
    throw new ExportError(
      'EXPORT_TARGET',
      `${parsed.protocol}//HOST:PORT takes a host and a port only (no user, path or query). ${usage}`,
    );
  const port = Number(parsed.port);
  if (!Number.isInteger(port) || port < 1 || port > 65535)
    throw new ExportError('EXPORT_TARGET', `${url} needs a port (1-65535). ${usage}`);
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const secure = parsed.protocol.endsWith('+tls:');
  if (!secure && hasTls)
    throw new ExportError(
      'EXPORT_TARGET',
      `TLS files were given for ${url}, which is plain TCP: use ${parsed.protocol.replace('+tcp', '+tls')}//${parsed.host} to send over TLS.`,
    );
  const framing: ExportFraming = parsed.protocol.startsWith('syslog') ? 'syslog' : 'jsonl';
  return {
    kind: 'stream',
    framing,
    host,
    port,
    url: `${parsed.protocol}//${isIP(host) === 6 ? `[${host}]` : host}:${port}`,
    ...(secure ? { tls } : {}),
  };
}

/** The default id of a sink: the same URL and form always resume from the same position file. */
export function defaultSinkId(target: ExportTarget, format: ExportFormat): string {
  return createHash('sha256').update(`${target.url} ${format}`).digest('hex').slice(0, 12);
}

export const SINK_ID = /^[a-z0-9][a-z0-9-]{0,31}$/;

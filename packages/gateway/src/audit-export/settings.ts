import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ExportError } from './errors.js';
import {
  defaultSinkId,
  EXPORT_FORMATS,
  type ExportFormat,
  type ExportTarget,
  parseExportTarget,
  SINK_ID,
} from './target.js';

/** One sink `mcp serve` streams the audit log to, from `audit-export.json` in the home. */
export interface ExportSinkSettings {
  readonly id: string;
  readonly target: ExportTarget;
  readonly format: ExportFormat;
  readonly anchorIntervalMs: number;
}

export const SETTINGS_FILE = 'audit-export.json';
export const DEFAULT_ANCHOR_SECONDS = 60;
const KEYS = new Set(['to', 'format', 'id', 'anchor_interval', 'ca', 'cert', 'key', 'server_name']);

/**
 * The sinks of `RINGFENCE_HOME/audit-export.json` (none when the file is absent):
 * `{"sinks":[{"to":"syslog+tls://siem.example:6514","format":"ocsf","ca":"/etc/ssl/siem-ca.pem"}]}`.
 * A file that is present but wrong is refused as a whole: a team that configured an export must
 * not get a gateway that silently exports nothing.
 */
export async function loadExportSettings(home: string): Promise<ExportSinkSettings[]> {
  const path = join(home, SETTINGS_FILE);
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ExportError('EXPORT_SETTINGS', `Could not read ${path}: ${(error as Error).message}.`, {
      cause: error,
    });
  }
  const refuse = (what: string) =>
    new ExportError(
      'EXPORT_SETTINGS',
      `${path}: ${what}. Fix it (docs/operations.md) or remove it; nothing was served.`,
    );
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw refuse('not JSON');
  }
  const sinks = (value as { sinks?: unknown })?.sinks;
  if (
    typeof value !== 'object' ||
    value === null ||
    Object.keys(value).some((k) => k !== 'sinks') ||
    !Array.isArray(sinks)
  )
    throw refuse('expected {"sinks": [ … ]} and nothing else');
  const seen = new Set<string>();
  return sinks.map((sink: unknown, index) => {
    const at = `sinks[${index}]`;
    if (typeof sink !== 'object' || sink === null || Array.isArray(sink))
      throw refuse(`${at} is not an object`);
    const s = sink as Record<string, unknown>;
    const unknown = Object.keys(s).find((key) => !KEYS.has(key));
    if (unknown !== undefined) throw refuse(`${at} has an unknown setting "${unknown}"`);
    for (const key of ['to', 'format', 'id', 'ca', 'cert', 'key', 'server_name'])
      if (s[key] !== undefined && typeof s[key] !== 'string') throw refuse(`${at}.${key} must be a string`);
    if (typeof s.to !== 'string') throw refuse(`${at} needs "to" (the sink URL)`);
    const format = (s.format ?? 'ringfence') as ExportFormat;
    if (!EXPORT_FORMATS.includes(format)) throw refuse(`${at}.format must be "ringfence" or "ocsf"`);
    const interval = s.anchor_interval ?? DEFAULT_ANCHOR_SECONDS;
    if (typeof interval !== 'number' || !Number.isFinite(interval) || interval < 0)
      throw refuse(`${at}.anchor_interval must be a number of seconds (0: only when the gateway stops)`);
    let target: ExportTarget;
    try {
      target = parseExportTarget(s.to, {
        ...(s.ca ? { ca: s.ca as string } : {}),
        ...(s.cert ? { cert: s.cert as string } : {}),
        ...(s.key ? { key: s.key as string } : {}),
        ...(s.server_name ? { serverName: s.server_name as string } : {}),
      });
    } catch (error) {
      throw refuse(`${at}: ${(error as Error).message.replace(/\.$/, '')}`);
    }
    if ((s.cert === undefined) !== (s.key === undefined)) throw refuse(`${at}: "cert" and "key" go together`);
    const id = (s.id as string | undefined) ?? defaultSinkId(target, format);
    if (!SINK_ID.test(id)) throw refuse(`${at}.id must be 1-32 of a-z, 0-9 and "-"`);
    if (seen.has(id)) throw refuse(`two sinks have the id "${id}"`);
    seen.add(id);
    return { id, target, format, anchorIntervalMs: interval * 1000 };
  });
}

import { redactArgs, redactUrl, redactValue } from '../text/redact.js';
import { type ClientEntry, type ClientKind, FORMATS } from './formats.js';

/** How this ringfence is started: the node binary and the CLI's entry script, both absolute. */
export interface Launch {
  readonly command: string;
  readonly args: readonly string[];
}

/**
 * The entry that makes a client start `ringfence mcp serve` (or `--only NAME`). Clients start
 * servers with a small environment of their own (the MCP Inspector and several desktop clients
 * pass little more than PATH and HOME), so the command is absolute and the home is in the entry:
 * without it ringfence would serve another, often empty, home.
 */
export function ringfenceEntry(
  kind: ClientKind,
  launch: Launch,
  home: string,
  only?: string,
  env: NodeJS.ProcessEnv = process.env,
): ClientEntry {
  return {
    ...(FORMATS[kind].typed ? { type: 'stdio' } : {}),
    command: launch.command,
    args: [...launch.args, 'mcp', 'serve', ...(only !== undefined ? ['--only', only] : [])],
    env: { RINGFENCE_HOME: home, ...(env.DOCKER_HOST ? { DOCKER_HOST: env.DOCKER_HOST } : {}) },
  };
}

/** An entry ringfence wrote: it serves `mcp serve` with a RINGFENCE_HOME of its own. */
export function ringfenceEntryOf(entry: ClientEntry): { home: string; only?: string } | undefined {
  const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
  const env = (entry.env ?? {}) as Record<string, unknown>;
  const at = args.findIndex((arg, i) => arg === 'mcp' && args[i + 1] === 'serve');
  if (at === -1 || typeof env.RINGFENCE_HOME !== 'string') return undefined;
  const only = args.indexOf('--only', at);
  return { home: env.RINGFENCE_HOME, ...(only !== -1 && args[only + 1] ? { only: args[only + 1] } : {}) };
}

/**
 * An entry as a person may see it: the command and its arguments and the URL through the one
 * redactor (text/redact.ts: credentials, credential-like flags and parameters, known token
 * formats and long random arguments hidden), env and header names without their values.
 */
export function describeEntry(entry: ClientEntry): string {
  const parts: string[] = [];
  if (typeof entry.url === 'string')
    parts.push(`${redactValue(String(entry.type ?? 'http'))} ${redactUrl(entry.url)}`);
  if (typeof entry.command === 'string') {
    const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
    parts.push(redactArgs([entry.command, ...args]).join(' '));
  }
  const names = (value: unknown) =>
    value && typeof value === 'object' ? Object.keys(value as Record<string, unknown>) : [];
  if (names(entry.env).length > 0) parts.push(`env ${names(entry.env).join(', ')} (values not shown)`);
  if (names(entry.headers).length > 0)
    parts.push(`headers ${names(entry.headers).join(', ')} (values not shown)`);
  return parts.join('; ') || '(empty entry)';
}

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

const SECRETISH = /key|token|secret|passw|auth|cred|bearer|cookie|session/i;
/** Flags whose value is NAME=VALUE or "Name: value" (docker -e, mcp-remote --header): the name is shown, never the value. */
const VALUE_FLAGS = new Set(['-e', '--env', '--header', '-H']);
const nameOnly = (pair: string) => {
  const at = pair.search(/[=:]/);
  return at > 0 ? `${pair.slice(0, at + 1)}…` : pair;
};

/**
 * An entry as a person may see it: the command and arguments (a value after or inside a flag
 * that names a secret is hidden), env and header names without their values.
 */
export function describeEntry(entry: ClientEntry): string {
  const parts: string[] = [];
  if (typeof entry.url === 'string') parts.push(`${String(entry.type ?? 'http')} ${safeUrl(entry.url)}`);
  if (typeof entry.command === 'string') {
    const args = Array.isArray(entry.args) ? entry.args.map(String) : [];
    const shown = args.map((arg, i) => {
      const previous = args[i - 1];
      if (previous !== undefined && VALUE_FLAGS.has(previous)) return nameOnly(arg);
      const flag = /^(--env|--header|-e|-H)=(.*)$/.exec(arg);
      if (flag) return `${flag[1]}=${nameOnly(flag[2]!)}`;
      const at = arg.search(/[=:]/);
      if (at > 0 && SECRETISH.test(arg.slice(0, at))) return `${arg.slice(0, at + 1)}…`;
      if (previous?.startsWith('-') && SECRETISH.test(previous)) return '…';
      return arg;
    });
    parts.push([entry.command, ...shown].join(' '));
  }
  const names = (value: unknown) =>
    value && typeof value === 'object' ? Object.keys(value as Record<string, unknown>) : [];
  if (names(entry.env).length > 0) parts.push(`env ${names(entry.env).join(', ')} (values not shown)`);
  if (names(entry.headers).length > 0)
    parts.push(`headers ${names(entry.headers).join(', ')} (values not shown)`);
  return parts.join('; ') || '(empty entry)';
}

/** A URL without its query or credentials, which may carry tokens. */
function safeUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `${parsed.protocol}//${parsed.host}${parsed.pathname}${parsed.search ? '?…' : ''}`;
  } catch {
    return '(not a URL)';
  }
}

import { parseAllowEntry } from '@ringfence/egress-proxy/contract';
import { SandboxError } from './errors.js';
import {
  DEFAULT_OUTPUT_BYTES,
  DEFAULT_TIMEOUT_SECONDS,
  MAX_OUTPUT_BYTES,
  MAX_TIMEOUT_SECONDS,
} from './tools.js';

/**
 * Each tool's arguments, read again here although the pipeline checked them against the pinned
 * schema: this code creates containers, so it trusts only what it checked itself.
 */
export const SANDBOX_NAME = /^[a-z0-9][a-z0-9-]{0,31}$/;

export interface CreateRequest {
  readonly name: string;
  readonly image: string;
  /** Empty: no network at all. */
  readonly hosts: readonly string[];
  readonly egressAny: boolean;
  readonly mounts: readonly { path: string; mode: 'ro' | 'rw' }[];
  readonly command: readonly string[];
  /** Outlives its gateway (docs/sandboxes.md, "Persistent sandboxes"); only where the person allows it. */
  readonly persistent: boolean;
}

export interface RunRequest {
  readonly name: string;
  readonly command: readonly string[];
  readonly timeoutMs: number;
  readonly maxOutputBytes: number;
  readonly workdir?: string;
}

export const refuse = (message: string): never => {
  throw new SandboxError('SANDBOX_ARGUMENTS', message);
};

export function onlyKeys(args: Record<string, unknown>, allowed: readonly string[], tool: string): void {
  for (const key of Object.keys(args))
    if (!allowed.includes(key)) refuse(`${tool} takes no argument "${key}"; it takes ${allowed.join(', ')}.`);
}

export function sandboxName(value: unknown): string {
  if (typeof value !== 'string' || !SANDBOX_NAME.test(value))
    return refuse('name must be 1-32 lower-case letters, digits or "-", starting with a letter or digit.');
  return value;
}

export function argv(value: unknown, what: string): string[] {
  if (
    !Array.isArray(value) ||
    value.length === 0 ||
    value.length > 256 ||
    !value.every((part) => typeof part === 'string' && part.length <= 8192 && !part.includes('\0'))
  )
    return refuse(
      `${what} must be a non-empty array of at most 256 strings (argv, no NUL), such as ["ls", "-la"].`,
    );
  return value as string[];
}

export function integer(value: unknown, min: number, max: number, fallback: number, what: string): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    return refuse(`${what} must be a whole number from ${min} to ${max}.`);
  return value;
}

export function parseCreate(args: Record<string, unknown>): CreateRequest {
  onlyKeys(args, ['name', 'image', 'hosts', 'egress', 'mounts', 'command', 'persistent'], 'sandbox_create');
  const name = sandboxName(args.name);
  if (typeof args.image !== 'string' || args.image.length === 0 || args.image.length > 512)
    refuse('image must name one of the images ringfence_status lists.');
  const hosts = args.hosts ?? [];
  if (
    !Array.isArray(hosts) ||
    hosts.length > 64 ||
    !hosts.every((h) => typeof h === 'string' && h.length > 0)
  )
    refuse('hosts must be an array of at most 64 host names.');
  // Checked by the proxy's own parser now, so a host it would refuse (an IP address, a malformed
  // name) is refused before any network or sidecar is made, with words for the assistant.
  for (const host of hosts as string[]) {
    try {
      parseAllowEntry(host);
    } catch (error) {
      refuse(
        `hosts: "${host}" is refused (${(error as Error).message}); name a host as api.example.com, *.example.com or HOST:PORT. Addresses cannot be named: the person allows address ranges with \`mcp serve --sandbox-allow-address\`.`,
      );
    }
  }
  if (args.egress !== undefined && args.egress !== 'any') refuse('egress may only be "any" (or left out).');
  const egressAny = args.egress === 'any';
  if (egressAny && (hosts as string[]).length > 0)
    refuse('give either hosts (reached through the egress proxy) or egress "any", not both.');
  const mounts = args.mounts ?? [];
  if (!Array.isArray(mounts) || mounts.length > 16) refuse('mounts must be an array of at most 16 entries.');
  const parsedMounts = (mounts as unknown[]).map((entry) => {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry))
      return refuse('each mount is an object {path, mode}.');
    const { path, mode, ...rest } = entry as Record<string, unknown>;
    if (Object.keys(rest).length > 0) refuse('a mount takes only path and mode.');
    if (typeof path !== 'string' || path.length === 0) refuse('a mount needs a path.');
    if (mode !== undefined && mode !== 'ro' && mode !== 'rw') refuse('a mount mode is "ro" or "rw".');
    return { path: path as string, mode: (mode ?? 'ro') as 'ro' | 'rw' };
  });
  const command = args.command === undefined ? ['sleep', 'infinity'] : argv(args.command, 'command');
  if (args.persistent !== undefined && typeof args.persistent !== 'boolean')
    refuse('persistent must be true or false.');
  return {
    name,
    image: args.image as string,
    hosts: hosts as string[],
    egressAny,
    mounts: parsedMounts,
    command,
    persistent: args.persistent === true,
  };
}

export function parseRun(args: Record<string, unknown>): RunRequest {
  onlyKeys(args, ['name', 'command', 'timeout_seconds', 'max_output_bytes', 'workdir'], 'sandbox_run');
  const name = sandboxName(args.name);
  const command = argv(args.command, 'command');
  const timeout = integer(
    args.timeout_seconds,
    1,
    MAX_TIMEOUT_SECONDS,
    DEFAULT_TIMEOUT_SECONDS,
    'timeout_seconds',
  );
  const maxOutputBytes = integer(
    args.max_output_bytes,
    1,
    MAX_OUTPUT_BYTES,
    DEFAULT_OUTPUT_BYTES,
    'max_output_bytes',
  );
  if (args.workdir !== undefined && (typeof args.workdir !== 'string' || !args.workdir.startsWith('/')))
    refuse('workdir must be an absolute path inside the sandbox.');
  return {
    name,
    command,
    timeoutMs: timeout * 1000,
    maxOutputBytes,
    ...(args.workdir !== undefined ? { workdir: args.workdir as string } : {}),
  };
}

export function parseNameOnly(args: Record<string, unknown>, tool: string): string {
  onlyKeys(args, ['name'], tool);
  return sandboxName(args.name);
}

export function parseNothing(args: Record<string, unknown>, tool: string): void {
  onlyKeys(args, [], tool);
}

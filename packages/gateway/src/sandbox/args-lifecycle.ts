import { argv, integer, onlyKeys, refuse, sandboxName } from './args.js';
import { DEFAULT_LOG_BYTES, DEFAULT_LOG_TAIL, MAX_LOG_BYTES, MAX_LOG_TAIL } from './limits-lifecycle.js';

/**
 * The arguments of the lifecycle and image tools (tools-lifecycle.ts), read again here after the
 * pipeline's schema check, as args.ts does for the others.
 */
/** A background command's id (execs.ts): `x` and 12 hex digits. */
export const EXEC_ID = /^x[0-9a-f]{12}$/;

export interface LogsRequest {
  readonly name: string;
  /** Lines from the end of the main process's log, both streams counted together; ignored for an exec. */
  readonly tail: number;
  /** Unix seconds: only what was written since (the main process's log). */
  readonly since?: number;
  readonly maxBytes: number;
  /** A background command's output instead of the main process's. */
  readonly exec?: string;
}

export interface ExecRequest {
  readonly name: string;
  readonly command: readonly string[];
  readonly workdir?: string;
}

const DURATION = /^([1-9][0-9]{0,6})(s|m|h|d)$/;
const UNIT_SECONDS = { s: 1, m: 60, h: 3600, d: 86_400 } as const;

/**
 * `since`: a duration back from now (`90s`, `10m`, `2h`, `1d`) or an ISO 8601 time, as Unix
 * seconds. `now` is passed in so tests can hold it still.
 */
export function sinceSeconds(value: unknown, now: number = Date.now()): number {
  if (typeof value !== 'string' || value.length > 64)
    return refuse('since must be a duration such as "10m" (s, m, h or d) or an ISO 8601 time.');
  const duration = DURATION.exec(value);
  if (duration) {
    const seconds = Number(duration[1]) * UNIT_SECONDS[duration[2] as keyof typeof UNIT_SECONDS];
    return Math.max(0, Math.floor(now / 1000) - seconds);
  }
  const at = /^\d{4}-\d{2}-\d{2}T/.test(value) ? Date.parse(value) : Number.NaN;
  if (Number.isNaN(at))
    return refuse('since must be a duration such as "10m" (s, m, h or d) or an ISO 8601 time.');
  return Math.max(0, Math.floor(at / 1000));
}

export function parseLogs(args: Record<string, unknown>, now?: number): LogsRequest {
  onlyKeys(args, ['name', 'tail', 'since', 'max_bytes', 'exec'], 'sandbox_logs');
  const name = sandboxName(args.name);
  const tail = integer(args.tail, 1, MAX_LOG_TAIL, DEFAULT_LOG_TAIL, 'tail');
  const maxBytes = integer(args.max_bytes, 1, MAX_LOG_BYTES, DEFAULT_LOG_BYTES, 'max_bytes');
  if (args.exec !== undefined && (typeof args.exec !== 'string' || !EXEC_ID.test(args.exec)))
    refuse('exec must be an id sandbox_exec returned, such as x0123456789ab.');
  return {
    name,
    tail,
    maxBytes,
    ...(args.since !== undefined ? { since: sinceSeconds(args.since, now) } : {}),
    ...(args.exec !== undefined ? { exec: args.exec as string } : {}),
  };
}

export function parseExec(args: Record<string, unknown>): ExecRequest {
  onlyKeys(args, ['name', 'command', 'workdir'], 'sandbox_exec');
  const name = sandboxName(args.name);
  const command = argv(args.command, 'command');
  if (args.workdir !== undefined && (typeof args.workdir !== 'string' || !args.workdir.startsWith('/')))
    refuse('workdir must be an absolute path inside the sandbox.');
  return { name, command, ...(args.workdir !== undefined ? { workdir: args.workdir as string } : {}) };
}

export function parseImage(args: Record<string, unknown>): string {
  onlyKeys(args, ['image'], 'image_pull');
  if (typeof args.image !== 'string' || args.image.length === 0 || args.image.length > 512)
    return refuse('image must name one of the images image_list shows.');
  return args.image;
}

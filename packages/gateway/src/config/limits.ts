/**
 * How long a call to one server may run and how large its result may be: the defaults, the
 * optional `timeouts` and `max_result_mb` of a server entry, and the caps on the transports that
 * follow from them. One place, so that the pipeline, the upstream clients and `mcp add` agree.
 */
const MIB = 1024 * 1024;

/** A call may go this long without an answer or a progress notification (`--call-timeout`). */
export const DEFAULT_CALL_SECONDS = 60;
/** A call may run this long in all, progress or not (`--call-ceiling`). */
export const DEFAULT_CEILING_SECONDS = 600;
/** Upper bound of both, one day: a timer the gateway keeps must stay far below Node's 24.8 days. */
export const MAX_CALL_SECONDS = 86_400;
/**
 * The result cap, counted as `measureResult` counts (base64 content decoded): a 5 MiB image
 * fits, and the reply stays under the 10 MiB line that SDK-based stdio clients read at most.
 */
export const DEFAULT_MAX_RESULT_MB = 6;
export const MAX_RESULT_MB = 32;
/** The least any one answer may take in memory while it is read (a remote answer, a stdio line). */
export const MIN_ANSWER_BYTES = 16 * MIB;

/** `timeouts` of a server entry in mcp-servers.json, in whole seconds. */
export interface CallTimeouts {
  /** Without an answer or progress for this long, the call fails. */
  readonly call_seconds?: number;
  /** The call fails after this long in all. */
  readonly ceiling_seconds?: number;
}

/** What one call to a server may take, as the upstream client and the result check apply it. */
export interface CallLimits {
  readonly idleMs: number;
  readonly ceilingMs: number;
  /** Counted as `measureResult` counts. */
  readonly maxResultBytes: number;
}

export const DEFAULT_CALL_LIMITS: CallLimits = Object.freeze({
  idleMs: DEFAULT_CALL_SECONDS * 1000,
  ceilingMs: DEFAULT_CEILING_SECONDS * 1000,
  maxResultBytes: DEFAULT_MAX_RESULT_MB * MIB,
});

const isWhole = (value: unknown, max: number): value is number =>
  typeof value === 'number' && Number.isInteger(value) && value >= 1 && value <= max;

/**
 * What is wrong with `timeouts` and `max_result_mb` of one entry, or undefined; `names` says how
 * to call the fields (the file's paths, or the flags of `mcp add`).
 */
export function limitsProblem(
  entry: { timeouts?: unknown; max_result_mb?: unknown },
  names: { timeouts: string; call: string; ceiling: string; maxResult: string },
): string | undefined {
  if (entry.timeouts !== undefined) {
    const t = entry.timeouts;
    if (typeof t !== 'object' || t === null || Array.isArray(t)) return `${names.timeouts} must be an object`;
    const fields = t as Record<string, unknown>;
    const unknown = Object.keys(fields).find((key) => key !== 'call_seconds' && key !== 'ceiling_seconds');
    if (unknown !== undefined) return `${names.timeouts}.${unknown} is not a known field`;
    for (const [key, name] of [
      ['call_seconds', names.call],
      ['ceiling_seconds', names.ceiling],
    ] as const) {
      if (fields[key] !== undefined && !isWhole(fields[key], MAX_CALL_SECONDS))
        return `${name} must be a whole number of seconds from 1 to ${MAX_CALL_SECONDS}, got ${JSON.stringify(fields[key])}`;
    }
    const { call_seconds: call, ceiling_seconds: ceiling } = fields as CallTimeouts;
    if (call !== undefined && ceiling !== undefined && ceiling < call)
      return `${names.ceiling} (${ceiling} s) is below ${names.call} (${call} s): the ceiling is the longest a call may run in all, so it must be at least the time allowed without progress`;
  }
  if (entry.max_result_mb !== undefined && !isWhole(entry.max_result_mb, MAX_RESULT_MB))
    return `${names.maxResult} must be a whole number of MiB from 1 to ${MAX_RESULT_MB}, got ${JSON.stringify(entry.max_result_mb)}`;
  return undefined;
}

/**
 * The limits of one server entry. Without a ceiling of its own, a server whose call timeout is
 * above the default ceiling gets its call timeout as ceiling (one call without progress).
 */
export function callLimitsOf(entry: { timeouts?: CallTimeouts; max_result_mb?: number }): CallLimits {
  const callSeconds = entry.timeouts?.call_seconds ?? DEFAULT_CALL_SECONDS;
  const ceilingSeconds =
    entry.timeouts?.ceiling_seconds ?? Math.max(DEFAULT_CEILING_SECONDS, entry.timeouts?.call_seconds ?? 0);
  return {
    idleMs: callSeconds * 1000,
    ceilingMs: ceilingSeconds * 1000,
    maxResultBytes: (entry.max_result_mb ?? DEFAULT_MAX_RESULT_MB) * MIB,
  };
}

/**
 * The most one answer from the server may take in memory while it is read: room for a result at
 * the cap once base64 has grown it by a third, plus the JSON around it; never below 16 MiB.
 */
export function answerCapBytes(maxResultBytes: number): number {
  return Math.max(MIN_ANSWER_BYTES, Math.ceil((maxResultBytes * 4) / 3) + MIB);
}

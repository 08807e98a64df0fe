import type { CallToolResult } from '../ports/caller.js';

/**
 * Whom a task belongs to: the calling agent and its scope (from its token), not the session. A
 * task outlives a reconnect of its owner and is never visible to anyone else.
 */
export interface TaskOwner {
  readonly agent?: string;
  readonly scope?: string;
}

/** The statuses both wire forms share (the 2026 extension adds none). */
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';

export const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);

/** How the upstream work ended, before any check of the gateway's ran on it. Never rejects. */
export type Settled =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly error: unknown };

/**
 * The work behind one task, already decided: the pipeline hands this over after its checks and
 * its durable decision entry, so nothing here decides anything.
 */
export interface TaskWork {
  /** Runs the forward half of the pipeline (the upstream call); aborting `signal` cancels it upstream. */
  readonly run: (signal: AbortSignal) => Promise<unknown>;
  /**
   * The result half of the pipeline (result checks, sanitising), run once when the work settles:
   * its reply is what every fetch returns, and decides the task's status. `record` writes the
   * `mcp.result` entry; the registry runs it once, when the owner first fetches the result.
   */
  readonly check: (settled: Settled) => Promise<CheckedOutcome>;
  /**
   * Writes the result entry of a task whose result will never be fetched (cancelled, or expired
   * unfetched), so its decision does not stay open in the log. Run at most once, never after a `record`.
   */
  readonly abandon: (why: 'cancelled' | 'expired') => Promise<void>;
}

/** A settled task's checked reply, and the writing of its result entry (deferred to the first fetch). */
export interface CheckedOutcome {
  readonly reply: CallToolResult;
  readonly record: () => Promise<void>;
}

/** What the registry knows of one task: the wire forms are built from this (`wire.ts`). */
export interface TaskSnapshot {
  readonly id: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  /** ISO 8601. */
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  /** The checked reply, once fetched (terminal `completed`/`failed` tasks only). */
  readonly reply?: CallToolResult;
}

/** Bounds of the in-memory registry. */
export interface TaskLimits {
  /** Live tasks (running or kept for their result) per owner. */
  readonly perOwner: number;
  /** Live tasks over all owners. */
  readonly total: number;
  /** Longest a task is kept after its creation, whatever the client asked. */
  readonly maxTtlMs: number;
  /** Kept this long when the client names no ttl. */
  readonly defaultTtlMs: number;
  /** Suggested to clients between two `tasks/get`. */
  readonly pollIntervalMs: number;
}

export const DEFAULT_TASK_LIMITS: TaskLimits = {
  perOwner: 32,
  total: 1024,
  maxTtlMs: 60 * 60 * 1000,
  defaultTtlMs: 10 * 60 * 1000,
  pollIntervalMs: 1000,
};

import { randomBytes } from 'node:crypto';
import { GatewayError } from '../errors.js';
import type { CallToolResult } from '../ports/caller.js';
import { rendered } from '../text/render.js';
import { TaskError } from './errors.js';
import {
  type CheckedOutcome,
  DEFAULT_TASK_LIMITS,
  type Settled,
  type TaskLimits,
  type TaskOwner,
  type TaskSnapshot,
  type TaskStatus,
  type TaskWork,
  TERMINAL,
} from './types.js';

/** The task methods a client sends, as the registry's audit hook names them. */
export type TaskOperation = 'get' | 'result' | 'cancel' | 'update';

/**
 * What the registry reports for the audit log: a task request refused (an id unknown to its
 * caller, which may be another principal's), and a cancel carried out. The hook's promise is
 * awaited before the caller is answered, as a refusal's decision entry is.
 */
export type TaskEvent =
  | { readonly kind: 'not-found'; readonly owner: TaskOwner; readonly op: TaskOperation; readonly id: string }
  | {
      readonly kind: 'cancelled';
      readonly owner: TaskOwner;
      readonly id: string;
      readonly server: string;
      readonly tool: string;
    };

/** What a task is about, for the audit entries that name it. */
export interface TaskSubject {
  readonly server: string;
  readonly tool: string;
}

interface Entry {
  readonly id: string;
  readonly ownerKey: string;
  readonly owner: TaskOwner;
  readonly subject: TaskSubject;
  readonly createdMs: number;
  readonly ttlMs: number;
  readonly pollIntervalMs: number;
  status: TaskStatus;
  statusMessage?: string;
  updatedMs: number;
  readonly abort: AbortController;
  /** Settles with the checked outcome, or undefined when the task was cancelled or expired first. */
  readonly outcome: Promise<CheckedOutcome | undefined>;
  checked?: CheckedOutcome;
  /** The result entry: written once, on the first fetch (or abandoned instead). */
  recorded?: Promise<void>;
  readonly work: TaskWork;
}

/** One slot reserved before the pipeline runs, so a decision is never allowed for a task that cannot exist. */
export interface TaskReservation {
  /** The task's id: the decision entry names it before the task exists. */
  readonly id: string;
  /** Start the decided work as this task; at most once. */
  start(work: TaskWork, subject: TaskSubject, ttlMs?: number): TaskSnapshot;
  /** Give the slot back (the pipeline refused the call); harmless after `start`. */
  release(): void;
}

const ownerKey = (owner: TaskOwner) => JSON.stringify([owner.agent ?? '', owner.scope ?? '']);

/** `rf-` and 144 random bits: unguessable, and never an upstream's id. */
export const mintTaskId = () => `rf-${randomBytes(18).toString('base64url')}`;

/**
 * Every task the gateway serves, in memory only (a restart loses them; clients then get "not
 * found" and call again). Each task belongs to the principal that created it: every lookup is by
 * (owner, id), and an id that is another owner's gets exactly the answer of an unknown one.
 * Bounded in count per owner and overall, and in time (a task is dropped `ttlMs` after it was
 * created, its upstream work cancelled if it still runs).
 */
export class TaskRegistry {
  private readonly tasks = new Map<string, Entry>();
  private readonly reserved = new Map<string, string>();
  private readonly limits: TaskLimits;
  private readonly now: () => number;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly options: {
      readonly limits?: Partial<TaskLimits>;
      readonly now?: () => number;
      readonly onEvent?: (event: TaskEvent) => Promise<void>;
    } = {},
  ) {
    this.limits = { ...DEFAULT_TASK_LIMITS, ...options.limits };
    this.now = options.now ?? Date.now;
    this.sweeper = setInterval(() => this.sweep(), 60_000);
    this.sweeper.unref();
  }

  /** The poll interval and ttl bounds this registry applies, for the wire forms. */
  get bounds(): TaskLimits {
    return this.limits;
  }

  /**
   * Reserve a task slot for `owner` before its call is decided.
   * @throws {TaskError} `TASK_LIMIT` when the owner or the gateway has too many live tasks.
   */
  reserve(owner: TaskOwner): TaskReservation {
    this.sweep();
    const key = ownerKey(owner);
    const live = (k?: string) =>
      [...this.tasks.values()].filter((t) => k === undefined || t.ownerKey === k).length +
      [...this.reserved.values()].filter((r) => k === undefined || r === k).length;
    if (live(key) >= this.limits.perOwner)
      throw new TaskError(
        'TASK_LIMIT',
        `ringfence: you have ${this.limits.perOwner} tasks already, the most one agent may have at once; nothing was sent. Fetch or cancel one (tasks/result, tasks/cancel), or call without a task.`,
      );
    if (live() >= this.limits.total)
      throw new TaskError(
        'TASK_LIMIT',
        `ringfence: the gateway holds ${this.limits.total} tasks already, the most it keeps at once; nothing was sent. Try again when some have ended, or call without a task.`,
      );
    const id = mintTaskId();
    this.reserved.set(id, key);
    let used = false;
    return {
      id,
      start: (work, subject, ttlMs) => {
        if (used || !this.reserved.delete(id))
          throw new GatewayError(
            'INVARIANT',
            'ringfence: a task reservation was used twice; this is a ringfence bug.',
          );
        used = true;
        return snapshot(this.begin(id, owner, key, work, subject, ttlMs));
      },
      release: () => {
        if (!used) this.reserved.delete(id);
        used = true;
      },
    };
  }

  private begin(
    id: string,
    owner: TaskOwner,
    key: string,
    work: TaskWork,
    subject: TaskSubject,
    ttlMs: number | undefined,
  ): Entry {
    const now = this.now();
    const abort = new AbortController();
    const settled: Promise<Settled> = work.run(abort.signal).then(
      (value) => ({ ok: true, value }),
      (error: unknown) => ({ ok: false, error }),
    );
    const entry: Entry = {
      id,
      ownerKey: key,
      owner,
      subject,
      createdMs: now,
      ttlMs: boundedTtl(ttlMs, this.limits),
      pollIntervalMs: this.limits.pollIntervalMs,
      status: 'working',
      updatedMs: now,
      abort,
      work,
      outcome: settled.then(async (result) => {
        if (abort.signal.aborted) return undefined;
        const checked = await work.check(result).catch(
          (error: unknown): CheckedOutcome => ({
            reply: failedReply(
              `ringfence: the result of ${subject.tool} could not be checked (${(error as Error).message}); nothing of it was passed on.`,
            ),
            record: async () => {},
          }),
        );
        // Cancelled (or expired) while the check ran: the cancel already closed it.
        if (abort.signal.aborted) return undefined;
        entry.checked = checked;
        entry.status = checked.reply.isError === true ? 'failed' : 'completed';
        entry.updatedMs = this.now();
        return checked;
      }),
    };
    this.tasks.set(id, entry);
    return entry;
  }

  /**
   * The owner's task `id`.
   * @throws {TaskError} `TASK_NOT_FOUND` for an id unknown to this owner (reported to `onEvent`).
   */
  async get(owner: TaskOwner, id: string, op: TaskOperation = 'get'): Promise<TaskSnapshot> {
    return snapshot(await this.find(owner, id, op));
  }

  /**
   * The task's result once it has one (waits while it runs; `signal` ends the wait, not the
   * task). The first fetch writes the result entry; every fetch returns the same checked reply.
   * @throws {TaskError} `TASK_NOT_FOUND`; `TASK_CANCELLED` for a task cancelled before it ended.
   */
  async result(owner: TaskOwner, id: string, signal?: AbortSignal): Promise<CallToolResult> {
    const entry = await this.find(owner, id, 'result');
    const checked = await raceAbort(entry.outcome, signal);
    if (!checked)
      throw new TaskError(
        'TASK_CANCELLED',
        `ringfence: task ${shownId(id)} was cancelled, so it has no result. Call the tool again if you still need it.`,
      );
    await this.fetched(entry, checked);
    return checked.reply;
  }

  /**
   * A terminal task's reply for an inlined form (the 2026 `tasks/get`): fetched, so its result
   * entry is written as by `result`. Undefined while it runs or when it was cancelled.
   */
  async fetchIfDone(owner: TaskOwner, id: string): Promise<{ task: TaskSnapshot; reply?: CallToolResult }> {
    const entry = await this.find(owner, id, 'get');
    if (entry.checked) await this.fetched(entry, entry.checked);
    return { task: snapshot(entry), ...(entry.checked ? { reply: entry.checked.reply } : {}) };
  }

  private fetched(entry: Entry, checked: CheckedOutcome): Promise<void> {
    entry.recorded ??= checked.record();
    return entry.recorded;
  }

  /**
   * Cancel the owner's task: its upstream work is cancelled (the server is told), and its result
   * entry says so. A task that already ended is left as it is.
   * @throws {TaskError} `TASK_NOT_FOUND`; `TASK_TERMINAL` when it had already ended (`snapshot` tells how).
   */
  async cancel(owner: TaskOwner, id: string): Promise<TaskSnapshot> {
    const entry = await this.find(owner, id, 'cancel');
    if (TERMINAL.has(entry.status))
      throw Object.assign(
        new TaskError(
          'TASK_TERMINAL',
          `ringfence: task ${shownId(id)} already ended (${entry.status}); there is nothing to cancel.`,
        ),
        { snapshot: snapshot(entry) },
      );
    this.stop(entry, 'cancelled');
    await this.options.onEvent?.({ kind: 'cancelled', owner, id, ...entry.subject });
    return snapshot(entry);
  }

  /** The owner's live tasks, newest first; nobody else's. */
  list(owner: TaskOwner): TaskSnapshot[] {
    this.sweep();
    const key = ownerKey(owner);
    return [...this.tasks.values()]
      .filter((t) => t.ownerKey === key)
      .sort((a, b) => b.createdMs - a.createdMs)
      .map(snapshot);
  }

  /** Cancel every running task (the gateway is stopping). */
  close(): void {
    clearInterval(this.sweeper);
    for (const entry of this.tasks.values()) if (!TERMINAL.has(entry.status)) this.stop(entry, 'cancelled');
    this.tasks.clear();
  }

  private stop(entry: Entry, why: 'cancelled' | 'expired'): void {
    entry.abort.abort();
    if (why === 'cancelled') {
      entry.status = 'cancelled';
      entry.updatedMs = this.now();
    }
    // Never fetched: its decision gets a result entry that says why (errors are the log's to report).
    if (!entry.recorded) entry.recorded = entry.work.abandon(why).catch(() => {});
  }

  private async find(owner: TaskOwner, id: string, op: TaskOperation): Promise<Entry> {
    this.sweep();
    const entry = typeof id === 'string' ? this.tasks.get(id) : undefined;
    if (entry && entry.ownerKey === ownerKey(owner)) return entry;
    await this.options.onEvent?.({ kind: 'not-found', owner, op, id: String(id) });
    // One answer for an unknown, expired or foreign id: it cannot tell whether an id exists.
    throw new TaskError(
      'TASK_NOT_FOUND',
      `ringfence: you have no task ${shownId(String(id))}: it may have ended more than its ttl ago or never existed (tasks live in the gateway's memory and are lost when it restarts). Call the tool again.`,
    );
  }

  private sweep(): void {
    const now = this.now();
    for (const entry of this.tasks.values()) {
      if (now - entry.createdMs < entry.ttlMs) continue;
      this.tasks.delete(entry.id);
      if (!TERMINAL.has(entry.status) || !entry.recorded) this.stop(entry, 'expired');
    }
  }
}

function boundedTtl(asked: number | undefined, limits: TaskLimits): number {
  if (asked === undefined || !Number.isFinite(asked) || asked <= 0) return limits.defaultTtlMs;
  return Math.min(Math.floor(asked), limits.maxTtlMs);
}

function snapshot(entry: Entry): TaskSnapshot {
  return {
    id: entry.id,
    status: entry.status,
    ...(entry.statusMessage !== undefined ? { statusMessage: entry.statusMessage } : {}),
    createdAt: new Date(entry.createdMs).toISOString(),
    lastUpdatedAt: new Date(entry.updatedMs).toISOString(),
    ttlMs: entry.ttlMs,
    pollIntervalMs: entry.pollIntervalMs,
    ...(entry.checked && entry.recorded ? { reply: entry.checked.reply } : {}),
  };
}

/** A task id as a message shows it: the client's own text, rendered, and cut. */
const shownId = (id: string) => rendered(id.length > 64 ? `${id.slice(0, 64)}…` : id, 'name');

function failedReply(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}

function raceAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return work;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}

/**
 * A small pool of validation workers. Each check runs on one worker with a time budget; a check
 * over budget is answered `SCHEMA_TIMEOUT` and its worker is terminated and replaced, so a
 * hostile schema costs at most one budget of one worker while the other workers keep serving.
 */
import { Worker } from 'node:worker_threads';
import { startupMark } from '../util/startup.js';
import { type EarlyEvent, schemaWorkerLimits, takeEarlyWorker } from './early-worker.js';
import type { WorkerMessage, WorkerRequest } from './protocol.js';
import { refuse, type SchemaVerdict } from './types.js';
import { workerSource } from './worker-source.js';

/** Generous: a cold start from TypeScript sources on a loaded machine takes a few seconds. */
const START_TIMEOUT_MS = 30_000;

type Request = WorkerRequest extends infer R ? (R extends unknown ? Omit<R, 'id'> : never) : never;

interface Task {
  request: Request;
  /** Who the check is for (a server, a session): the queue is fair between keys. */
  key: string;
  resolve: (verdict: SchemaVerdict) => void;
  waitTimer?: NodeJS.Timeout;
}

interface Slot {
  worker: Worker;
  ready: boolean;
  dead: boolean;
  /** Settles when the worker is ready or gone. */
  settled: Promise<void>;
  settle: () => void;
  current?: { id: number; task: Task; timer: NodeJS.Timeout };
}

export interface PoolOptions {
  size: number;
  timeoutMs: number;
  /** How long a check may wait for a free worker before it is answered `SCHEMA_TIMEOUT`. */
  maxWaitMs: number;
}

export class WorkerPool {
  private readonly slots: Slot[] = [];
  private readonly queue: Task[] = [];
  private nextId = 1;
  private closed = false;
  private lastStartError: string | undefined;
  private lastKey: string | undefined;

  constructor(private readonly options: PoolOptions) {}

  run(request: Request, key = ''): Promise<SchemaVerdict> {
    if (this.closed) return Promise.resolve(closedVerdict());
    return new Promise((resolve) => {
      const task: Task = { request, key, resolve };
      task.waitTimer = setTimeout(() => {
        const index = this.queue.indexOf(task);
        if (index >= 0) this.queue.splice(index, 1);
        resolve(
          refuse(
            'SCHEMA_TIMEOUT',
            `no schema worker became free within ${this.options.maxWaitMs} ms${this.lastStartError ? ` (${this.lastStartError})` : ''}`,
          ),
        );
      }, this.options.maxWaitMs);
      this.queue.push(task);
      this.pump();
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const task of this.queue.splice(0)) {
      clearTimeout(task.waitTimer);
      task.resolve(closedVerdict());
    }
    const slots = this.slots.splice(0);
    for (const slot of slots) {
      slot.dead = true;
      slot.settle();
      if (slot.current !== undefined) {
        clearTimeout(slot.current.timer);
        slot.current.task.resolve(closedVerdict());
      }
    }
    await Promise.all(slots.map((slot) => slot.worker.terminate().catch(() => undefined)));
  }

  /** Starts `count` workers (default: all) now and waits until each is ready (or failed to start). */
  async warmUp(count = this.options.size): Promise<void> {
    while (!this.closed && this.slots.length < Math.min(count, this.options.size)) {
      const before = this.slots.length;
      this.spawn();
      if (this.slots.length === before) break;
    }
    await Promise.all(this.slots.map((slot) => slot.settled));
  }

  /** Workers alive now (for tests and diagnostics). */
  get workerCount(): number {
    return this.slots.length;
  }

  private pump(): void {
    while (this.queue.length > 0 && !this.closed) {
      const slot = this.slots.find((s) => s.ready && !s.dead && s.current === undefined);
      if (slot === undefined) {
        // Spawn lazily: a pool nobody uses costs nothing, and a worker that cannot start is
        // retried by the next check rather than in a tight loop. Not for a check a starting
        // worker will take: at `mcp serve`'s start the first worker is still loading when the
        // first schema arrives, and a second one loading beside it took CPU from everything the
        // first answer waits for (docs/performance.md, "Start-up").
        const starting = this.slots.filter((s) => !s.ready && !s.dead).length;
        if (this.slots.length < this.options.size && this.queue.length > starting) this.spawn();
        return;
      }
      const task = this.next();
      clearTimeout(task.waitTimer);
      this.start(slot, task);
    }
  }

  /**
   * The oldest queued check of the key with the fewest checks running, preferring on a tie a key
   * other than the one served last: one caller flooding the queue with slow checks delays others
   * by about one budget, not by the whole queue.
   */
  private next(): Task {
    const running = new Map<string, number>();
    for (const slot of this.slots) {
      if (slot.current) running.set(slot.current.task.key, (running.get(slot.current.task.key) ?? 0) + 1);
    }
    const cost = (task: Task) => (running.get(task.key) ?? 0) * 2 + (task.key === this.lastKey ? 1 : 0);
    let best = 0;
    for (let i = 1; i < this.queue.length; i++) {
      if (cost(this.queue[i]!) < cost(this.queue[best]!)) best = i;
    }
    const task = this.queue.splice(best, 1)[0]!;
    this.lastKey = task.key;
    return task;
  }

  private start(slot: Slot, task: Task): void {
    const id = this.nextId++;
    const timer = setTimeout(() => this.expire(slot), this.options.timeoutMs);
    slot.current = { id, task, timer };
    slot.worker.ref();
    try {
      slot.worker.postMessage({ ...task.request, id });
    } catch (error) {
      clearTimeout(timer);
      slot.current = undefined;
      slot.worker.unref();
      task.resolve(refuse('SCHEMA_RESOURCES', `the value cannot be passed to a worker: ${messageOf(error)}`));
    }
  }

  private expire(slot: Slot): void {
    const current = slot.current;
    if (current === undefined || slot.dead) return;
    slot.current = undefined;
    current.task.resolve(
      refuse(
        'SCHEMA_TIMEOUT',
        `the schema check took longer than ${this.options.timeoutMs} ms and was stopped`,
      ),
    );
    this.retire(slot);
    // Replace at once so that the next check does not pay for a cold start.
    if (!this.closed && this.slots.length < this.options.size) this.spawn();
    this.pump();
  }

  private spawn(): void {
    const { url, options } = workerSource();
    const resourceLimits = schemaWorkerLimits(options.eval === true);
    let worker: Worker;
    let early: EarlyEvent[] = [];
    const offered = takeEarlyWorker();
    if (offered && offered.url === String(url) && sameLimits(offered.worker.resourceLimits, resourceLimits)) {
      worker = offered.worker;
      early = offered.take();
      startupMark('schema worker: the pool took the one started early');
      // Starting, it keeps the process alive like any worker this pool starts (see below).
      worker.ref();
    } else {
      if (offered) {
        startupMark("schema worker: the one started early is not this pool's kind, and was stopped");
        offered.take();
        void offered.worker.terminate().catch(() => undefined);
      }
      try {
        worker = new Worker(url, { ...options, resourceLimits, stdout: false, stderr: false });
      } catch (error) {
        this.startFailed(messageOf(error));
        return;
      }
    }
    let settle = () => {};
    const settled = new Promise<void>((resolve) => {
      settle = resolve;
    });
    const slot: Slot = { worker, ready: false, dead: false, settled, settle };
    this.slots.push(slot);
    worker.on('message', (message: WorkerMessage) => this.onMessage(slot, message));
    worker.on('error', (error) => this.onExit(slot, messageOf(error)));
    worker.on('exit', (code) => this.onExit(slot, `the schema worker exited (code ${code})`));
    // A starting or busy worker keeps the process alive (someone awaits it); an idle one must
    // not, or a gateway that forgot close() would never exit. A start that hangs is given up.
    const boot = setTimeout(() => {
      if (!slot.ready) this.onExit(slot, `it did not start within ${START_TIMEOUT_MS} ms`);
    }, START_TIMEOUT_MS);
    boot.unref();
    void settled.then(() => clearTimeout(boot));
    // What an early worker said before this pool took it, in order ('ready', or its end).
    for (const event of early) {
      if (event.kind === 'message') this.onMessage(slot, event.value as WorkerMessage);
      else if (event.kind === 'error') this.onExit(slot, messageOf(event.value));
      else this.onExit(slot, `the schema worker exited (code ${event.value})`);
    }
  }

  private onMessage(slot: Slot, message: WorkerMessage): void {
    if (slot.dead) return;
    if (message.type === 'ready') {
      slot.ready = true;
      slot.worker.unref();
      slot.settle();
      this.lastStartError = undefined;
      this.pump();
      return;
    }
    const current = slot.current;
    if (current === undefined || current.id !== message.id) return;
    clearTimeout(current.timer);
    slot.current = undefined;
    slot.worker.unref();
    current.task.resolve(message.verdict);
    this.pump();
  }

  private onExit(slot: Slot, reason: string): void {
    if (slot.dead) return;
    const wasReady = slot.ready;
    this.retire(slot);
    const current = slot.current;
    if (current !== undefined) {
      slot.current = undefined;
      clearTimeout(current.timer);
      current.task.resolve(refuse('SCHEMA_RESOURCES', `the schema check exhausted its worker: ${reason}`));
    }
    if (!wasReady) this.startFailed(reason);
    else this.pump();
  }

  private startFailed(reason: string): void {
    this.lastStartError = `schema worker failed to start: ${reason}`;
    // With no worker alive or starting, waiting is pointless: answer everyone now.
    if (this.slots.some((s) => !s.dead)) return;
    for (const task of this.queue.splice(0)) {
      clearTimeout(task.waitTimer);
      task.resolve(refuse('SCHEMA_RESOURCES', this.lastStartError));
    }
  }

  private retire(slot: Slot): void {
    slot.dead = true;
    slot.settle();
    const index = this.slots.indexOf(slot);
    if (index >= 0) this.slots.splice(index, 1);
    slot.worker.terminate().catch(() => undefined);
  }
}

function sameLimits(
  actual: Worker['resourceLimits'],
  wanted: { maxOldGenerationSizeMb: number; stackSizeMb: number },
) {
  return (
    actual?.maxOldGenerationSizeMb === wanted.maxOldGenerationSizeMb &&
    actual?.stackSizeMb === wanted.stackSizeMb
  );
}

function closedVerdict(): SchemaVerdict {
  return refuse('SCHEMA_GUARD_CLOSED', 'the schema guard is closed');
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

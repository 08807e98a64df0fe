/**
 * A schema worker started before the gateway's code is loaded. `mcp serve` lists no tool before
 * each schema is compiled in a worker, and a worker takes longer to start than the rest of the
 * start-up needs (docs/performance.md, "Start-up"): `bin/run.js` starts one before it loads the
 * bundle, and the first pool that spawns a worker takes it instead (`WorkerPool`).
 *
 * Nothing about it is trusted more than a worker the pool starts itself: the pool takes it only
 * when it runs the pool's own worker file with the pool's own resource limits, and otherwise
 * terminates it and starts its own. Until taken it is unreferenced (it never keeps the process
 * alive) and what it says is kept, in order, for the pool.
 */
import type { Worker } from 'node:worker_threads';

/** What a worker emitted before a pool took it. */
/**
 * A schema worker's resource limits: a compile bomb that gets past the static caps should kill its
 * worker, not the gateway. The pool's (schema/pool.ts), and what bin/run.js gives the worker it
 * starts early (a CLI test holds the two together); under eval, the heap is doubled.
 */
export const SCHEMA_WORKER_LIMITS: Readonly<{ maxOldGenerationSizeMb: number; stackSizeMb: number }> = {
  maxOldGenerationSizeMb: 256,
  stackSizeMb: 4,
};

/** The limits a pool gives a worker it starts (`evalMode`: a worker run from source, in tests). */
export const schemaWorkerLimits = (evalMode: boolean) => ({
  ...SCHEMA_WORKER_LIMITS,
  maxOldGenerationSizeMb: SCHEMA_WORKER_LIMITS.maxOldGenerationSizeMb * (evalMode ? 2 : 1),
});

export type EarlyEvent =
  | { kind: 'message'; value: unknown }
  | { kind: 'error'; value: Error }
  | { kind: 'exit'; value: number };

export interface EarlyWorker {
  readonly worker: Worker;
  /** The worker's file, as given to `new Worker`. */
  readonly url: string;
  /** Stops recording and returns what was recorded: the taker listens from now on. */
  take(): EarlyEvent[];
}

let offered: EarlyWorker | undefined;

/** Records what WORKER says until a pool takes it, and offers it to the next pool that spawns. */
export function offerEarlyWorker(worker: Worker, url: string): void {
  const events: EarlyEvent[] = [];
  const onMessage = (value: unknown) => events.push({ kind: 'message', value });
  const onError = (value: Error) => events.push({ kind: 'error', value });
  const onExit = (value: number) => events.push({ kind: 'exit', value });
  worker.on('message', onMessage).on('error', onError).on('exit', onExit);
  worker.unref();
  // A worker offered earlier and never taken is not left running.
  offered?.take();
  void offered?.worker.terminate().catch(() => undefined);
  offered = {
    worker,
    url,
    take() {
      worker.off('message', onMessage).off('error', onError).off('exit', onExit);
      return events.splice(0);
    },
  };
}

/** The worker offered, once: the caller checks it and either keeps it or terminates it. */
export function takeEarlyWorker(): EarlyWorker | undefined {
  const taken = offered;
  offered = undefined;
  return taken;
}

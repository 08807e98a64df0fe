import { spawnSync } from 'node:child_process';
import { Worker } from 'node:worker_threads';
import { afterEach, describe, expect, it } from 'vitest';
import { offerEarlyWorker, schemaWorkerLimits, takeEarlyWorker } from './early-worker.js';
import { SchemaGuard } from './guard.js';
import { workerSource } from './worker-source.js';

// What bin/run.js does before the bundle is loaded, with this checkout's worker file and the
// pool's limits for it (schema/pool.ts).
function startEarly(limits = schemaWorkerLimits(workerSource().options.eval === true)): Worker {
  const { url, options } = workerSource();
  return new Worker(url, { ...options, resourceLimits: limits, stdout: false, stderr: false });
}
const exited = (worker: Worker) => new Promise<number>((resolve) => worker.once('exit', resolve));
const said = (worker: Worker) => new Promise<unknown>((resolve) => worker.once('message', resolve));
const SCHEMA = { type: 'object', properties: { city: { type: 'string' } } };

describe('a schema worker started before the pool', () => {
  afterEach(async () => {
    await takeEarlyWorker()?.worker.terminate();
  });

  it('is the pool\'s first worker, its "ready" kept until the pool took it', async () => {
    const worker = startEarly();
    const ready = said(worker);
    offerEarlyWorker(worker, String(workerSource().url));
    expect(await ready).toEqual({ type: 'ready' });
    const guard = new SchemaGuard({ workers: 1 });
    try {
      await guard.warmUp(1);
      expect(await guard.prepare(SCHEMA)).toMatchObject({ ok: true });
      expect(await guard.checkArguments(SCHEMA, { city: 7 })).toMatchObject({ code: 'ARGUMENTS_INVALID' });
      expect(guard.workerCount).toBe(1);
    } finally {
      const gone = exited(worker);
      await guard.close();
      // Closing the pool ended this very worker: the pool had taken it.
      await gone;
    }
  });

  it('is taken while still starting, and the pool waits for it', async () => {
    const worker = startEarly();
    offerEarlyWorker(worker, String(workerSource().url));
    const guard = new SchemaGuard({ workers: 1 });
    try {
      expect(await guard.prepare(SCHEMA)).toMatchObject({ ok: true });
      expect(guard.workerCount).toBe(1);
    } finally {
      const gone = exited(worker);
      await guard.close();
      await gone;
    }
  });

  it.each([
    [
      'with other resource limits',
      () => startEarly({ maxOldGenerationSizeMb: 4096, stackSizeMb: 64 }),
      undefined,
    ],
    ['running another file', () => startEarly(), 'file:///elsewhere/worker.js'],
  ])('is stopped, not used, when %s; the pool starts its own', async (_, start, url) => {
    const worker = start();
    const gone = exited(worker);
    offerEarlyWorker(worker, url ?? String(workerSource().url));
    const guard = new SchemaGuard({ workers: 1 });
    try {
      expect(await guard.prepare(SCHEMA)).toMatchObject({ ok: true });
      await gone;
      expect(guard.workerCount).toBe(1);
    } finally {
      await guard.close();
    }
  });

  it("that ended before the pool took it is replaced by one of the pool's own", async () => {
    const worker = startEarly();
    offerEarlyWorker(worker, String(workerSource().url));
    await worker.terminate();
    const guard = new SchemaGuard({ workers: 1 });
    try {
      expect(await guard.prepare(SCHEMA)).toMatchObject({ ok: true });
      expect(await guard.checkArguments(SCHEMA, { city: 'Porto' })).toEqual({ ok: true });
    } finally {
      await guard.close();
    }
  });

  it('never keeps the process alive until it is taken', () => {
    // A process that offers a worker which would run for ever, and does nothing else, ends.
    const built = new URL('../../dist/schema/early-worker.js', import.meta.url).href;
    const run = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Worker } from 'node:worker_threads';
import { offerEarlyWorker } from ${JSON.stringify(built)};
offerEarlyWorker(new Worker('setInterval(() => {}, 1000)', { eval: true }), 'data:');`,
      ],
      { timeout: 20_000, encoding: 'utf8' },
    );
    expect({ status: run.status, signal: run.signal, stderr: run.stderr }).toEqual({
      status: 0,
      signal: null,
      stderr: '',
    });
  });
});

import type { FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { workerSourceAt } from '../schema/worker-source.js';
import { joinOpenCalls, type OpenCallsSlice } from './interrupted.js';
import { readAt } from './read.js';
import type { AuditDigest } from './types.js';
import { MAX_LINE_BYTES } from './types.js';

/** A byte range of the log for one worker; `first` when it starts at byte 0 (seq 1, genesis). */
export interface SliceJob {
  readonly path: string;
  readonly start: number;
  readonly end: number;
  readonly first: boolean;
}

export type SliceReport =
  | {
      readonly ok: true;
      readonly count: number;
      readonly head: { readonly seq: number; readonly prev: string };
      readonly last: { readonly seq: number; readonly hash: string };
      readonly calls: OpenCallsSlice;
    }
  | { readonly ok: false };

/** Below this a worker's start-up costs more than it saves. */
export const PARALLEL_MIN_BYTES = 32 * 1024 * 1024;
const MAX_WORKERS = 4;

/**
 * The log's first `size` bytes checked by several threads at once: each line's checks do not
 * depend on its neighbours, and the chain is whole when every slice is whole and each slice's
 * first line chains to the previous slice's last. Returns the verdict only for a clean log;
 * `undefined` means "not shown clean here" (a bad line, no worker could start, too few cores):
 * the caller then walks the log in one thread, which names the line and what happened to it.
 */
export async function verifyInParallel(
  path: string,
  handle: FileHandle,
  size: number,
  sliceMinBytes = PARALLEL_MIN_BYTES / 2,
): Promise<{ entries: number; lastHash: AuditDigest; interrupted: number[] } | undefined> {
  const slices = Math.min(MAX_WORKERS, Math.max(2, availableParallelism()), Math.floor(size / sliceMinBytes));
  if (slices < 2) return undefined;
  const starts = [0];
  for (let i = 1; i < slices; i++) {
    const start = await lineStartAfter(handle, Math.floor((i * size) / slices), size);
    if (start === undefined || start <= (starts.at(-1) as number)) return undefined;
    starts.push(start);
  }
  const jobs: SliceJob[] = starts.map((start, i) => ({
    path,
    start,
    end: starts[i + 1] ?? size,
    first: i === 0,
  }));
  const reports = await Promise.all(jobs.map(runSlice));
  let entries = 0;
  for (const [i, report] of reports.entries()) {
    if (!report.ok) return undefined;
    const before = reports[i - 1];
    if (before !== undefined) {
      if (!before.ok || report.head.seq !== before.last.seq + 1 || report.head.prev !== before.last.hash)
        return undefined;
    }
    entries += report.count;
  }
  const last = reports.at(-1);
  if (!last?.ok) return undefined;
  const interrupted = joinOpenCalls(
    reports.map((report) => (report as Extract<SliceReport, { ok: true }>).calls),
  );
  return { entries, lastHash: last.last.hash as AuditDigest, interrupted };
}

/** The offset of the first line that starts at or after `offset`, if one starts before `size`. */
async function lineStartAfter(handle: FileHandle, offset: number, size: number): Promise<number | undefined> {
  const window = Buffer.allocUnsafe(Math.min(MAX_LINE_BYTES + 1, size - offset + 1));
  const got = await readAt(handle, window, offset - 1);
  const newline = window.subarray(0, got).indexOf(0x0a);
  if (newline < 0) return undefined;
  const start = offset + newline;
  return start < size ? start : undefined;
}

function runSlice(job: SliceJob): Promise<SliceReport> {
  return new Promise((resolve) => {
    let worker: Worker;
    try {
      const { url, options } = workerSourceAt(new URL('./verify-worker.js', import.meta.url));
      worker = new Worker(url, { ...options, workerData: job, stdout: false, stderr: false });
    } catch {
      resolve({ ok: false });
      return;
    }
    worker.once('message', (report: SliceReport) => resolve(report));
    worker.once('error', () => resolve({ ok: false }));
    worker.once('exit', () => resolve({ ok: false }));
  });
}

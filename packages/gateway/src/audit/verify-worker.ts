/**
 * One slice of a parallel `audit verify`: every line of the byte range [start, end) checked as the
 * sequential walk checks it (UTF-8, JSON, shape, byte form, hash), and the chain inside the slice.
 * It reports only whether the slice is clean and its two ends; the caller stitches the slices and,
 * on any doubt, runs the sequential walk, which alone says what is wrong and where.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { parentPort, workerData } from 'node:worker_threads';
import { OpenCalls } from './interrupted.js';
import { AUDIT_GENESIS } from './types.js';
import { Lines, parseLine } from './verify-lines.js';
import type { SliceJob, SliceReport } from './verify-parallel.js';

async function checkSlice({ path, start, end, first }: SliceJob): Promise<SliceReport> {
  const fd = openSync(path, 'r');
  try {
    const lines = new Lines(
      (buffer, offset, length, position) => readSync(fd, buffer, offset, length, position),
      end,
      start,
    );
    let count = 0;
    let head: { seq: number; prev: string } | undefined;
    let last: { seq: number; hash: string } | undefined;
    const calls = new OpenCalls();
    for (let item = lines.take() ?? (await lines.next()); item; item = lines.take() ?? (await lines.next())) {
      if (!item.complete) return { ok: false };
      const parsed = parseLine(item.bytes);
      if (!parsed.ok) return { ok: false };
      const entry = parsed.facts;
      if (last === undefined) {
        head = { seq: entry.seq, prev: entry.prev };
        if (first && (entry.seq !== 1 || entry.prev !== AUDIT_GENESIS)) return { ok: false };
      } else if (entry.seq !== last.seq + 1 || entry.prev !== last.hash) {
        return { ok: false };
      }
      last = { seq: entry.seq, hash: parsed.hash };
      calls.see(entry);
      count += 1;
    }
    if (head === undefined || last === undefined) return { ok: false };
    return { ok: true, count, head, last, calls: calls.slice() };
  } finally {
    closeSync(fd);
  }
}

const job = workerData as SliceJob;
checkSlice(job).then(
  (report) => parentPort?.postMessage(report),
  // A read error or a line too long: the sequential walk reports it properly.
  () => parentPort?.postMessage({ ok: false } satisfies SliceReport),
);

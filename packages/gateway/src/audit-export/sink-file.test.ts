/**
 * The JSON lines file sink counts a write as delivered once it returned and was fdatasync-ed: so
 * every byte must be in the file by then. A regular file may take fewer bytes than asked (a disk
 * filling up returns a short count before it returns ENOSPC), and a write that failed half way
 * leaves a line without its newline that the next record must not be glued onto.
 */
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';

const shortWrites = vi.hoisted(() => ({ left: 0 }));

vi.mock('node:fs/promises', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs/promises')>();
  const open: typeof real.open = async (...args: Parameters<typeof real.open>) => {
    const handle = await real.open(...args);
    const write = handle.write.bind(handle) as (...a: unknown[]) => Promise<{ bytesWritten: number }>;
    // What write(2) does on a filling disk: takes part of the buffer and says how much.
    (handle as unknown as { write: unknown }).write = async (buffer: unknown, ...rest: unknown[]) => {
      if (shortWrites.left > 0 && Buffer.isBuffer(buffer) && rest.length === 0 && buffer.length > 1) {
        shortWrites.left -= 1;
        const { bytesWritten } = await write(buffer.subarray(0, Math.floor(buffer.length / 2)));
        return { bytesWritten, buffer };
      }
      return write(buffer, ...rest);
    };
    return handle;
  };
  return { ...real, open, default: { ...real, open } };
});

const { writeSampleLog } = await import('../audit/__fixtures__/sample.js');
const { verifyAgainstExport } = await import('./against.js');
const { exportAuditLog } = await import('./exporter.js');
const { parseExportTarget } = await import('./target.js');

let home: string;
let log: string;
let out: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-sink-file-'));
  log = join(home, 'audit.jsonl');
  out = join(home, 'collector.jsonl');
  shortWrites.left = 0;
});
afterEach(async () => rm(home, { recursive: true, force: true }));

const exportOnce = () =>
  exportAuditLog(
    {
      auditPath: log,
      home,
      target: parseExportTarget(`jsonl:${out}`),
      format: 'ringfence',
      sinkId: 'file',
      follow: false,
      anchorIntervalMs: 0,
      notice: () => {},
    },
    new AbortController().signal,
  );

describe('the JSON lines file sink', () => {
  it('writes every byte of a batch before counting it delivered (a short write is not the whole write)', async () => {
    await writeSampleLog(log, 10);
    shortWrites.left = 1;
    const summary = await exportOnce();
    expect(summary.position.seq).toBe(10);
    const lines = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
    for (const line of lines) expect(() => JSON.parse(line)).not.toThrow();
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: true, exported: 10, missing: 0 });
  });

  it('does not glue the first record onto a torn last line left in the file', async () => {
    await writeSampleLog(log, 10);
    await writeFile(out, '{"seq":3,"prev":"sha256:');
    await exportOnce();
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: true, exported: 10, missing: 0 });
  });
});

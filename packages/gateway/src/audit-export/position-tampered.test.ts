/**
 * The position file lives in the home, where anything running as the user can write: a position
 * that does not name an entry of this log where it says must stop the export, never skip ahead
 * or resume mid-line.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSampleLog } from '../audit/__fixtures__/sample.js';
import { hashLine } from '../audit/spec.js';
import { exportAuditLog } from './exporter.js';
import { type ExportPosition, loadPosition, positionPath, savePosition } from './position.js';
import { parseExportTarget } from './target.js';

let home: string;
let log: string;
let out: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-position-tampered-'));
  log = join(home, 'audit.jsonl');
  out = join(home, 'out.jsonl');
});
afterEach(async () => rm(home, { recursive: true, force: true }));

const run = () =>
  exportAuditLog(
    {
      auditPath: log,
      home,
      target: parseExportTarget(`jsonl:${out}`),
      format: 'ringfence',
      sinkId: 'test',
      follow: false,
      anchorIntervalMs: 0,
      notice: () => {},
    },
    new AbortController().signal,
  );

describe('a tampered export position', () => {
  it('is refused when it points past the log, mid-line, at another line or another log', async () => {
    await writeSampleLog(log, 20);
    await run();
    const path = positionPath(home, 'test');
    const real = await loadPosition(path);
    const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    const offsetAfter = (seq: number) => lines.slice(0, seq).join('\n').length + 1;
    const size = (await readFile(log)).length;
    const tampered: ExportPosition[] = [
      { ...real, seq: 25, offset: size + 500 },
      { ...real, seq: 10, offset: offsetAfter(10) - 3, hash: hashLine(lines[9]!) },
      { ...real, seq: 10, offset: offsetAfter(10), hash: hashLine(lines[8]!) },
      { ...real, seq: 9, offset: offsetAfter(10), hash: hashLine(lines[9]!) },
      {
        ...real,
        seq: 10,
        offset: offsetAfter(10),
        hash: hashLine(lines[9]!),
        log: `sha256:${'0'.repeat(64)}`,
      },
    ];
    for (const position of tampered) {
      await savePosition(path, position, { target: `jsonl:${out}`, format: 'ringfence' });
      await expect(run()).rejects.toMatchObject({ code: 'EXPORT_LOG_DIVERGED' });
    }
    // The real position of an earlier entry is accepted: the rest is sent again (at least once).
    await savePosition(
      path,
      { ...real, seq: 10, offset: offsetAfter(10), hash: hashLine(lines[9]!) },
      { target: `jsonl:${out}`, format: 'ringfence' },
    );
    expect((await run()).position.seq).toBe(20);
  });
});

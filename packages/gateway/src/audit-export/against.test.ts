import { appendFile, mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSampleLog } from '../audit/__fixtures__/sample.js';
import { AuditLog } from '../audit/log.js';
import { verifyAgainstExport } from './against.js';
import { exportAuditLog } from './exporter.js';
import { parseExportTarget } from './target.js';

let home: string;
let log: string;
let out: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-against-'));
  log = join(home, 'audit.jsonl');
  out = join(home, 'collector.jsonl');
});
afterEach(async () => rm(home, { recursive: true, force: true }));

async function exportTo(format: 'ringfence' | 'ocsf' = 'ringfence', newLog = false) {
  return exportAuditLog(
    {
      auditPath: log,
      home,
      target: parseExportTarget(`jsonl:${out}`),
      format,
      sinkId: format,
      follow: false,
      anchorIntervalMs: 0,
      ...(newLog ? { newLog } : {}),
      notice: () => {},
    },
    new AbortController().signal,
  );
}

describe('audit verify --against the collector file', () => {
  it('passes when the local log is what left the machine, and says what is not covered yet', async () => {
    await writeSampleLog(log, 40);
    await exportTo();
    const more = await AuditLog.open({ path: log, session: 's' });
    await more.append({
      type: 'mcp.egress',
      refs: { server: 's', host: 'h', port: 1, allowed: true, reason: 'ok' },
    });
    await more.close();
    const result = await verifyAgainstExport(log, out);
    expect(result).toMatchObject({
      ok: true,
      entries: 41,
      exported: 40,
      anchors: 1,
      coveredThrough: 40,
      duplicates: 0,
      missing: 0,
    });
    expect(result.message).toMatch(/the 1 entries after it have not left the machine/);
  });

  it('catches a rewrite of the whole file re-chained from scratch, same length (the chain alone cannot)', async () => {
    await writeSampleLog(log, 40);
    await exportTo();
    const size = (await readFile(log)).length;
    await rm(log);
    // A new log of the same entries written at another moment: same length, every prev valid.
    await writeSampleLog(log, 40);
    expect((await readFile(log)).length).toBe(size);
    const { verifyAuditLog } = await import('../audit/verify.js');
    expect((await verifyAuditLog(log)).ok).toBe(true);
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_OTHER_LOG' });
  });

  it('catches a rewrite that keeps line 1 and re-chains from a later line', async () => {
    await writeSampleLog(log, 20);
    await exportTo();
    // Keep lines 1-10, replace 11-20 with a re-chained forgery (what a hand-edit plus rehash gives).
    const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    await writeFile(log, `${lines.slice(0, 10).join('\n')}\n`);
    const forger = await AuditLog.open({ path: log, session: 'sess-1' });
    for (let i = 0; i < 10; i++)
      await forger.append({
        type: 'mcp.egress',
        refs: { server: 's', host: 'innocent', port: 443, allowed: true, reason: 'ok' },
      });
    await forger.close();
    expect(await verifyAgainstExport(log, out)).toMatchObject({
      ok: false,
      code: 'AGAINST_REWRITTEN',
      message: expect.stringMatching(/seq 11 /),
    });
  });

  it('catches a cut back to a line boundary, which the chain alone cannot', async () => {
    await writeSampleLog(log, 20);
    await exportTo();
    const lines = (await readFile(log, 'utf8')).split('\n');
    await truncate(log, lines.slice(0, 15).join('\n').length + 1);
    expect(await verifyAgainstExport(log, out)).toMatchObject({
      ok: false,
      code: 'AGAINST_TRUNCATED',
      message: expect.stringMatching(/ends at seq 15/),
    });
  });

  it('reports reordered lines (the local chain breaks first)', async () => {
    await writeSampleLog(log, 20);
    await exportTo();
    const lines = (await readFile(log, 'utf8')).split('\n');
    [lines[6], lines[7]] = [lines[7]!, lines[6]!];
    await writeFile(log, lines.join('\n'));
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_LOCAL_BROKEN' });
  });

  it('works from OCSF events as from the ringfence form (seq and hash in metadata)', async () => {
    await writeSampleLog(log, 20);
    await exportTo('ocsf');
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: true, exported: 20 });
    const lines = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    await writeFile(log, `${lines.slice(0, 12).join('\n')}\n`);
    const forger = await AuditLog.open({ path: log, session: 'sess-1' });
    for (let i = 0; i < 8; i++)
      await forger.append({
        type: 'mcp.egress',
        refs: { server: 's', host: 'x', port: 1, allowed: true, reason: 'ok' },
      });
    await forger.close();
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_REWRITTEN' });
  });

  it('counts resends as duplicates; two different entries for one seq are a conflict', async () => {
    await writeSampleLog(log, 10);
    await exportTo();
    const exported = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
    await appendFile(out, `${exported.slice(5, 10).join('\n')}\n`);
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: true, duplicates: 5 });
    const forged = exported[3]!.replace('"sess-1"', '"sess-2"');
    await appendFile(out, `${forged}\n`);
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_CONFLICT' });
  });

  it('a receiver file with anchors only still catches the rewrite; with nothing it says so', async () => {
    await writeSampleLog(log, 10);
    await exportTo();
    const text = await readFile(out, 'utf8');
    await writeFile(
      out,
      `${text
        .split('\n')
        .filter((l) => l.includes('ringfence.anchor'))
        .join('\n')}\n`,
    );
    expect(await verifyAgainstExport(log, out)).toMatchObject({
      ok: true,
      anchors: 1,
      exported: 0,
      coveredThrough: 10,
    });
    await truncate(log, (await readFile(log, 'utf8')).split('\n').slice(0, 9).join('\n').length + 1);
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_TRUNCATED' });
    await writeFile(out, 'Dec  1 10:00:00 host sshd[1]: nothing of ours\n');
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_NOTHING' });
  });
});

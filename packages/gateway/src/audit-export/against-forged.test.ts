/**
 * `audit verify --against` facing a collector file that holds more than one honest export: records
 * someone else sent to the same collector (anyone on the machine can), and other logs.
 */
import { appendFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSampleLog } from '../audit/__fixtures__/sample.js';
import { AuditLog } from '../audit/log.js';
import { hashLine } from '../audit/spec.js';
import { verifyAgainstExport } from './against.js';
import { anchorRecord } from './anchor.js';
import { exportAuditLog } from './exporter.js';
import { parseExportTarget } from './target.js';

let home: string;
let log: string;
let out: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-against-forged-'));
  log = join(home, 'audit.jsonl');
  out = join(home, 'collector.jsonl');
});
afterEach(async () => rm(home, { recursive: true, force: true }));

async function exportTo(newLog = false) {
  return exportAuditLog(
    {
      auditPath: log,
      home,
      target: parseExportTarget(`jsonl:${out}`),
      format: 'ringfence',
      sinkId: 'ringfence',
      follow: false,
      anchorIntervalMs: 0,
      ...(newLog ? { newLog } : {}),
      notice: () => {},
    },
    new AbortController().signal,
  );
}

const localLines = async () => (await readFile(log, 'utf8')).split('\n').filter(Boolean);

/** Keeps the first `kept` lines and re-chains forged entries after them up to `total` (line 1 kept). */
async function rewriteFrom(kept: number, total: number) {
  const lines = await localLines();
  await writeFile(log, `${lines.slice(0, kept).join('\n')}\n`);
  const forger = await AuditLog.open({ path: log, session: 'sess-1' });
  for (let i = kept; i < total; i++)
    await forger.append({
      type: 'mcp.egress',
      refs: { server: 's', host: 'innocent', port: 443, allowed: true, reason: 'ok' },
    });
  await forger.close();
}

describe('audit verify --against a collector file with forged or foreign records', () => {
  it('a second, different anchor for one seq of one log is a conflict, not the last word', async () => {
    await writeSampleLog(log, 10);
    await exportTo();
    // A collector that keeps anchors only (documented as enough).
    const anchors = (await readFile(out, 'utf8')).split('\n').filter((l) => l.includes('ringfence.anchor'));
    await writeFile(out, `${anchors.join('\n')}\n`);
    // The local log is rewritten from line 5 on, re-chained (line 1, the log's id, kept) ...
    await rewriteFrom(4, 10);
    const forged = await localLines();
    expect(forged).toHaveLength(10);
    // ... and an anchor for the forgery is sent to the same collector after the real one.
    const anchor = JSON.parse(anchors[0]!) as { log: string; seq: number };
    const fake = anchorRecord({
      log: anchor.log as `sha256:${string}`,
      seq: anchor.seq,
      hash: hashLine(forged[anchor.seq - 1]!),
      ts: new Date().toISOString(),
      host: 'h',
    });
    await appendFile(out, `${fake}\n`);
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_CONFLICT' });
  });

  it('a log deleted and started afresh is not hidden once the new log is exported too', async () => {
    await writeSampleLog(log, 10);
    await exportTo();
    // The whole log goes; a new one starts and is exported as a new log (what --new-log does).
    await rm(log);
    await writeSampleLog(log, 3);
    await exportTo(true);
    const result = await verifyAgainstExport(log, out);
    expect(result.otherLogs).toBe(1);
    // The new log itself matches what left, but the report must say the collector holds a log
    // no local file was checked against: that is the deleted one.
    expect(result.message).toMatch(/1 other log/);
  });
});

describe('audit verify --against: entries in the ringfence form belong to the log they chain to', () => {
  it('an anchor of another log sent mid-stream does not take the exported entries after it out of the check', async () => {
    await writeSampleLog(log, 10);
    await exportTo();
    const exported = (await readFile(out, 'utf8')).split('\n').filter(Boolean);
    const entries = exported.filter((l) => !l.includes('ringfence.anchor'));
    const realAnchor = exported.find((l) => l.includes('ringfence.anchor'))!;
    // What the collector holds when an anchor of some other log arrived between entries 5 and 6,
    // and the gateway was killed before its next anchor (none after seq 5 of the real log).
    const stranger = anchorRecord({
      log: `sha256:${'f'.repeat(64)}`,
      seq: 1,
      hash: `sha256:${'e'.repeat(64)}`,
      ts: new Date().toISOString(),
      host: 'elsewhere',
    });
    const early = JSON.parse(realAnchor) as { log: `sha256:${string}` };
    const anchorAt5 = anchorRecord({
      log: early.log,
      seq: 5,
      hash: hashLine(entries[4]!),
      ts: new Date().toISOString(),
      host: 'h',
    });
    await writeFile(
      out,
      `${[...entries.slice(0, 5), anchorAt5, stranger, ...entries.slice(5)].join('\n')}\n`,
    );
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: true, exported: 10, missing: 0 });
    // The local log is then rewritten from seq 8 on, re-chained: entries 8-10 left the machine.
    await rewriteFrom(7, 10);
    expect(await verifyAgainstExport(log, out)).toMatchObject({ ok: false, code: 'AGAINST_REWRITTEN' });
  });
});

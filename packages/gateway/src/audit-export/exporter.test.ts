import { mkdtemp, readFile, rm, truncate, writeFile } from 'node:fs/promises';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSampleLog } from '../audit/__fixtures__/sample.js';
import { AuditLog } from '../audit/log.js';
import { type ExporterOptions, exportAuditLog } from './exporter.js';
import { splitOctetCounted } from './framing.js';
import { loadPosition, positionPath, savePosition } from './position.js';
import { parseExportTarget } from './target.js';

let home: string;
let log: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-export-'));
  log = join(home, 'audit.jsonl');
});
afterEach(async () => rm(home, { recursive: true, force: true }));

const notices: string[] = [];
function options(to: string, extra: Partial<ExporterOptions> = {}): ExporterOptions {
  return {
    auditPath: log,
    home,
    target: parseExportTarget(to),
    format: 'ringfence',
    sinkId: 'test',
    follow: false,
    anchorIntervalMs: 0,
    holdMs: 50,
    pollMs: 10,
    backoffMs: { min: 10, max: 50 },
    notice: (m) => notices.push(m),
    ...extra,
  };
}

const seqsOf = (text: string) =>
  text
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l.slice(l.indexOf('{'))))
    .filter((v) => typeof v.prev === 'string')
    .map((v) => v.seq as number);
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('exportAuditLog to a JSON lines file', () => {
  it('sends every entry once, in order, and resumes after the last one on the next run', async () => {
    const out = join(home, 'out.jsonl');
    await writeSampleLog(log, 50);
    const first = await exportAuditLog(options(`jsonl:${out}`), new AbortController().signal);
    expect(first.position.seq).toBe(50);
    expect(first.anchors).toBe(1);
    const more = await AuditLog.open({ path: log, session: 's2' });
    for (let i = 0; i < 30; i++)
      await more.append({
        type: 'mcp.egress',
        refs: { server: 's', host: 'h', port: 1, allowed: false, reason: 'no' },
      });
    await more.close();
    const second = await exportAuditLog(options(`jsonl:${out}`), new AbortController().signal);
    expect(second.sent).toBe(30);
    expect(seqsOf(await readFile(out, 'utf8'))).toEqual(range(1, 80));
    // Each exported line is the local line, byte for byte.
    const local = (await readFile(log, 'utf8')).split('\n').filter(Boolean);
    const exported = (await readFile(out, 'utf8'))
      .split('\n')
      .filter((l) => !l.includes('ringfence.anchor') && l);
    expect(exported).toEqual(local);
    expect((await loadPosition(positionPath(home, 'test'))).seq).toBe(80);
  });

  it('after a crash that left the position behind, resends from it: duplicates, never a gap', async () => {
    const out = join(home, 'out.jsonl');
    await writeSampleLog(log, 40);
    await exportAuditLog(options(`jsonl:${out}`), new AbortController().signal);
    // As if the exporter died after sending 21..40 but before saving past 20.
    const lines = (await readFile(log, 'utf8')).split('\n');
    const offset = lines.slice(0, 20).join('\n').length + 1;
    const { hashLine } = await import('../audit/index.js');
    const position = await loadPosition(positionPath(home, 'test'));
    await savePosition(
      positionPath(home, 'test'),
      { seq: 20, hash: hashLine(lines[19]!), offset, log: position.log! },
      { target: 'x', format: 'ringfence' },
    );
    const again = await exportAuditLog(options(`jsonl:${out}`), new AbortController().signal);
    expect(again.sent).toBe(20);
    const seqs = seqsOf(await readFile(out, 'utf8'));
    expect(seqs).toEqual([...range(1, 40), ...range(21, 40)]);
  });

  it('refuses to go on when the local log no longer holds what was exported', async () => {
    const out = join(home, 'out.jsonl');
    await writeSampleLog(log, 30);
    await exportAuditLog(options(`jsonl:${out}`), new AbortController().signal);
    // Rewritten from scratch, same number of entries: re-chained, so it verifies on its own.
    await rm(log);
    await writeSampleLog(log, 30);
    await expect(exportAuditLog(options(`jsonl:${out}`), new AbortController().signal)).rejects.toMatchObject(
      { code: 'EXPORT_LOG_DIVERGED' },
    );
    // Cut back at a line boundary.
    await rm(log);
    await writeSampleLog(log, 30);
    await exportAuditLog(options(`jsonl:${out}`, { newLog: true }), new AbortController().signal);
    const text = await readFile(log, 'utf8');
    await truncate(log, text.split('\n').slice(0, 25).join('\n').length + 1);
    await expect(exportAuditLog(options(`jsonl:${out}`), new AbortController().signal)).rejects.toMatchObject(
      { code: 'EXPORT_LOG_DIVERGED', message: expect.stringMatching(/--new-log/) },
    );
  });

  it('refuses to go on when entries already exported were re-chained behind an unchanged line 1', async () => {
    const out = join(home, 'out.jsonl');
    await writeSampleLog(log, 20);
    await exportAuditLog(options(`jsonl:${out}`), new AbortController().signal);
    // Same bytes count everywhere: one timestamp changed, every later prev recomputed.
    const { hashLine } = await import('../audit/index.js');
    let prev = '';
    const forged = (await readFile(log, 'utf8'))
      .split('\n')
      .filter(Boolean)
      .map((line, i) => {
        const entry = JSON.parse(line);
        if (i === 10) entry.ts = entry.ts.replace(/\.\d{3}Z$/, '.999Z');
        if (i > 0) entry.prev = prev;
        const text = JSON.stringify(entry);
        prev = hashLine(text);
        return text;
      });
    await writeFile(log, `${forged.join('\n')}\n`);
    await expect(exportAuditLog(options(`jsonl:${out}`), new AbortController().signal)).rejects.toMatchObject(
      {
        code: 'EXPORT_LOG_DIVERGED',
        message: expect.stringMatching(/no longer continues from what was already exported/),
      },
    );
  });

  it('stops at a line that does not chain instead of shipping it', async () => {
    await writeSampleLog(log, 10);
    const text = await readFile(log, 'utf8');
    const lines = text.split('\n');
    [lines[4], lines[5]] = [lines[5]!, lines[4]!];
    await writeFile(log, lines.join('\n'));
    const out = join(home, 'out.jsonl');
    await expect(exportAuditLog(options(`jsonl:${out}`), new AbortController().signal)).rejects.toMatchObject(
      { code: 'EXPORT_LOG_BROKEN' },
    );
    expect(seqsOf(await readFile(out, 'utf8'))).toEqual([1, 2, 3, 4]);
  });

  it('one exporter per sink: a second one is refused while the first runs', async () => {
    await writeSampleLog(log, 5);
    const stop = new AbortController();
    const running = exportAuditLog(options(`jsonl:${join(home, 'o')}`, { follow: true }), stop.signal);
    await new Promise((r) => setTimeout(r, 100));
    await expect(
      exportAuditLog(
        options(`jsonl:${join(home, 'o')}`, { lockTimeoutMs: 100 }),
        new AbortController().signal,
      ),
    ).rejects.toMatchObject({ code: 'EXPORT_BUSY' });
    stop.abort();
    await running;
  });
});

/** A syslog collector on loopback that can be stopped and started again on the same port. */
class Collector {
  received: Buffer[] = [];
  private rest = Buffer.alloc(0);
  private server: Server | undefined;
  private sockets = new Set<Socket>();
  port = 0;

  async start(port = 0): Promise<void> {
    this.server = createServer((socket) => {
      this.sockets.add(socket);
      this.rest = Buffer.alloc(0);
      socket.on('data', (data) => {
        const { messages, rest } = splitOctetCounted(Buffer.concat([this.rest, data]));
        this.received.push(...messages);
        this.rest = Buffer.from(rest);
      });
      socket.on('end', () => socket.end());
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((r) => this.server!.listen(port, '127.0.0.1', r));
    this.port = (this.server!.address() as { port: number }).port;
  }

  /** Drops every connection at once (a crash), losing whatever was not yet read. */
  async crash(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise((r) => this.server!.close(r));
  }

  seqs(): number[] {
    return this.received
      .map((m) => m.toString('utf8'))
      .map((t) => JSON.parse(t.slice(t.indexOf('{'))))
      .filter((v) => typeof v.prev === 'string')
      .map((v) => v.seq);
  }
}

describe('exportAuditLog to syslog over TCP', () => {
  it('a collector down at first is retried with backoff, then gets everything', async () => {
    await writeSampleLog(log, 20);
    const collector = new Collector();
    await collector.start();
    const port = collector.port;
    await collector.crash();
    const running = exportAuditLog(options(`syslog+tcp://127.0.0.1:${port}`), new AbortController().signal);
    await new Promise((r) => setTimeout(r, 150));
    await collector.start(port);
    const summary = await running;
    expect(collector.seqs()).toEqual(range(1, 20));
    expect(summary.position.seq).toBe(20);
    expect(notices.some((n) => n.includes('Retrying with backoff'))).toBe(true);
  });

  it('a collector that drops the connection mid-stream gets the unconfirmed entries again, in order', async () => {
    await writeSampleLog(log, 10);
    const collector = new Collector();
    await collector.start();
    const port = collector.port;
    const stop = new AbortController();
    const running = exportAuditLog(
      options(`syslog+tcp://127.0.0.1:${port}`, { follow: true, holdMs: 5_000 }),
      stop.signal,
    );
    for (let i = 0; i < 100 && collector.seqs().length < 10; i++) await new Promise((r) => setTimeout(r, 20));
    // Entries 1-10 are on the wire but not yet held long enough to count as delivered.
    await collector.crash();
    const writer = await AuditLog.open({ path: log, session: 's2' });
    for (let i = 0; i < 5; i++)
      await writer.append({
        type: 'mcp.egress',
        refs: { server: 's', host: 'h', port: 1, allowed: true, reason: 'ok' },
      });
    await writer.close();
    await collector.start(port);
    for (let i = 0; i < 200 && !collector.seqs().includes(15); i++)
      await new Promise((r) => setTimeout(r, 20));
    stop.abort();
    const summary = await running;
    const seqs = collector.seqs();
    // Everything arrived; what came twice is the unconfirmed window, sent again from its start.
    expect([...new Set(seqs)]).toEqual(range(1, 15));
    expect(seqs.slice(0, 10)).toEqual(range(1, 10));
    expect(seqs.slice(10)).toEqual(range(1, 15));
    expect(summary.resent).toBe(10);
    expect(summary.position.seq).toBe(15);
  });
});

import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { FsError, withFileLock } from '@ringfence/policy';
import { type AuditDigest, checkEntryShape } from '../audit/index.js';
import { anchorRecord } from './anchor.js';
import { ExportError } from './errors.js';
import { frame } from './framing.js';
import { ocsfEvent } from './ocsf.js';
import { type ExportPosition, loadPosition, positionPath, START, savePosition } from './position.js';
import { type ExportSink, sinkFor } from './sink.js';
import { checkPosition, readAfter, type SourceLine } from './source.js';
import type { ExportFormat, ExportTarget } from './target.js';

export interface ExporterOptions {
  readonly auditPath: string;
  readonly home: string;
  readonly target: ExportTarget;
  readonly format: ExportFormat;
  readonly sinkId: string;
  /**
   * Keep exporting as entries are appended: until the run's signal aborts (true), or until this
   * signal aborts and everything written by then has been sent (`mcp serve` closing).
   */
  readonly follow: boolean | AbortSignal;
  /** Send the chain head every this many ms (0: only at the end of an export). */
  readonly anchorIntervalMs: number;
  /** Start from line 1 of the log at the path, whatever was exported before (after moving a log aside). */
  readonly newLog?: boolean;
  /** How long a stream connection must stay up after bytes before they count as delivered. */
  readonly holdMs?: number;
  readonly pollMs?: number;
  readonly backoffMs?: { readonly min: number; readonly max: number };
  /** How long to wait for another exporter of this sink before giving up (EXPORT_BUSY). */
  readonly lockTimeoutMs?: number;
  /** ringfence's version, for OCSF's `metadata.product.version` (left out when not given). */
  readonly version?: string;
  readonly host?: string;
  readonly notice: (message: string) => void;
  /** For tests: the sink to write to instead of the target's. */
  readonly sink?: ExportSink;
}

export interface ExportSummary {
  /** The last entry the collector acknowledged (what the position file now holds). */
  readonly position: ExportPosition;
  /** Entries written to the sink, resends included. */
  readonly sent: number;
  /** Entries sent again after a connection was lost before they counted as delivered. */
  readonly resent: number;
  readonly anchors: number;
  readonly reconnects: number;
}

/**
 * Exports the audit log to one sink: every entry in order, at least once, resuming from the
 * position in the home. It reads the file (never the writer's memory), so it adds nothing to
 * the call path and runs the same in `mcp serve` and `ringfence audit export`. One exporter per
 * sink at a time: the position file's lock is held for the whole run.
 */
export async function exportAuditLog(options: ExporterOptions, signal: AbortSignal): Promise<ExportSummary> {
  const path = positionPath(options.home, options.sinkId);
  try {
    return await withFileLock(path, () => new Run(options, path, signal).run(), {
      timeoutMs: options.lockTimeoutMs ?? 2_000,
    });
  } catch (error) {
    if (error instanceof FsError && error.code === 'LOCK_TIMEOUT')
      throw new ExportError(
        'EXPORT_BUSY',
        `Another ringfence process is exporting to ${options.target.url} (lock ${path}.lock): one exporter per sink. Stop it first, or give this export another --id.`,
        { cause: error },
      );
    throw error;
  }
}

class Run {
  private readonly sink: ExportSink;
  private readonly host: string;
  private confirmed: ExportPosition = START;
  private saved: ExportPosition = START;
  private sent: ExportPosition = START;
  private inflight: { position: ExportPosition; at: number }[] = [];
  private log: AuditDigest | undefined;
  private ino = 0;
  private counts = { sent: 0, resent: 0, anchors: 0, reconnects: 0 };
  private anchoredSeq = 0;
  private lastAnchorAt = Date.now();
  private highest = 0;

  constructor(
    private readonly options: ExporterOptions,
    private readonly path: string,
    private readonly signal: AbortSignal,
  ) {
    this.sink = options.sink ?? sinkFor(options.target);
    this.host = options.host ?? hostname();
  }

  async run(): Promise<ExportSummary> {
    const { auditPath } = this.options;
    this.confirmed = this.options.newLog ? START : await loadPosition(this.path);
    this.saved = this.confirmed;
    const state = await checkPosition(auditPath, this.confirmed);
    this.log = state.log;
    this.ino = state.ino;
    this.highest = this.confirmed.seq;
    if (this.options.newLog) await this.save(true);
    try {
      for (;;) {
        await this.pump();
        if (await this.finish()) break;
        if (this.signal.aborted) break;
        this.options.notice(
          `the collector at ${this.options.target.url} did not confirm the end of the export; sending again from seq ${this.confirmed.seq + 1}`,
        );
      }
    } finally {
      this.sink.destroy();
    }
    return { position: this.confirmed, ...this.counts };
  }

  /** Sends entries until the log is exhausted (not following) or the signal aborts. */
  private async pump(): Promise<void> {
    const backoff = this.options.backoffMs ?? { min: 250, max: 30_000 };
    let wait = backoff.min;
    let outage = false;
    while (!this.signal.aborted) {
      if (!this.sink.alive) {
        if (this.sent.seq > this.confirmed.seq)
          this.options.notice(
            `lost the connection to ${this.options.target.url}; entries after seq ${this.confirmed.seq} are sent again once it is back`,
          );
        this.sink.destroy();
        this.sent = this.confirmed;
        this.inflight = [];
        try {
          await this.sink.open();
          if (outage) this.options.notice(`reconnected to ${this.options.target.url}`);
          this.counts.reconnects += outage ? 1 : 0;
          outage = false;
          wait = backoff.min;
        } catch (error) {
          if (!outage)
            this.options.notice(`${(error as Error).message} Retrying with backoff; nothing is skipped.`);
          outage = true;
          await sleep(wait, undefined, { signal: this.signal }).catch(() => {});
          wait = Math.min(wait * 2, backoff.max);
          continue;
        }
      }
      const batch = await readAfter(this.options.auditPath, this.sent, this.ino);
      if (batch.replaced)
        throw new ExportError(
          'EXPORT_LOG_DIVERGED',
          `The audit log ${this.options.auditPath} was replaced or cut short after seq ${this.sent.seq} was read for export. If you moved it aside on purpose, export the new log from its first entry with: ringfence audit export --to ${this.options.target.url} --new-log`,
        );
      this.ino = batch.ino;
      if (batch.lines.length > 0) await this.send(batch.lines);
      await this.promote();
      if (batch.broken) {
        await this.finish();
        throw batch.broken;
      }
      if (this.sink.alive && this.anchorDue()) await this.anchor();
      if (batch.lines.length === 0) {
        if (!this.following()) return;
        await sleep(this.options.pollMs ?? 200, undefined, { signal: this.signal }).catch(() => {});
      }
    }
  }

  private following(): boolean {
    const follow = this.options.follow;
    return typeof follow === 'object' ? !follow.aborted : follow === true;
  }

  private async send(lines: readonly SourceLine[]): Promise<void> {
    if (this.sent.seq === 0) this.log = lines[0]!.hash;
    const frames = lines.map((line) => this.frameOf(line));
    try {
      await this.sink.write(frames);
    } catch {
      return; // not alive any more: the next round reconnects and sends from the confirmed position
    }
    const last = lines[lines.length - 1]!;
    for (const line of lines) if (line.seq <= this.highest) this.counts.resent++;
    this.highest = Math.max(this.highest, last.seq);
    this.counts.sent += lines.length;
    this.sent = { seq: last.seq, hash: last.hash, offset: last.end, ...(this.log ? { log: this.log } : {}) };
    if (this.sink.durable) this.confirmed = this.sent;
    else this.inflight.push({ position: this.sent, at: Date.now() });
  }

  private frameOf(line: SourceLine): Buffer {
    const type = typeof line.value.type === 'string' ? line.value.type : 'unknown';
    const refs = (line.value.refs ?? {}) as Record<string, unknown>;
    const warning = refs.allowed === false || refs.is_error === true;
    const header = { ts: String(line.value.ts), host: this.host, msgid: type, warning };
    if (this.options.format === 'ringfence') return frame(this.options.target.framing, header, line.raw);
    const shape = checkEntryShape(line.value);
    if (!shape.ok)
      throw new ExportError(
        'EXPORT_LOG_BROKEN',
        `Entry seq ${line.seq} of ${this.options.auditPath} does not have the documented shape (${shape.message}); nothing after seq ${line.seq - 1} is exported. Run: ringfence audit verify`,
      );
    const event = ocsfEvent(shape.entry, {
      seq: line.seq,
      hash: line.hash,
      log: this.log!,
      host: this.host,
      version: this.options.version,
    });
    return frame(this.options.target.framing, header, JSON.stringify(event));
  }

  /** Entries that stayed `holdMs` on a live connection count as delivered. */
  private async promote(): Promise<void> {
    if (!this.sink.durable && this.sink.alive) {
      const before = Date.now() - (this.options.holdMs ?? 2_000);
      while (this.inflight.length > 0 && this.inflight[0]!.at <= before)
        this.confirmed = this.inflight.shift()!.position;
    }
    await this.save();
  }

  private async save(force = false): Promise<void> {
    if (!force && this.confirmed.seq === this.saved.seq) return;
    await savePosition(this.path, this.confirmed, {
      target: this.options.target.url,
      format: this.options.format,
    });
    this.saved = this.confirmed;
  }

  private anchorDue(): boolean {
    const interval = this.options.anchorIntervalMs;
    return interval > 0 && this.sent.seq > this.anchoredSeq && Date.now() - this.lastAnchorAt >= interval;
  }

  private async anchor(): Promise<void> {
    if (this.log === undefined || this.sent.seq === 0) return;
    const body = anchorRecord({
      log: this.log,
      seq: this.sent.seq,
      hash: this.sent.hash,
      ts: new Date().toISOString(),
      host: this.host,
    });
    const ts = new Date().toISOString();
    try {
      await this.sink.write([
        frame(
          this.options.target.framing,
          { ts, host: this.host, msgid: 'ringfence.anchor', warning: false },
          body,
        ),
      ]);
    } catch {
      return;
    }
    this.anchoredSeq = this.sent.seq;
    this.lastAnchorAt = Date.now();
    this.counts.anchors++;
  }

  /** The head goes out once more, then the stream ends; true when the collector confirmed it. */
  private async finish(): Promise<boolean> {
    if (!this.sink.alive)
      return this.signal.aborted || (this.sent.seq === this.confirmed.seq && this.sink.durable);
    if (this.sent.seq > 0) await this.anchor();
    const confirmed = await this.sink.finish(5_000);
    if (confirmed) {
      this.confirmed = this.sent;
      this.inflight = [];
    }
    await this.save();
    return confirmed;
  }
}

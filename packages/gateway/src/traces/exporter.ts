import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { TraceExportError } from './errors.js';
import { type ExportScope, encodeTraceRequest } from './otlp.js';
import type { FinishedSpan } from './span.js';

export interface BatchSettings {
  /** OTEL_BSP_SCHEDULE_DELAY: how long a span may wait for its batch (ms). */
  readonly delayMs: number;
  /** OTEL_BSP_MAX_QUEUE_SIZE: spans held at most; past it new spans are dropped (counted). */
  readonly maxQueue: number;
  /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans in one request at most. */
  readonly maxBatch: number;
  /** OTEL_EXPORTER_OTLP_(TRACES_)TIMEOUT: one request's time at most (ms). */
  readonly timeoutMs: number;
}

export interface ExportTarget {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
}

/** How often at most the exporter writes to stderr about spans it could not send. */
export const REPORT_INTERVAL_MS = 60_000;

/**
 * Finished spans are queued (bounded) and sent in batches from a timer, one request at a time: a
 * call only pushes onto an array. Nothing here waits on the network for a call, throws into it,
 * or keeps the process alive (the timer is unref'd). A batch the collector refused or never
 * answered is dropped, not retried: the spans are counted and said on stderr, at most once a
 * minute, without the headers (they may hold a collector's key).
 */
export class BatchExporter {
  private queue: FinishedSpan[] = [];
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<void> | undefined;
  private lost = 0;
  private lastReason = '';
  private lastReport = Number.NEGATIVE_INFINITY;
  /** Spans exported so far (tests, and `flush` to know it is done). */
  exported = 0;

  constructor(
    private readonly target: ExportTarget,
    private readonly scope: ExportScope,
    private readonly settings: BatchSettings,
    private readonly log: (line: string) => void,
    private readonly send: (body: Uint8Array) => Promise<void> = (body) =>
      post(target, body, settings.timeoutMs),
  ) {}

  readonly add = (span: FinishedSpan): void => {
    if (this.queue.length >= this.settings.maxQueue) {
      this.failed(1, `the queue of ${this.settings.maxQueue} spans was full`);
      return;
    }
    this.queue.push(span);
    if (this.queue.length >= this.settings.maxBatch) this.schedule(0);
    else this.schedule(this.settings.delayMs);
  };

  private schedule(ms: number): void {
    if (this.timer && ms > 0) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.exportOnce();
    }, ms);
    this.timer.unref();
  }

  private async exportOnce(): Promise<void> {
    // One request at a time; the one after picks up what queued meanwhile.
    if (this.inFlight) return;
    const batch = this.queue.splice(0, this.settings.maxBatch);
    if (batch.length === 0) return;
    this.inFlight = this.send(encodeTraceRequest(this.scope, batch))
      .then(
        () => {
          this.exported += batch.length;
        },
        (error: unknown) => this.failed(batch.length, (error as Error).message),
      )
      .finally(() => {
        this.inFlight = undefined;
        if (this.queue.length > 0)
          this.schedule(this.queue.length >= this.settings.maxBatch ? 0 : this.settings.delayMs);
      });
    await this.inFlight;
  }

  private failed(count: number, reason: string): void {
    this.lost += count;
    this.lastReason = reason;
    const now = Date.now();
    if (now - this.lastReport < REPORT_INTERVAL_MS) return;
    this.lastReport = now;
    this.log(
      `ringfence: traces: ${this.lost} span(s) could not be exported to ${shownUrl(this.target.url)} (${this.lastReason}); calls go on untouched. Check the collector and OTEL_EXPORTER_OTLP_* settings (docs/operations.md); this is said at most once a minute.`,
    );
    this.lost = 0;
  }

  /** Send what is queued, waiting at most `ms` (gateway shutdown). */
  async flush(ms = 2_000): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    const deadline = Date.now() + ms;
    const drain = async () => {
      while ((this.queue.length > 0 || this.inFlight) && Date.now() < deadline) {
        if (this.inFlight) await this.inFlight;
        else await this.exportOnce();
      }
    };
    let timeout: NodeJS.Timeout | undefined;
    await Promise.race([
      drain(),
      new Promise<void>((resolve) => {
        timeout = setTimeout(resolve, ms);
        timeout.unref();
      }),
    ]);
    clearTimeout(timeout);
  }
}

/** The collector's URL as said on stderr: no user or password. */
export function shownUrl(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`;
}

function post(target: ExportTarget, body: Uint8Array, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const send = target.url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target.url,
      {
        method: 'POST',
        headers: {
          ...target.headers,
          'content-type': 'application/x-protobuf',
          'content-length': String(body.length),
        },
        timeout: timeoutMs,
      },
      (res) => {
        // The answer's body is read and dropped (an ExportTraceServiceResponse, or an error text).
        res.resume();
        res.on('end', () => {
          const status = res.statusCode ?? 0;
          if (status >= 200 && status < 300) resolve();
          else reject(new TraceExportError('EXPORT_REFUSED', `the collector answered HTTP ${status}`));
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new TraceExportError('EXPORT_TIMEOUT', `no answer within ${timeoutMs} ms`)),
    );
    req.on('error', (error) =>
      reject(
        error instanceof TraceExportError
          ? error
          : new TraceExportError(
              'EXPORT_UNREACHABLE',
              (error as NodeJS.ErrnoException).code ?? error.message,
            ),
      ),
    );
    req.end(body);
  });
}

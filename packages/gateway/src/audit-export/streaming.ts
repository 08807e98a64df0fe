import { setTimeout as sleep } from 'node:timers/promises';
import { ExportError } from './errors.js';
import { exportAuditLog } from './exporter.js';
import type { ExportSinkSettings } from './settings.js';

const CLOSE_DRAIN_MS = 5_000;

export interface AuditStreaming {
  /** Sends the chain head once more, ends each stream, and keeps what was acknowledged. */
  close(): Promise<void>;
}

/**
 * `mcp serve`'s export: every sink of `audit-export.json` followed in the background while the
 * gateway runs. It reads the log file behind the writer, so a call never waits for a collector;
 * a collector outage is retried with backoff and resumes from the position in the home. When
 * another process already exports a sink (another gateway on the same home, `audit export
 * --follow`), this one waits and takes over when it stops.
 */
export function startAuditStreaming(options: {
  readonly home: string;
  readonly auditPath: string;
  readonly sinks: readonly ExportSinkSettings[];
  readonly report: (line: string) => void;
}): AuditStreaming {
  const controller = new AbortController();
  // Closing first stops following: what was written by then still goes out, then the last anchor.
  const stopFollowing = new AbortController();
  const runs = options.sinks.map(async (sink) => {
    const say = (message: string) =>
      options.report(`ringfence: audit export to ${sink.target.url}: ${message}`);
    let waiting = false;
    while (!controller.signal.aborted) {
      try {
        await exportAuditLog(
          {
            auditPath: options.auditPath,
            home: options.home,
            target: sink.target,
            format: sink.format,
            sinkId: sink.id,
            follow: stopFollowing.signal,
            anchorIntervalMs: sink.anchorIntervalMs,
            notice: say,
          },
          controller.signal,
        );
        return;
      } catch (error) {
        if (error instanceof ExportError && error.code === 'EXPORT_BUSY') {
          if (!waiting)
            say('another ringfence process exports this sink; this gateway takes over when it stops');
          waiting = true;
          const either = AbortSignal.any([controller.signal, stopFollowing.signal]);
          await sleep(5_000, undefined, { signal: either }).catch(() => {});
          if (stopFollowing.signal.aborted) return;
          continue;
        }
        // The log diverged or broke: exporting on would ship a history the collector cannot
        // chain; the person decides (the message says how).
        say(`stopped: ${(error as Error).message}`);
        return;
      }
    }
  });
  return {
    close: async () => {
      stopFollowing.abort();
      const drained = Promise.all(runs);
      // A collector that is down at close does not hold the gateway's exit: the position in the
      // home keeps what was not acknowledged, and the next export sends it.
      const timer = setTimeout(() => controller.abort(), CLOSE_DRAIN_MS);
      await drained;
      clearTimeout(timer);
    },
  };
}

import { rendered } from '../text/render.js';

/** MCP log levels, least severe first. */
export const LOG_LEVELS = [
  'debug',
  'info',
  'notice',
  'warning',
  'error',
  'critical',
  'alert',
  'emergency',
] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export const isLogLevel = (value: unknown): value is LogLevel =>
  (LOG_LEVELS as readonly unknown[]).includes(value);

/** Whether a message at `level` passes a client that asked for `threshold` and above. */
export const logPasses = (level: LogLevel, threshold: LogLevel | undefined): boolean =>
  threshold === undefined || LOG_LEVELS.indexOf(level) >= LOG_LEVELS.indexOf(threshold);

/** A server's log message as the gateway relays it to clients. */
export interface RelayedLog {
  readonly server: string;
  readonly params: { level: LogLevel; logger: string; data: string };
}

/**
 * The logger of the gateway's own notices to clients. It is the reserved server name
 * (`RESERVED_SERVER_NAMES`) with nothing after it, so no relayed logger can equal it: those are
 * always `SERVER` or `SERVER/…`, and no server may be called `ringfence`.
 */
export const GATEWAY_LOGGER = 'ringfence';

/** Longest data text relayed; a server's log line is for a person reading along, not a channel. */
export const LOG_DATA_MAX = 2000;

/**
 * A server's `notifications/message` as clients see it: the logger names the server (`SERVER`,
 * or `SERVER/its-logger`, rendered as a name) so no server can pass its words off as another's or
 * the gateway's (`GATEWAY_LOGGER`), and the data, whatever JSON it was, becomes one line of
 * rendered text of bounded length: a newline in it cannot start what looks like another message.
 * Undefined when the params are not a log message.
 */
export function relayedLog(server: string, params: unknown): RelayedLog | undefined {
  if (typeof params !== 'object' || params === null || Array.isArray(params)) return undefined;
  const { level, logger, data } = params as { level?: unknown; logger?: unknown; data?: unknown };
  if (!isLogLevel(level)) return undefined;
  let text: string;
  try {
    text = typeof data === 'string' ? data : (JSON.stringify(data) ?? String(data));
  } catch {
    text = String(data);
  }
  const clipped =
    text.length > LOG_DATA_MAX ? `${text.slice(0, LOG_DATA_MAX)}… (${text.length} characters)` : text;
  const own =
    typeof logger === 'string' && logger.length > 0 ? `/${rendered(logger.slice(0, 100), 'name')}` : '';
  return { server, params: { level, logger: `${server}${own}`, data: rendered(clipped, 'line') } };
}

export interface LogRateOptions {
  /** Messages a server may send at once. */
  readonly burst: number;
  /** Messages per second it earns back. */
  readonly perSecond: number;
  readonly now?: () => number;
}

export const DEFAULT_LOG_RATE: LogRateOptions = { burst: 20, perSecond: 20 };

/**
 * One server's log budget (a token bucket): past it messages are dropped, and the next message
 * that fits (or `flush`) is preceded by one notice saying how many were dropped.
 */
export class LogRateLimit {
  private tokens: number;
  private last: number;
  private dropped = 0;
  private readonly now: () => number;

  constructor(private readonly options: LogRateOptions = DEFAULT_LOG_RATE) {
    this.now = options.now ?? Date.now;
    this.tokens = options.burst;
    this.last = this.now();
  }

  /**
   * Whether this message may go, and how many were dropped before it (to be reported first).
   */
  take(): { pass: boolean; droppedBefore: number } {
    const now = this.now();
    this.tokens = Math.min(
      this.options.burst,
      this.tokens + ((now - this.last) / 1000) * this.options.perSecond,
    );
    this.last = now;
    if (this.tokens < 1) {
      this.dropped++;
      return { pass: false, droppedBefore: 0 };
    }
    this.tokens--;
    const droppedBefore = this.dropped;
    this.dropped = 0;
    return { pass: true, droppedBefore };
  }

  /** How many were dropped since the last report, now reported. */
  flush(): number {
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped;
  }
}

/**
 * The notice standing for dropped messages: the gateway's words, under the gateway's logger,
 * sent to whoever would have received the server's messages.
 */
export function droppedNotice(server: string, count: number, options: LogRateOptions): RelayedLog {
  return {
    server,
    params: {
      level: 'warning',
      logger: GATEWAY_LOGGER,
      data: `ringfence dropped ${count} log message(s) from ${server}: it sent more than ${options.burst} at once or ${options.perSecond} per second.`,
    },
  };
}

/**
 * Relays each server's log messages through its own rate limit. Drops are reported once, before
 * the next message that passes or within a second of the last drop, whichever comes first.
 */
export class LogRelay {
  private readonly limits = new Map<string, LogRateLimit>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    private readonly emit: (log: RelayedLog) => void,
    private readonly options: LogRateOptions = DEFAULT_LOG_RATE,
  ) {}

  relay(server: string, params: unknown): void {
    const log = relayedLog(server, params);
    if (!log) return;
    let limit = this.limits.get(server);
    if (!limit) {
      limit = new LogRateLimit(this.options);
      this.limits.set(server, limit);
    }
    const { pass, droppedBefore } = limit.take();
    if (droppedBefore > 0) this.emit(droppedNotice(server, droppedBefore, this.options));
    if (pass) {
      this.emit(log);
      return;
    }
    if (this.timers.has(server)) return;
    const timer = setTimeout(() => {
      this.timers.delete(server);
      const count = limit.flush();
      if (count > 0) this.emit(droppedNotice(server, count, this.options));
    }, 1000);
    timer.unref();
    this.timers.set(server, timer);
  }

  close(): void {
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
  }
}

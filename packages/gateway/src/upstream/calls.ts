import { randomBytes } from 'node:crypto';
import type { CallProgress } from '../ports/upstream.js';
import { rendered } from '../text/render.js';

/**
 * Progress goes to the caller at most this often per call once a burst is spent; the latest one
 * waits for its turn. The burst lets the few steps of a short call through whole (a server that
 * reports 0, 50 and 100 at once, then answers, is seen as it sent them).
 */
export const PROGRESS_MIN_INTERVAL_MS = 100;
export const PROGRESS_BURST = 10;
/**
 * Progress text is for people and is the server's: no longer than this (in UTF-16 units, cut as
 * it came, never inside a pair), then rendered once as one line.
 */
export const PROGRESS_MESSAGE_MAX = 500;

/** How one call ends when it does not end with the server's answer. */
export interface CallEndings {
  /** No answer and no progress for `idleMs`. */
  idle(): Error;
  /** `ceilingMs` since the call was sent. */
  ceiling(): Error;
  /** The caller's signal aborted. */
  cancelled(): Error;
}

export interface CallRun {
  readonly idleMs: number;
  readonly ceilingMs: number;
  readonly endings: CallEndings;
  readonly signal?: AbortSignal;
  readonly onProgress?: (progress: CallProgress) => void;
}

interface Entry {
  /** Settles the call with this error (once) and cancels the upstream request. */
  fail(error: Error): void;
  progress(params: Record<string, unknown>): boolean;
  /** When (Date.now()) the call ends for want of an answer or progress; moved on by progress. */
  idleAt: number;
  /** When the call ends whatever it sent. */
  readonly ceilingAt: number;
  readonly endings: CallEndings;
}

/** Random bytes are drawn this many tokens at a time (one call into the CSPRNG, not one per call). */
const TOKENS_PER_DRAW = 64;
const TOKEN_BYTES = 16;

/**
 * The calls in flight on one upstream connection, each under a progress token of the gateway's
 * own: 128 random bits, so a server cannot name a call it was not given, and the caller's token
 * never leaves the gateway (each caller gets its own back). Each call has its deadlines (the idle
 * one moved on by progress, bounded by a ceiling), follows its caller's cancel, and can be failed
 * at once by the transport (its answer stream broke) or all together (the connection or the
 * container is gone). The deadlines of all calls share one timer, set for the earliest: a call
 * that starts or makes progress arms nothing (its deadline is later than the one the timer waits
 * for), and a call that ends leaves the timer to find nothing due.
 */
export class InFlightCalls {
  private readonly calls = new Map<string, Entry>();
  private timer: NodeJS.Timeout | undefined;
  /** When the timer fires (Date.now()); Infinity when no timer is set. */
  private timerAt = Number.POSITIVE_INFINITY;
  private random = Buffer.alloc(0);
  private randomOffset = 0;

  get size(): number {
    return this.calls.size;
  }

  private token(): string {
    if (this.randomOffset >= this.random.length) {
      this.random = randomBytes(TOKEN_BYTES * TOKENS_PER_DRAW);
      this.randomOffset = 0;
    }
    const token = `rf-${this.random.toString('hex', this.randomOffset, this.randomOffset + TOKEN_BYTES)}`;
    // Used bytes are wiped: no token can be read back from memory kept for later ones.
    this.random.fill(0, this.randomOffset, this.randomOffset + TOKEN_BYTES);
    this.randomOffset += TOKEN_BYTES;
    return token;
  }

  /** The timer waits for `at` at the latest. */
  private armBy(at: number): void {
    if (at >= this.timerAt) {
      // Held while calls are in flight, as each call's own timers were; released when none are.
      this.timer?.ref();
      return;
    }
    clearTimeout(this.timer);
    this.timerAt = at;
    this.timer = setTimeout(() => this.expire(), Math.max(0, at - Date.now()));
  }

  /** The timer fired: end the calls whose deadline has come, and wait for the next one. */
  private expire(): void {
    this.timer = undefined;
    this.timerAt = Number.POSITIVE_INFINITY;
    const now = Date.now();
    let next = Number.POSITIVE_INFINITY;
    for (const entry of [...this.calls.values()]) {
      if (entry.ceilingAt <= now) entry.fail(entry.endings.ceiling());
      else if (entry.idleAt <= now) entry.fail(entry.endings.idle());
      else next = Math.min(next, entry.idleAt, entry.ceilingAt);
    }
    if (next !== Number.POSITIVE_INFINITY && this.calls.size > 0) this.armBy(next);
  }

  /**
   * `send(token, signal)` is the upstream request: it must carry `token` as its progress token and
   * cancel itself when `signal` aborts (the SDK sends `notifications/cancelled`). The returned
   * promise settles once: with the answer, with the request's own failure, or with the first of
   * the endings and `fail`/`failAll`, whichever comes first.
   */
  run<T>(send: (token: string, signal: AbortSignal) => Promise<T>, options: CallRun): Promise<T> {
    if (options.signal?.aborted) return Promise.reject(options.endings.cancelled());
    const token = this.token();
    const upstream = new AbortController();
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      let lastProgress = Number.NEGATIVE_INFINITY;
      // Made at the first progress: most calls have none.
      let relay: ReturnType<typeof progressRelay> | undefined;

      const finish = () => {
        settled = true;
        relay?.stop();
        options.signal?.removeEventListener('abort', onAbort);
        this.calls.delete(token);
        if (this.calls.size === 0) this.timer?.unref();
      };
      const fail = (error: Error) => {
        if (settled) return;
        finish();
        reject(error);
        upstream.abort(error);
      };
      const onAbort = () => fail(options.endings.cancelled());
      options.signal?.addEventListener('abort', onAbort, { once: true });

      const now = Date.now();
      const entry: Entry = {
        fail,
        progress: (params) => {
          const checked = checkProgress(params, lastProgress);
          if (!checked || settled) return false;
          lastProgress = checked.progress;
          entry.idleAt = Date.now() + options.idleMs;
          relay ??= progressRelay(options.onProgress);
          relay.push(checked);
          return true;
        },
        idleAt: now + options.idleMs,
        ceilingAt: now + options.ceilingMs,
        endings: options.endings,
      };
      this.calls.set(token, entry);
      this.armBy(Math.min(entry.idleAt, entry.ceilingAt));

      let sent: Promise<T>;
      try {
        sent = send(token, upstream.signal);
      } catch (error) {
        sent = Promise.reject(error);
      }
      sent.then(
        (value) => {
          if (settled) return;
          // The latest progress still waiting goes before the answer, never after it.
          relay?.flush();
          finish();
          resolve(value);
        },
        (error: unknown) => {
          if (settled) return;
          finish();
          reject(error);
        },
      );
    });
  }

  /**
   * A progress notification from the server. False (dropped) for a token that is not a call in
   * flight here, or for a value that is not finite or does not increase.
   */
  progress(token: unknown, params: Record<string, unknown>): boolean {
    if (typeof token !== 'string') return false;
    return this.calls.get(token)?.progress(params) ?? false;
  }

  /** End one call at once (its answer stream broke); false if it is not in flight. */
  fail(token: string, error: Error): boolean {
    const entry = this.calls.get(token);
    entry?.fail(error);
    return entry !== undefined;
  }

  /** End every call in flight at once: the connection or the server is gone. */
  failAll(error: Error): void {
    for (const entry of [...this.calls.values()]) entry.fail(error);
  }
}

/** A notification's progress, total and message, checked; undefined when it must be dropped. */
function checkProgress(params: Record<string, unknown>, last: number): CallProgress | undefined {
  const { progress, total, message } = params;
  if (typeof progress !== 'number' || !Number.isFinite(progress) || progress <= last) return undefined;
  if (total !== undefined && (typeof total !== 'number' || !Number.isFinite(total))) return undefined;
  if (message !== undefined && typeof message !== 'string') return undefined;
  return {
    progress,
    ...(total !== undefined ? { total } : {}),
    ...(message !== undefined ? { message: progressText(message) } : {}),
  };
}

/**
 * A progress message as a client shows it: the server's text cut first (so no escape is ever cut
 * in half, and the cap counts what the server sent), on a code point boundary, then rendered once,
 * in line mode: a progress message is one status line, and a newline in it could begin a line
 * that looks like the client's own.
 */
export function progressText(message: string): string {
  if (message.length <= PROGRESS_MESSAGE_MAX) return rendered(message, 'line');
  let end = PROGRESS_MESSAGE_MAX;
  const last = message.charCodeAt(end - 1);
  const next = message.charCodeAt(end);
  // A high surrogate whose low half is past the cut: the pair goes whole, after it.
  if (last >= 0xd800 && last <= 0xdbff && next >= 0xdc00 && next <= 0xdfff) end -= 1;
  return `${rendered(message.slice(0, end), 'line')}…`;
}

/**
 * Hands progress to the caller: a burst at once, then at most once per interval; what comes
 * sooner waits, and a newer one replaces it (the caller wants the latest state, not every step).
 * `flush()` hands on the one waiting (the call has its answer, which follows it); nothing is handed
 * on after `stop()`: progress after the answer would reach a request that is over.
 */
function progressRelay(deliver: ((progress: CallProgress) => void) | undefined) {
  let tokens = PROGRESS_BURST;
  let refilled = Date.now();
  let pending: CallProgress | undefined;
  let timer: NodeJS.Timeout | undefined;
  const refill = () => {
    const now = Date.now();
    tokens = Math.min(PROGRESS_BURST, tokens + (now - refilled) / PROGRESS_MIN_INTERVAL_MS);
    refilled = now;
  };
  const send = (progress: CallProgress) => {
    try {
      deliver?.(progress);
    } catch {
      // The caller's side failing to pass progress on must not fail the call.
    }
  };
  const stop = () => {
    clearTimeout(timer);
    timer = undefined;
    pending = undefined;
  };
  return {
    push(progress: CallProgress) {
      if (!deliver) return;
      refill();
      if (tokens >= 1 && !timer) {
        tokens--;
        return send(progress);
      }
      pending = progress;
      timer ??= setTimeout(
        () => {
          timer = undefined;
          refill();
          tokens = Math.max(0, tokens - 1);
          const next = pending;
          pending = undefined;
          if (next) send(next);
        },
        Math.max(0, (1 - tokens) * PROGRESS_MIN_INTERVAL_MS),
      );
    },
    flush() {
      const next = pending;
      stop();
      if (next) send(next);
    },
    stop,
  };
}

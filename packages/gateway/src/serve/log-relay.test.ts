import { afterEach, describe, expect, it, vi } from 'vitest';
import { LOG_DATA_MAX, LogRateLimit, LogRelay, type RelayedLog, relayedLog } from './log-relay.js';

describe('relayedLog', () => {
  it('names the server as the logger, keeping its own logger after a slash', () => {
    expect(relayedLog('docs', { level: 'info', data: 'hi' })?.params).toEqual({
      level: 'info',
      logger: 'docs',
      data: 'hi',
    });
    expect(relayedLog('docs', { level: 'error', logger: 'ringfence', data: 'x' })?.params.logger).toBe(
      'docs/ringfence',
    );
  });

  it('makes the data printable text of bounded length, whatever JSON it was', () => {
    const log = relayedLog('docs', { level: 'warning', data: { a: 'b\u001b]52;c;AAAA\u0007', n: 1 } });
    expect(log?.params.data).toBe('{"a":"b\\u001b]52;c;AAAA\\u0007","n":1}');
    expect(log?.params.data).not.toMatch(/[\u0000-\u001f]/);
    const long = relayedLog('docs', { level: 'info', data: 'x'.repeat(LOG_DATA_MAX * 3) });
    expect(long?.params.data).toBe(`${'x'.repeat(LOG_DATA_MAX)}… (${LOG_DATA_MAX * 3} characters)`);
    expect(relayedLog('docs', { level: 'info', logger: '\u202eevil', data: 1 })?.params.logger).toBe(
      'docs/\\u{202E}evil',
    );
  });

  it('ignores what is not a log message', () => {
    expect(relayedLog('docs', { level: 'loud', data: 'x' })).toBeUndefined();
    expect(relayedLog('docs', 'text')).toBeUndefined();
    expect(relayedLog('docs', null)).toBeUndefined();
  });
});

describe('the per-server log rate limit', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('lets a burst of 20 through, drops the rest, and earns 20 a second back', () => {
    let now = 0;
    const limit = new LogRateLimit({ burst: 20, perSecond: 20, now: () => now });
    const first = Array.from({ length: 25 }, () => limit.take());
    expect(first.filter((t) => t.pass)).toHaveLength(20);
    now += 100; // two tokens back
    expect(limit.take()).toEqual({ pass: true, droppedBefore: 5 });
    expect(limit.take()).toEqual({ pass: true, droppedBefore: 0 });
    expect(limit.take().pass).toBe(false);
    now += 10_000;
    expect(Array.from({ length: 21 }, () => limit.take()).filter((t) => t.pass)).toHaveLength(20);
  });

  it('relays each server on its own budget and reports drops once, before the next message or within a second', () => {
    vi.useFakeTimers();
    const out: RelayedLog[] = [];
    const relay = new LogRelay((log) => out.push(log), { burst: 3, perSecond: 1 });
    for (let i = 0; i < 10; i++) relay.relay('noisy', { level: 'info', data: `n${i}` });
    relay.relay('quiet', { level: 'info', data: 'q' });
    expect(out.map((l) => `${l.server}:${l.params.data}`)).toEqual([
      'noisy:n0',
      'noisy:n1',
      'noisy:n2',
      'quiet:q',
    ]);
    vi.advanceTimersByTime(1000);
    expect(out.slice(4).map((l) => l.params)).toEqual([
      {
        level: 'warning',
        logger: 'noisy/ringfence',
        data: 'ringfence dropped 7 log message(s) from noisy: it sent more than 3 at once or 1 per second.',
      },
    ]);
    // Reported once: nothing more is said about those seven.
    vi.advanceTimersByTime(5000);
    relay.relay('noisy', { level: 'info', data: 'later' });
    expect(out.slice(5).map((l) => l.params.data)).toEqual(['later']);
    relay.close();
  });
});

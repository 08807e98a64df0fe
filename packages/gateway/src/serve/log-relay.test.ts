import { afterEach, describe, expect, it, vi } from 'vitest';
import { RESERVED_SERVER_NAMES, SERVER_NAME } from '../config/servers.js';
import { hostileText } from '../text/__fixtures__/hostile-text.js';
import { decodeRendered } from '../text/decode.js';
import {
  GATEWAY_LOGGER,
  LOG_DATA_MAX,
  LogRateLimit,
  LogRelay,
  type RelayedLog,
  relayedLog,
} from './log-relay.js';

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

  it("never produces the gateway's own logger, nor one that does not begin with the server's name", () => {
    // The gateway's logger is a name no server may have, with nothing after it.
    expect(RESERVED_SERVER_NAMES.has(GATEWAY_LOGGER)).toBe(true);
    expect(SERVER_NAME.test(GATEWAY_LOGGER)).toBe(true);
    const loggers = [
      'ringfence',
      '',
      '/ringfence',
      '../ringfence',
      'ringfence\u202e',
      '\u202eecnefgnir',
      '\u200bringfence',
      'ringfence\n',
      '\rringfence',
      'ｒｉｎｇｆｅｎｃｅ',
      'ringfence ',
      ' ringfence',
      '\u0000',
    ];
    const random = hostileText(77, 6);
    for (let i = 0; i < 2000; i++) loggers.push(random.next());
    for (const server of ['docs', 'ringfence-x', 'a']) {
      for (const logger of loggers) {
        const relayed = relayedLog(server, { level: 'info', logger, data: 'x' })!.params.logger;
        expect(relayed).not.toBe(GATEWAY_LOGGER);
        expect(relayed === server || relayed.startsWith(`${server}/`), relayed).toBe(true);
        // The server's part is one rendered name: nothing hidden, no space, no line break.
        expect(relayed).not.toMatch(/[\s\u0000-\u001f\u007f-\u009f\u200b\u202e]/);
        if (logger.length > 0 && logger.length <= 100)
          expect(decodeRendered(relayed.slice(server.length + 1))).toBe(logger);
      }
    }
  });

  it('relays data as one line, so a newline in it cannot begin what looks like another message', () => {
    const random = hostileText(78, 10);
    for (let i = 0; i < 2000; i++) {
      const source = random.next();
      const data = relayedLog('docs', { level: 'info', data: source })!.params.data;
      expect(data).not.toMatch(/[\n\r\u2028\u2029\u0085\u000b\u000c\u001b]/);
      expect(decodeRendered(data)).toBe(source);
    }
    expect(
      relayedLog('docs', { level: 'info', data: 'ok\n[warning] ringfence: all clear' })!.params.data,
    ).toBe('ok\\u{A}[warning] ringfence: all clear');
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
        logger: GATEWAY_LOGGER,
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

import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallProgress } from '../ports/upstream.js';
import { decodeRendered } from '../text/decode.js';
import { type CallRun, InFlightCalls, PROGRESS_MESSAGE_MAX } from './calls.js';

const endings = {
  idle: () => new Error('idle'),
  ceiling: () => new Error('ceiling'),
  cancelled: () => new Error('cancelled'),
};

/** A call whose upstream request settles only when the test says, recording what it was given. */
function pending(calls: InFlightCalls, options: Partial<CallRun> = {}) {
  let token = '';
  let upstreamSignal: AbortSignal | undefined;
  let answer: (value: unknown) => void = () => {};
  let refuse: (error: Error) => void = () => {};
  const progress: CallProgress[] = [];
  const settled = calls.run(
    (t, signal) => {
      token = t;
      upstreamSignal = signal;
      return new Promise((resolve, reject) => {
        answer = resolve;
        refuse = reject;
      });
    },
    { idleMs: 60_000, ceilingMs: 600_000, endings, onProgress: (p) => progress.push(p), ...options },
  );
  settled.catch(() => {});
  return {
    settled,
    progress,
    get token() {
      return token;
    },
    get upstreamSignal() {
      return upstreamSignal!;
    },
    answer: (value: unknown) => answer(value),
    refuse: (error: Error) => refuse(error),
  };
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe('InFlightCalls: tokens', () => {
  it('gives each call its own unguessable token and forgets it once the call settles', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    const b = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    expect(a.token).toMatch(/^rf-[0-9a-f]{32}$/);
    expect(b.token).not.toBe(a.token);
    expect(calls.size).toBe(2);
    a.answer({ ok: 1 });
    await expect(a.settled).resolves.toEqual({ ok: 1 });
    expect(calls.size).toBe(1);
    expect(calls.progress(a.token, { progress: 1 })).toBe(false);
  });

  it("drops progress for a token it did not give, and never hands it to another call's caller", async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    for (const forged of [
      0,
      1,
      2,
      '1',
      'rf-00000000000000000000000000000000',
      a.token.toUpperCase(),
      null,
      {},
    ])
      expect(calls.progress(forged, { progress: 5 })).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.progress).toEqual([]);
    expect(calls.progress(a.token, { progress: 5 })).toBe(true);
    expect(a.progress).toEqual([{ progress: 5 }]);
  });

  it('drops progress that does not increase or is not a finite number, and makes its message printable', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.progress(a.token, { progress: 2, total: 10, message: 'half\u001b[2Jway\u202e' })).toBe(true);
    await vi.advanceTimersByTimeAsync(1_000);
    for (const bad of [
      { progress: 2 },
      { progress: 1 },
      { progress: Number.NaN },
      { progress: '3' },
      { progress: 3, total: '10' },
      { progress: 3, total: Number.POSITIVE_INFINITY },
      { progress: 3, message: 7 },
    ])
      expect(calls.progress(a.token, bad)).toBe(false);
    expect(calls.progress(a.token, { progress: 3, message: 'm'.repeat(PROGRESS_MESSAGE_MAX + 50) })).toBe(
      true,
    );
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.progress[0]).toEqual({ progress: 2, total: 10, message: 'half\\u{1B}[2Jway\\u{202E}' });
    expect(a.progress[1]?.message).toBe(`${'m'.repeat(PROGRESS_MESSAGE_MAX)}…`);
    expect(a.progress).toHaveLength(2);
  });

  it('cuts a progress message as it came, never inside an escape or a pair, then renders it once as one line', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    const m = 'm'.repeat(PROGRESS_MESSAGE_MAX - 1);
    const sent = [
      // A character shown escaped right at the cut: whole, never `\u{2` cut off.
      `${m}\u202e and more`,
      // A pair across the cut: left out whole, never half of it.
      `${m}\u{1F600} and more`,
      // A newline: one status line (a newline could begin a line that looks like the client's).
      'step 1\n[MCP server "other"] done\r',
      // A backslash before u{ as the server typed it: doubled, so it reads back as typed.
      `${m}\\u{41}`,
    ];
    for (const [i, message] of sent.entries()) {
      expect(calls.progress(a.token, { progress: i + 1, message })).toBe(true);
      await vi.advanceTimersByTimeAsync(1_000);
    }
    expect(a.progress.map((p) => p.message)).toEqual([
      `${m}\\u{202E}…`,
      `${m}…`,
      'step 1\\u{A}[MCP server "other"] done\\u{D}',
      `${m}\\…`,
    ]);
    // Each message reads back, by the documented rule, to the server's text up to the cut.
    for (const [i, shown] of a.progress.map((p) => p.message!).entries()) {
      const source = sent[i]!;
      const decoded = decodeRendered(shown.endsWith('…') ? shown.slice(0, -1) : shown);
      expect(source.startsWith(decoded), shown).toBe(true);
    }
  });

  it('hands on a burst of 10 at once, then at most one every 100 ms, the latest one', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    for (let i = 1; i <= 50; i++) calls.progress(a.token, { progress: i });
    expect(a.progress.map((p) => p.progress)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    await vi.advanceTimersByTimeAsync(100);
    expect(a.progress.map((p) => p.progress).slice(10)).toEqual([50]);
    calls.progress(a.token, { progress: 51 });
    calls.progress(a.token, { progress: 52 });
    await vi.advanceTimersByTimeAsync(100);
    expect(a.progress.map((p) => p.progress).slice(10)).toEqual([50, 52]);
  });

  it('hands on every step of a short call, the one still waiting before the answer, and nothing after it', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    // A server that reports 0, 50 and 100 at once and answers (the conformance suite's check).
    for (const progress of [0, 50, 100]) calls.progress(a.token, { progress, total: 100 });
    expect(a.progress.map((p) => p.progress)).toEqual([0, 50, 100]);
    for (let i = 101; i <= 120; i++) calls.progress(a.token, { progress: i });
    const before = a.progress.length;
    a.answer({});
    await a.settled;
    // The latest waiting one went on with the answer, not after it.
    expect(a.progress.at(-1)?.progress).toBe(120);
    expect(a.progress.length).toBe(before + 1);
    calls.progress(a.token, { progress: 121 });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(a.progress.at(-1)?.progress).toBe(120);
    expect(a.progress.length).toBe(before + 1);
  });
});

describe('InFlightCalls: time, cancel and loss', () => {
  it('without progress a call ends after idleMs and its upstream request is cancelled', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls, { idleMs: 5_000 });
    await vi.advanceTimersByTimeAsync(4_999);
    expect(a.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(a.settled).rejects.toThrow('idle');
    expect(a.upstreamSignal.aborted).toBe(true);
    expect(calls.size).toBe(0);
  });

  it('progress restarts the idle timer, but not the ceiling', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls, { idleMs: 5_000, ceilingMs: 20_000 });
    let sent = 0;
    for (let t = 0; t < 19; t++) {
      await vi.advanceTimersByTimeAsync(1_000);
      if (t % 4 === 0) calls.progress(a.token, { progress: ++sent });
    }
    expect(a.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_000);
    await expect(a.settled).rejects.toThrow('ceiling');
    expect(a.upstreamSignal.aborted).toBe(true);
  });

  it('calls sharing the timer each end at their own deadline, whatever the others do', async () => {
    const calls = new InFlightCalls();
    const long = pending(calls, { idleMs: 10_000 });
    await vi.advanceTimersByTimeAsync(1_000);
    const short = pending(calls, { idleMs: 3_000 });
    const kept = pending(calls, { idleMs: 2_000, ceilingMs: 7_500 });
    const done = pending(calls, { idleMs: 1_000 });
    done.answer('ok');
    await expect(done.settled).resolves.toBe('ok');
    // `kept` makes progress every second: only its ceiling ends it.
    for (let t = 1; t <= 6; t++) {
      await vi.advanceTimersByTimeAsync(1_000);
      calls.progress(kept.token, { progress: t });
      if (t < 3) expect(short.upstreamSignal.aborted).toBe(false);
      else expect(short.upstreamSignal.aborted).toBe(true);
    }
    await expect(short.settled).rejects.toThrow('idle');
    expect(kept.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1_499);
    expect(kept.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(kept.settled).rejects.toThrow('ceiling');
    expect(long.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(10_000 - 8_500 - 1);
    expect(long.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(long.settled).rejects.toThrow('idle');
    expect(calls.size).toBe(0);
  });

  it('a call started after the others had none in flight still gets its deadline', async () => {
    const calls = new InFlightCalls();
    const first = pending(calls, { idleMs: 60_000 });
    first.answer(1);
    await first.settled;
    await vi.advanceTimersByTimeAsync(30_000);
    // The shared timer, still waiting for the first call's deadline, must not be the second's.
    const second = pending(calls, { idleMs: 60_000 });
    await vi.advanceTimersByTimeAsync(59_999);
    expect(second.upstreamSignal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    await expect(second.settled).rejects.toThrow('idle');
  });

  it("follows the caller's cancel, and one already aborted is never sent", async () => {
    const calls = new InFlightCalls();
    const client = new AbortController();
    const a = pending(calls, { signal: client.signal });
    await vi.advanceTimersByTimeAsync(0);
    client.abort();
    await expect(a.settled).rejects.toThrow('cancelled');
    expect(a.upstreamSignal.aborted).toBe(true);

    let sent = false;
    const done = new AbortController();
    done.abort();
    await expect(
      calls.run(
        async () => {
          sent = true;
        },
        { idleMs: 1, ceilingMs: 1, endings, signal: done.signal },
      ),
    ).rejects.toThrow('cancelled');
    expect(sent).toBe(false);
  });

  it('fail() ends one call at once and failAll() every call, each with the reason given', async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    const b = pending(calls);
    const c = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    expect(calls.fail(a.token, new Error('stream broke'))).toBe(true);
    await expect(a.settled).rejects.toThrow('stream broke');
    expect(calls.fail(a.token, new Error('again'))).toBe(false);
    calls.failAll(new Error('connection closed'));
    await expect(b.settled).rejects.toThrow('connection closed');
    await expect(c.settled).rejects.toThrow('connection closed');
    expect(b.upstreamSignal.aborted && c.upstreamSignal.aborted).toBe(true);
    expect(calls.size).toBe(0);
    // The late answer of a call already ended changes nothing.
    b.answer({});
    c.refuse(new Error('late'));
    await expect(b.settled).rejects.toThrow('connection closed');
  });

  it("the request's own failure is the call's failure", async () => {
    const calls = new InFlightCalls();
    const a = pending(calls);
    await vi.advanceTimersByTimeAsync(0);
    a.refuse(new Error('server said no'));
    await expect(a.settled).rejects.toThrow('server said no');
    expect(calls.size).toBe(0);
  });
});

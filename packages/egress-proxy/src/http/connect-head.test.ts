import { describe, expect, it } from 'vitest';
import { ConnectHeadReader, type HeadOutcome, startsConnect } from './connect-head.js';

const CAP = 16 * 1024;

/** Feeds `text` split at the given offsets; returns the first non-null outcome (or null). */
function read(text: string | Buffer, cuts: number[] = [], cap = CAP): HeadOutcome | null {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'latin1') : text;
  const reader = new ConnectHeadReader(cap);
  let from = 0;
  for (const cut of [...cuts, bytes.length]) {
    const outcome = reader.push(bytes.subarray(from, cut));
    from = cut;
    if (outcome !== null) return outcome;
  }
  return null;
}

/** The outcome with the head split into two pieces at every offset, and fed one byte at a time. */
function everySplit(text: string): HeadOutcome[] {
  const outcomes: HeadOutcome[] = [];
  for (let cut = 1; cut < text.length; cut++) outcomes.push(read(text, [cut]) as HeadOutcome);
  outcomes.push(
    read(
      text,
      Array.from({ length: text.length - 1 }, (_, i) => i + 1),
    ) as HeadOutcome,
  );
  return outcomes;
}

const plain = (o: HeadOutcome | null) =>
  o === null ? null : o.kind === 'head' ? { ...o, rest: o.rest.toString('latin1') } : o;

describe('ConnectHeadReader', () => {
  const head = 'CONNECT api.test:443 HTTP/1.1\r\nHost: api.test:443\r\nUser-Agent:  curl/8 \t\r\n\r\n';

  it('reads the target, the headers as received (OWS trimmed) and the bytes after the head', () => {
    expect(plain(read(`${head}\x16\x03\x01early`))).toEqual({
      kind: 'head',
      target: 'api.test:443',
      rawHeaders: ['Host', 'api.test:443', 'User-Agent', 'curl/8'],
      rest: '\x16\x03\x01early',
    });
    expect(plain(read('CONNECT a.test:1 HTTP/1.0\r\n\r\n'))).toMatchObject({
      kind: 'head',
      target: 'a.test:1',
    });
  });

  it('gives the same head whatever way the bytes were split', () => {
    const whole = plain(read(`${head}rest`));
    for (const outcome of everySplit(`${head}rest`)) {
      // Bytes that arrive after the head was complete are the socket's, not the reader's.
      expect({ ...plain(outcome), rest: '' }).toEqual({ ...whole, rest: '' });
    }
    expect(read(head.slice(0, -1))).toBeNull();
  });

  it.each([
    ['lone LF after the request line', 'CONNECT a.test:1 HTTP/1.1\nHost: a\r\n\r\n'],
    ['lone LF after a header', 'CONNECT a.test:1 HTTP/1.1\r\nHost: a\n\r\n'],
    ['lone LF as the end of the head', 'CONNECT a.test:1 HTTP/1.1\r\nHost: a\r\n\n'],
    ['a bare CR inside a value', 'CONNECT a.test:1 HTTP/1.1\r\nX: a\rb\r\n\r\n'],
    ['NUL in the target', 'CONNECT a.test\0:1 HTTP/1.1\r\n\r\n'],
    ['NUL in a value', 'CONNECT a.test:1 HTTP/1.1\r\nX: a\0b\r\n\r\n'],
    ['a control byte in a value', 'CONNECT a.test:1 HTTP/1.1\r\nX: a\x01b\r\n\r\n'],
    ['DEL in a value', 'CONNECT a.test:1 HTTP/1.1\r\nX: a\x7fb\r\n\r\n'],
    ['obs-fold', 'CONNECT a.test:1 HTTP/1.1\r\nX: a\r\n b\r\n\r\n'],
    ['a first header line that starts with a space', 'CONNECT a.test:1 HTTP/1.1\r\n Host: a\r\n\r\n'],
    ['a tab before the colon', 'CONNECT a.test:1 HTTP/1.1\r\nHost\t: a\r\n\r\n'],
    ['a space before the colon', 'CONNECT a.test:1 HTTP/1.1\r\nHost : a\r\n\r\n'],
    ['no colon', 'CONNECT a.test:1 HTTP/1.1\r\nHost\r\n\r\n'],
    ['an empty name', 'CONNECT a.test:1 HTTP/1.1\r\n: v\r\n\r\n'],
    ['a separator in the name', 'CONNECT a.test:1 HTTP/1.1\r\nX(: v\r\n\r\n'],
    ['two spaces after the method', 'CONNECT  a.test:1 HTTP/1.1\r\n\r\n'],
    ['a tab in the target', 'CONNECT a.test:1\t HTTP/1.1\r\n\r\n'],
    ['a non-ASCII target', 'CONNECT a.t\xe9st:1 HTTP/1.1\r\n\r\n'],
    ['an empty target', 'CONNECT  HTTP/1.1\r\n\r\n'],
    ['no version (HTTP/0.9 form)', 'CONNECT a.test:1\r\n\r\n'],
    ['HTTP/0.9', 'CONNECT a.test:1 HTTP/0.9\r\n\r\n'],
    ['HTTP/1.2', 'CONNECT a.test:1 HTTP/1.2\r\n\r\n'],
    ['HTTP/2.0', 'CONNECT a.test:1 HTTP/2.0\r\n\r\n'],
    ['a lower-case version', 'CONNECT a.test:1 http/1.1\r\n\r\n'],
    ['a space after the version', 'CONNECT a.test:1 HTTP/1.1 \r\n\r\n'],
  ])('%s is malformed, however it was split', (_label, text) => {
    for (const outcome of everySplit(text)) {
      expect(outcome).toEqual({ kind: 'refuse', status: 400, reason: 'malformed-request' });
    }
  });

  it('accepts obs-text and tabs inside a value, as Node does', () => {
    expect(read('CONNECT a.test:1 HTTP/1.1\r\nX: a\xe9\tb\r\n\r\n')).toMatchObject({
      kind: 'head',
      rawHeaders: ['X', 'a\xe9\tb'],
    });
  });

  it('refuses a head over the cap with 431, at once or trickled, and never buffers past it', () => {
    const big = `CONNECT a.test:1 HTTP/1.1\r\nX: ${'a'.repeat(CAP)}\r\n\r\n`;
    expect(read(big)).toEqual({ kind: 'refuse', status: 431, reason: 'headers-too-large' });
    // No line end ever arrives: the cap alone must end it.
    const reader = new ConnectHeadReader(CAP);
    let outcome: HeadOutcome | null = null;
    let fed = 0;
    while (outcome === null && fed < CAP * 2) {
      outcome = reader.push(Buffer.from(fed === 0 ? 'CONNECT ' : 'a'.repeat(1000), 'latin1'));
      fed += fed === 0 ? 8 : 1000;
    }
    expect(outcome).toEqual({ kind: 'refuse', status: 431, reason: 'headers-too-large' });
    expect(fed).toBeLessThanOrEqual(CAP + 1000);
    // Many short lines count too.
    const lines = `CONNECT a.test:1 HTTP/1.1\r\n${'X: 1\r\n'.repeat(CAP / 6 + 1)}\r\n`;
    expect(read(lines)).toEqual({ kind: 'refuse', status: 431, reason: 'headers-too-large' });
  });

  it('a head of exactly the cap is read; one byte more is refused', () => {
    const start = 'CONNECT a.test:1 HTTP/1.1\r\nX: ';
    const fill = (n: number) => `${start}${'a'.repeat(n - start.length - 4)}\r\n\r\n`;
    expect(read(fill(256), [], 256)).toMatchObject({ kind: 'head' });
    expect(read(fill(257), [], 256)).toEqual({ kind: 'refuse', status: 431, reason: 'headers-too-large' });
  });
});

describe('startsConnect', () => {
  it('says yes only for `CONNECT ` exactly, and waits while the bytes are a prefix of it', () => {
    expect(startsConnect(Buffer.from('CONNECT a'))).toBe(true);
    expect(startsConnect(Buffer.from('CONNECT '))).toBe(true);
    expect(startsConnect(Buffer.from('CONN'))).toBeUndefined();
    expect(startsConnect(Buffer.from('C'))).toBeUndefined();
    for (const other of ['GET ', 'connect ', 'CONNECTX', 'CONNECT\t', '\r\nCONNECT ', 'COPY ', 'CONN '])
      expect(startsConnect(Buffer.from(other))).toBe(false);
  });
});

import { describe, expect, it } from 'vitest';
import { frame, splitOctetCounted, syslogMessage } from './framing.js';

const header = { ts: '2026-12-01T10:00:00.000Z', host: 'dev-box', msgid: 'mcp.decision', warning: false };

describe('syslog framing (RFC 5424 over RFC 6587 octet counting)', () => {
  it('writes the header fields and the JSON after a BOM, prefixed by its byte length', () => {
    const body = '{"seq":1,"tool":"é"}';
    const bytes = frame('syslog', header, body);
    const message = syslogMessage(header, body);
    expect(message).toBe(
      `<109>1 2026-12-01T10:00:00.000Z dev-box ringfence - mcp.decision - \u{feff}${body}`,
    );
    const length = Buffer.byteLength(message);
    expect(bytes.toString('utf8')).toBe(`${length} ${message}`);
    // The count is bytes, not characters: é and the BOM are several bytes each.
    expect(length).toBeGreaterThan(message.length);
  });

  it('says warning (severity 4) for refusals and failures, facility 13 (log audit)', () => {
    expect(syslogMessage({ ...header, warning: true }, '{}')).toMatch(/^<108>1 /);
  });

  it('a hostile body cannot end its message early or forge another one', () => {
    // A name with a newline and what looks like a second syslog frame: JSON escapes the newline,
    // and the octet count frames the message whatever it holds.
    const hostile = JSON.stringify({ tool: 'x\n57 <13>1 - evil - - - - {"seq":999}' });
    const stream = Buffer.concat([frame('syslog', header, hostile), frame('syslog', header, '{"seq":2}')]);
    const { messages, rest } = splitOctetCounted(stream);
    expect(messages).toHaveLength(2);
    expect(rest).toHaveLength(0);
    expect(messages[0]!.toString('utf8').endsWith(hostile)).toBe(true);
    expect(messages[1]!.toString('utf8').endsWith('{"seq":2}')).toBe(true);
  });

  it('cleans header fields to printable ASCII without spaces', () => {
    const message = syslogMessage({ ...header, host: 'bad host\n<1>', msgid: 'a b' }, '{}');
    expect(message).toContain(' badhost<1> ringfence - ab - ');
    expect(syslogMessage({ ...header, host: '' }, '{}')).toContain(' - ringfence - ');
  });

  it('a receiver parse refuses a length that is not digits and holds back a partial frame', () => {
    expect(() => splitOctetCounted(Buffer.from('abc {"x":1}'))).toThrow(/octet count/);
    const whole = frame('syslog', header, '{"seq":1}');
    const { messages, rest } = splitOctetCounted(whole.subarray(0, whole.length - 3));
    expect(messages).toHaveLength(0);
    expect(rest.length).toBe(whole.length - 3);
  });

  it('JSON lines: the record and a newline, nothing else', () => {
    expect(frame('jsonl', header, '{"seq":1}').toString()).toBe('{"seq":1}\n');
  });
});

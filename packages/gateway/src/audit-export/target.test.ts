import { describe, expect, it } from 'vitest';
import { defaultSinkId, parseExportTarget } from './target.js';

describe('parseExportTarget', () => {
  it('reads the five sink forms', () => {
    expect(parseExportTarget('syslog+tcp://127.0.0.1:514')).toMatchObject({
      kind: 'stream',
      framing: 'syslog',
      host: '127.0.0.1',
      port: 514,
    });
    expect(parseExportTarget('syslog+tls://siem.example:6514', { ca: '/ca.pem' })).toMatchObject({
      framing: 'syslog',
      tls: { ca: '/ca.pem' },
    });
    expect(parseExportTarget('jsonl+tcp://[::1]:9000')).toMatchObject({
      framing: 'jsonl',
      host: '::1',
      url: 'jsonl+tcp://[::1]:9000',
    });
    expect(parseExportTarget('jsonl+tls://h:1')).toMatchObject({ framing: 'jsonl', tls: {} });
    expect(parseExportTarget('jsonl:/var/log/x.jsonl')).toEqual({
      kind: 'file',
      framing: 'jsonl',
      path: '/var/log/x.jsonl',
      url: 'jsonl:/var/log/x.jsonl',
    });
  });

  it('refuses what it cannot send to, saying what it takes', () => {
    expect(() => parseExportTarget('http://h:1')).toThrow(/syslog\+tcp:\/\/HOST:PORT/);
    expect(() => parseExportTarget('syslog+tcp://h')).toThrow(/needs a port/);
    expect(() => parseExportTarget('syslog+tcp://user:pw@h:1')).toThrow(/host and a port only/);
    expect(() => parseExportTarget('syslog+tcp://h:1/path')).toThrow(/host and a port only/);
    expect(() => parseExportTarget('jsonl:')).toThrow(/names no file/);
    // TLS files for a plain sink would be silently unused: refused instead.
    expect(() => parseExportTarget('syslog+tcp://h:1', { ca: '/ca.pem' })).toThrow(
      /plain TCP: use syslog\+tls/,
    );
  });

  it('derives the same sink id for the same URL and form', () => {
    const a = defaultSinkId(parseExportTarget('syslog+tcp://h:1'), 'ocsf');
    expect(a).toMatch(/^[0-9a-f]{12}$/);
    expect(defaultSinkId(parseExportTarget('syslog+tcp://h:1'), 'ocsf')).toBe(a);
    expect(defaultSinkId(parseExportTarget('syslog+tcp://h:1'), 'ringfence')).not.toBe(a);
  });
});

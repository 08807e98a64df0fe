import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadExportSettings } from './settings.js';
import { defaultSinkId, parseExportTarget } from './target.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-export-settings-'));
});
afterEach(async () => rm(home, { recursive: true, force: true }));

const write = (value: unknown) =>
  writeFile(join(home, 'audit-export.json'), typeof value === 'string' ? value : JSON.stringify(value));

describe('audit-export.json', () => {
  it('absent: no sinks', async () => {
    expect(await loadExportSettings(home)).toEqual([]);
  });

  it('reads sinks with their defaults; the id is the one `audit export` derives', async () => {
    await write({
      sinks: [
        { to: 'syslog+tls://siem:6514', format: 'ocsf', ca: '/ca.pem', anchor_interval: 30 },
        { to: 'jsonl:/var/x.jsonl', id: 'file' },
      ],
    });
    const sinks = await loadExportSettings(home);
    expect(sinks).toEqual([
      {
        id: defaultSinkId(parseExportTarget('syslog+tls://siem:6514'), 'ocsf'),
        format: 'ocsf',
        anchorIntervalMs: 30_000,
        target: expect.objectContaining({ url: 'syslog+tls://siem:6514', tls: { ca: '/ca.pem' } }),
      },
      {
        id: 'file',
        format: 'ringfence',
        anchorIntervalMs: 60_000,
        target: expect.objectContaining({ kind: 'file', path: '/var/x.jsonl' }),
      },
    ]);
  });

  it('refuses a wrong file as a whole, saying what is wrong', async () => {
    const cases: [unknown, RegExp][] = [
      ['{', /not JSON/],
      [{ sink: [] }, /expected \{"sinks"/],
      [{ sinks: [{ to: 'syslog+tcp://h:1', colour: 'red' }] }, /unknown setting "colour"/],
      [{ sinks: [{ to: 'syslog+tcp://h:1', format: 'cef' }] }, /format must be/],
      [{ sinks: [{ to: 'ftp://h:1' }] }, /not a sink/],
      [{ sinks: [{ to: 'syslog+tcp://h:1', ca: '/ca.pem' }] }, /plain TCP/],
      [{ sinks: [{ to: 'syslog+tls://h:1', cert: '/c.pem' }] }, /"cert" and "key" go together/],
      [{ sinks: [{ to: 'syslog+tcp://h:1', anchor_interval: -1 }] }, /anchor_interval/],
      [{ sinks: [{ to: 'syslog+tcp://h:1', id: '../x' }] }, /id must be/],
      [
        {
          sinks: [
            { to: 'syslog+tcp://h:1', id: 'a' },
            { to: 'jsonl:/x', id: 'a' },
          ],
        },
        /two sinks have the id "a"/,
      ],
    ];
    for (const [value, message] of cases) {
      await write(value);
      await expect(loadExportSettings(home)).rejects.toMatchObject({
        code: 'EXPORT_SETTINGS',
        message: expect.stringMatching(message),
      });
    }
  });
});

import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadPosition, positionPath, START, savePosition } from './position.js';

let home: string;
beforeEach(async () => {
  home = await mkdtemp(join(tmpdir(), 'rf-export-pos-'));
});
afterEach(async () => rm(home, { recursive: true, force: true }));

const hash = `sha256:${'a'.repeat(64)}` as const;
const about = { target: 'syslog+tcp://h:1', format: 'ringfence' };

describe('the export position file', () => {
  it('is absent at first (start from line 1), then holds what was saved', async () => {
    const path = positionPath(home, 'siem');
    expect(path).toBe(join(home, 'audit-export-siem.json'));
    expect(await loadPosition(path)).toEqual(START);
    await savePosition(path, { seq: 7, hash, offset: 900, log: hash }, about);
    expect(await loadPosition(path)).toEqual({ seq: 7, hash, offset: 900, log: hash });
  });

  it('is replaced atomically: no temporary file left, mode 0600, old or new but never torn', async () => {
    const path = positionPath(home, 'siem');
    for (let seq = 1; seq <= 20; seq++) await savePosition(path, { seq, hash, offset: seq * 10 }, about);
    expect(await readdir(home)).toEqual(['audit-export-siem.json']);
    const { stat } = await import('node:fs/promises');
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(path, 'utf8')).seq).toBe(20);
  });

  it('refuses a file that is not a position rather than guessing where to resume', async () => {
    const path = positionPath(home, 'x');
    for (const bad of [
      '{"version":1,"seq":3,"hash":"sha256:zz","offset":9}',
      '{"version":1,"seq":-1,"hash":"' + hash + '","offset":0}',
      '{"version":1,"seq":0,"hash":"' + hash + '","offset":50}',
      '{"version":2,"seq":1,"hash":"' + hash + '","offset":5}',
      '{"version":1,"seq":1,"hash":"' + hash + '"',
    ]) {
      await writeFile(path, bad);
      await expect(loadPosition(path)).rejects.toMatchObject({ code: 'EXPORT_POSITION' });
    }
  });
});

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { AuditLog } from '@ringfence/gateway/audit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
let path: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-audit-verify-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  path = join(dir, 'home', 'audit.jsonl');
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function writeLog(file: string, count: number): Promise<void> {
  const log = await AuditLog.open({ path: file, session: 'cli-test' });
  await log.append({ type: 'gateway.start', refs: { pid: process.pid } });
  for (let i = 1; i < count; i++) {
    await log.append({
      type: 'mcp.decision',
      refs: {
        phase: 'call',
        server: 'docs',
        tool: 'search',
        allowed: true,
        rule: 'default_action',
        arguments: { q: i },
      },
    });
  }
  await log.close();
}

describe('ringfence audit verify', () => {
  it('says an intact log is intact, with its entry count and last hash, exit 0', async () => {
    await writeLog(path, 12);
    const { stdout, error } = await runCommand(['audit', 'verify'], { root });
    expect(error).toBeUndefined();
    expect(stdout).toMatch(/^ok {2}.*audit\.jsonl: 12 entries, chain intact\.$/m);
    expect(stdout).toMatch(/last hash: sha256:[0-9a-f]{64}/);
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('prints the result as JSON with --json, including the last hash to anchor', async () => {
    await writeLog(path, 3);
    const { stdout } = await runCommand(['audit', 'verify', '--json'], { root });
    const result = JSON.parse(stdout) as { ok: boolean; entries: number; lastHash: string };
    expect(result).toMatchObject({ ok: true, entries: 3, path });
    expect(result.lastHash).toMatch(/^sha256:[0-9a-f]{64}$/);
  });

  it('treats a missing log as empty and intact', async () => {
    const { stdout } = await runCommand(['audit', 'verify'], { root });
    expect(stdout).toContain('no audit log yet');
    expect(process.exitCode ?? 0).toBe(0);
  });

  it('names the broken line, says what to do, and exits 1', async () => {
    await writeLog(path, 10);
    const lines = (await readFile(path, 'utf8')).split('\n');
    lines[3] = lines[3]!.replace('"tool":"search"', '"tool":"delete"');
    await writeFile(path, lines.join('\n'));
    const { stdout } = await runCommand(['audit', 'verify'], { root });
    expect(stdout).toMatch(/^BROKEN {2}.*audit\.jsonl$/m);
    expect(stdout).toContain('line 4: was changed after it was written');
    expect(stdout).toContain('Lines 1 to 3 are intact.');
    expect(stdout).toContain('cannot be repaired');
    expect(stdout).toMatch(/mv '.*audit\.jsonl' '.*audit\.jsonl\.broken-\d{4}-\d\d-\d\d'/);
    expect(process.exitCode).toBe(1);
  });

  it('reports a broken log as JSON with --json and still exits 1; --file picks another file', async () => {
    const other = join(dir, 'copy.jsonl');
    await writeLog(other, 5);
    const lines = (await readFile(other, 'utf8')).split('\n');
    [lines[1], lines[2]] = [lines[2]!, lines[1]!];
    await writeFile(other, lines.join('\n'));
    const { stdout } = await runCommand(['audit', 'verify', '--json', '--file', other], { root });
    expect(JSON.parse(stdout)).toMatchObject({ ok: false, line: 2, code: 'AUDIT_SEQ_ORDER', path: other });
    expect(process.exitCode).toBe(1);
  });

  it('refuses an unknown flag with exit 2', async () => {
    const { error } = await runCommand(['audit', 'verify', '--bogus'], { root });
    expect(error?.oclif?.exit).toBe(2);
  });
});

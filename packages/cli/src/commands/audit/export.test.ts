import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { AuditLog } from '@ringfence/gateway/audit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
let dir: string;
let home: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-audit-export-'));
  home = join(dir, 'home');
  process.env.RINGFENCE_HOME = home;
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function writeLog(count: number): Promise<void> {
  const log = await AuditLog.open({ path: join(home, 'audit.jsonl'), session: 'cli-test' });
  await log.append({ type: 'gateway.start', refs: { pid: process.pid } });
  for (let i = 1; i < count; i++)
    await log.append({
      type: 'mcp.egress',
      refs: { server: 's', host: 'h', port: 443, allowed: i % 2 === 0, reason: 'rule' },
    });
  await log.close();
}

describe('ringfence audit export', () => {
  it('exports to a JSON lines file, then verify --against it passes; a cut log then fails', async () => {
    await writeLog(12);
    const out = join(dir, 'collector.jsonl');
    const { stdout } = await runCommand(['audit', 'export', '--to', `jsonl:${out}`], { root });
    expect(stdout).toMatch(/acknowledged through seq 12; 12 entries sent, 1 anchor/);
    const ok = await runCommand(['audit', 'verify', '--against', out], { root });
    expect(ok.stdout).toMatch(/ok .*matches what left the machine through seq 12/);
    expect(process.exitCode ?? 0).toBe(0);
    const log = join(home, 'audit.jsonl');
    const lines = (await readFile(log, 'utf8')).split('\n');
    await writeFile(log, `${lines.slice(0, 8).join('\n')}\n`);
    const cut = await runCommand(['audit', 'verify', '--against', out], { root });
    expect(cut.stdout).toMatch(/MISMATCH[\s\S]*ends at seq 8[\s\S]*AGAINST_TRUNCATED/);
    expect(process.exitCode).toBe(1);
  });

  it('refuses a URL it cannot send to, or TLS files for a plain sink, as a usage error', async () => {
    const bad = await runCommand(['audit', 'export', '--to', 'http://example.invalid:80'], { root });
    expect(bad.error?.message).toMatch(/not a sink this version can send to/);
    expect(process.exitCode).toBe(2);
    process.exitCode = undefined;
    const plain = await runCommand(
      ['audit', 'export', '--to', 'syslog+tcp://127.0.0.1:1', '--ca', '/x.pem'],
      { root },
    );
    expect(plain.error?.message).toMatch(/plain TCP: use syslog\+tls/);
  });
});

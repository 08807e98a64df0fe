import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '@oclif/test';
import { type AuditInput, AuditLog } from '@ringfence/gateway/audit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

const root = new URL('../../..', import.meta.url).pathname;
const bin = join(root, 'bin', 'run.js');
let dir: string;
let path: string;
const saved = { ...process.env };

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-cli-audit-tail-'));
  process.env.RINGFENCE_HOME = join(dir, 'home');
  path = join(dir, 'home', 'audit.jsonl');
  process.exitCode = undefined;
});
afterEach(async () => {
  process.env = { ...saved };
  process.exitCode = undefined;
  await rm(dir, { recursive: true, force: true });
});

const decision = (i: number): AuditInput => ({
  type: 'mcp.decision',
  refs: {
    phase: 'call',
    server: 'github',
    tool: 'create_issue',
    allowed: i % 2 === 0,
    rule: `rule-${i}`,
    arguments: { i },
  },
});

async function writeLog(count: number): Promise<void> {
  const log = await AuditLog.open({ path, session: 'tail-test' });
  await log.append({ type: 'gateway.start', refs: { pid: 7 } });
  for (let i = 1; i < count; i++) {
    const seq = await log.append(decision(i));
    await log.append({
      type: 'mcp.result',
      parentSeq: seq,
      refs: { server: 'github', tool: 'create_issue', is_error: false, result: i },
    });
  }
  await log.close();
}

describe('ringfence audit tail', () => {
  it('prints one human line per entry: seq, time, type, server/tool, verdict, rule', async () => {
    await writeLog(6);
    const { stdout } = await runCommand(['audit', 'tail', '-n', '3'], { root });
    const lines = stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(3);
    // seq 1 is the start; then decision i at 2i and its result at 2i + 1.
    expect(lines[0]).toMatch(
      /^\s+9 {2}\S+Z {2}mcp\.result\s+github\/create_issue {2}ok {2}for #8 {2}result=sha256:/,
    );
    expect(lines[1]).toMatch(
      /^\s+10 {2}\S+Z {2}mcp\.decision\s+call\s+github\/create_issue {2}REFUSED {2}rule=rule-5/,
    );
    expect(lines[2]).toMatch(/^\s+11 .*mcp\.result .*for #10/);
  });

  it('filters by --type and prints the stored lines with --json', async () => {
    await writeLog(6);
    const stored = (await readFile(path, 'utf8')).trimEnd().split('\n');
    const { stdout } = await runCommand(['audit', 'tail', '--json', '--type', 'mcp.decision', '-n', '2'], {
      root,
    });
    expect(stdout.trimEnd().split('\n')).toEqual([stored[7], stored[9]]);
    const { stdout: all } = await runCommand(['audit', 'tail', '--json', '-n', '1000'], { root });
    expect(all.trimEnd().split('\n')).toEqual(stored);
  });

  it('a tool name made to forge or hide entries is escaped, in lines and in --json', async () => {
    const log = await AuditLog.open({ path, session: 'tail-test' });
    const tool = `x\r\u001b[2K\n    99  2026-01-01T00:00:00.000Z  mcp.decision   call    github/read  allowed${String.fromCodePoint(0xe0041)}\u2028`;
    await log.append({
      type: 'mcp.decision',
      refs: { phase: 'call', server: 'evil', tool, allowed: false, rule: 'deny', arguments: {} },
    });
    await log.close();
    const { stdout } = await runCommand(['audit', 'tail'], { root });
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(stdout).toContain('evil/x\\u{D}\\u{1B}[2K\\u{A}\\u{20}\\u{20}\\u{20}\\u{20}99');
    expect(stdout).toContain('allowed\\u{E0041}\\u{2028}  REFUSED');
    const { stdout: json } = await runCommand(['audit', 'tail', '--json'], { root });
    expect(json).not.toMatch(/[\r\u001b\u2028\u{e0041}]/u);
    expect(json).toContain('allowed\\udb40\\udc41\\u2028');
    expect(JSON.parse(json)).toEqual(JSON.parse((await readFile(path, 'utf8')).trimEnd()));
  });

  it('shows no secret an entry holds: a redacted copy with --json, and the file untouched', async () => {
    const log = await AuditLog.open({ path, session: 'tail-test' });
    await log.append({
      type: 'mcp.decision',
      refs: {
        phase: 'call',
        server: 'docs',
        tool: 'https://api.example.com/doc?access_token=hunter2Secret',
        kind: 'resource',
        allowed: false,
        rule: 'deny',
        reason: 'cannot fetch https://u:hunter2Secret@h/x',
        arguments: {},
      },
    });
    await log.close();
    const { stdout } = await runCommand(['audit', 'tail'], { root });
    expect(stdout).not.toContain('hunter2Secret');
    expect(stdout).toContain('docs/resource https://api.example.com/doc?access_token=***');
    const { stdout: json } = await runCommand(['audit', 'tail', '--json'], { root });
    expect(json).not.toContain('hunter2Secret');
    expect(JSON.parse(json)).toMatchObject({
      refs: { tool: 'https://api.example.com/doc?access_token=***', reason: 'cannot fetch https://***@h/x' },
    });
    expect(await readFile(path, 'utf8')).toContain('hunter2Secret');
    const verify = await runCommand(['audit', 'verify'], { root });
    expect(verify.error).toBeUndefined();
  });

  it('says on stderr when there is no log, exit 0; a bad --type is a usage error (2)', async () => {
    const { stdout, stderr } = await runCommand(['audit', 'tail'], { root });
    expect(stdout).toBe('');
    expect(stderr).toContain('No audit log at');
    expect(process.exitCode ?? 0).toBe(0);
    const { error } = await runCommand(['audit', 'tail', '--type', 'nope'], { root });
    expect(error?.oclif?.exit).toBe(2);
  });

  it('--follow prints entries as they are appended and stops cleanly on SIGINT', async () => {
    await writeLog(2);
    const child = spawn(process.execPath, [bin, 'audit', 'tail', '--follow', '--json', '-n', '1'], {
      env: { ...process.env, RINGFENCE_HOME: join(dir, 'home') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    await expect.poll(() => out.split('\n').length, { timeout: 10_000 }).toBe(2);
    const log = await AuditLog.open({ path, session: 'later' });
    await log.append(decision(2));
    await log.close();
    await expect.poll(() => out.trimEnd().split('\n').length, { timeout: 10_000 }).toBe(2);
    expect(JSON.parse(out.trimEnd().split('\n')[1]!)).toMatchObject({ seq: 4, session: 'later' });
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  });
});

import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSampleLog } from './__fixtures__/sample.js';
import { describeAuditLine } from './describe.js';
import { egressInputFromProxyLine } from './egress.js';
import { AuditLog } from './log.js';
import { type AuditLogLine, followAuditLog, readAuditTail } from './tail.js';
import { verifyAuditLog } from './verify.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-tail-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('readAuditTail', () => {
  it('returns the last N lines oldest first, filtered by type, without the torn fragment', async () => {
    await writeSampleLog(path, 41);
    await writeFile(path, '{"seq":42,"ts"', { flag: 'a' });
    const tail = await readAuditTail(path, { count: 5 });
    expect(tail.lines.map((l) => l.entry?.seq)).toEqual([37, 38, 39, 40, 41]);
    const egress = await readAuditTail(path, { count: 3, type: 'mcp.egress' });
    expect(egress.lines.map((l) => [l.entry?.seq, l.entry?.type])).toEqual([
      [32, 'mcp.egress'],
      [36, 'mcp.egress'],
      [40, 'mcp.egress'],
    ]);
    expect((await readAuditTail(path, { count: 1000 })).lines).toHaveLength(41);
  });

  it('reads a log larger than one read chunk from the end', async () => {
    await writeSampleLog(path, 1500);
    const tail = await readAuditTail(path, { count: 700 });
    expect(tail.lines[0]?.entry?.seq).toBe(801);
    expect(tail.lines.at(-1)?.entry?.seq).toBe(1500);
  });

  it('says when there is no log', async () => {
    expect(await readAuditTail(path, { count: 5 })).toMatchObject({ exists: false, lines: [] });
  });

  it('refuses what it cannot read with a coded error naming the path and what to check', async () => {
    await expect(readAuditTail(dir, { count: 5 })).rejects.toMatchObject({
      code: 'AUDIT_READ_FAILED',
      message: expect.stringMatching(
        /^Could not read .*rf-audit-tail-.*EISDIR.*Check the path and its permissions\.$/,
      ),
    });
    await writeFile(path, `${'x'.repeat(1024 * 1024 + 1)}\n`);
    await expect(readAuditTail(path, { count: 5 })).rejects.toMatchObject({
      code: 'AUDIT_READ_FAILED',
      message: expect.stringContaining('a line is longer than 1048576 bytes'),
    });
  });
});

describe('followAuditLog', () => {
  it('reports lines appended after the tail, and follows a new log after the old one is moved aside', async () => {
    await writeSampleLog(path, 3);
    const tail = await readAuditTail(path, { count: 10 });
    const seen: AuditLogLine[] = [];
    const notices: string[] = [];
    const controller = new AbortController();
    const following = followAuditLog(path, {
      from: tail.position,
      signal: controller.signal,
      intervalMs: 10,
      onLine: (line) => seen.push(line),
      onNotice: (m) => notices.push(m),
    });
    const log = await AuditLog.open({ path, session: 'f' });
    await log.append({ type: 'gateway.start', refs: { pid: 1 } });
    await expect.poll(() => seen.map((l) => l.entry?.seq)).toEqual([4]);
    await rename(path, `${path}.old`);
    await log.append({ type: 'gateway.start', refs: { pid: 2 } });
    await log.close();
    await expect.poll(() => seen.map((l) => l.entry?.seq)).toEqual([4, 1]);
    expect(notices).toHaveLength(1);
    controller.abort();
    await following;
  });
});

describe('describeAuditLine', () => {
  it('gives seq, time, type, server/tool and verdict/rule on one line', async () => {
    await writeSampleLog(path, 5);
    const { lines } = await readAuditTail(path, { count: 5 });
    const text = lines.map(describeAuditLine);
    expect(text[0]).toMatch(
      /^\s+1 {2}\d{4}-\d\d-\d\dT[\d:.]+Z {2}gateway\.start\s+session=sess-1 pid=\d+ version=0\.1\.0$/,
    );
    expect(text[1]).toMatch(
      /^\s+2 .* mcp\.decision\s+call\s+github\/create_issue {2}allowed {2}rule=no-issues-on-prod .*agent=ci-bot {2}scope=contractors$/,
    );
    expect(text[2]).toMatch(/mcp\.result\s+github\/create_issue {2}ok {2}for #1 {2}result=sha256:/);
    expect(text[3]).toMatch(/mcp\.egress\s+github {2}api\.github\.com:443 {2}allowed {2}200/);
    expect(text[4]).toMatch(/mcp\.decision\s+expose\s+docs\/tool_4 {2}allowed {2}rule=pinned$/);
    expect(describeAuditLine({ raw: 'garbage' })).toContain('not an entry');
  });

  it('names how much of a result was dropped, when anything was', () => {
    const entry = {
      seq: 3,
      ts: '2026-11-29T00:00:00.000Z',
      type: 'mcp.result',
      session: 's',
      parent_seq: 2,
      refs: { server: 'gh', tool: 't', is_error: false, result: null, dropped: 7 },
      prev: `sha256:${'0'.repeat(64)}`,
    } as const;
    expect(describeAuditLine({ raw: '', entry })).toMatch(
      /gh\/t {2}ok {2}for #2 {2}result=no-digest {2}dropped=7$/,
    );
    expect(
      describeAuditLine({ raw: '', entry: { ...entry, refs: { ...entry.refs, dropped: undefined } } }),
    ).not.toContain('dropped');
  });

  it('cannot be made to show a made-up entry or hide a real one; the file still verifies', async () => {
    // A refused call to a tool whose name carries a newline, a fake "allowed" entry, and escapes
    // that erase the real line (CR, ESC[2K), hide what follows (ESC[8m) and set the clipboard.
    const fake = '\n     9  2026-01-01T00:00:00.000Z  mcp.decision   call    github/read  allowed  rule=ok';
    const tool = `x\r\u001b[2K\u001b[8m${fake}\u001b]52;c;ZXZpbA==\u0007\u{e0041}\u200b`;
    const log = await AuditLog.open({ path, session: 'hostile' });
    await log.append({
      type: 'mcp.decision',
      refs: {
        phase: 'call',
        server: 'evil',
        tool,
        allowed: false,
        rule: 'deny-all',
        reason: `why\n${fake}`,
        arguments: {},
      },
    });
    await log.append({
      type: 'mcp.egress',
      refs: { server: 'evil', host: 'a b\u202e', port: 443, allowed: false, reason: 'not\rallowed' },
    });
    await log.close();
    expect((await verifyAuditLog(path)).ok).toBe(true);
    const [decision, egress] = (await readAuditTail(path, { count: 2 })).lines.map(describeAuditLine);
    expect(decision).toContain('REFUSED');
    expect(decision).toContain(
      'evil/x\\u{D}\\u{1B}[2K\\u{1B}[8m\\u{A}\\u{20}\\u{20}\\u{20}\\u{20}\\u{20}9\\u{20}\\u{20}',
    );
    expect(decision).toContain('\\u{1B}]52;c;ZXZpbA==\\u{7}\\u{E0041}\\u{200B}');
    expect(decision).toContain('(why\\u{A}\\u{A}     9  2026');
    expect(egress).toContain('a\\u{20}b\\u{202E}:443  REFUSED');
    expect(egress).toContain('not\\u{D}allowed');
    for (const line of [decision!, egress!])
      expect(line).not.toMatch(/[\n\r\u001b\u0007\u200b\u202e\u{e0000}-\u{e007f}]/u);
  });

  it('says who cancelled a call', () => {
    const entry = {
      seq: 9,
      ts: '2026-11-29T00:00:00.000Z',
      type: 'mcp.result',
      session: 's',
      parent_seq: 8,
      refs: { server: 'art', tool: 'draw', is_error: true, result: null, cancelled: 'client' },
      prev: `sha256:${'0'.repeat(64)}`,
    } as const;
    expect(describeAuditLine({ raw: '', entry } as AuditLogLine)).toMatch(
      /mcp\.result\s+art\/draw {2}error {2}cancelled by the client {2}for #8/,
    );
  });
});

describe('egressInputFromProxyLine', () => {
  it('keeps host, port, verdict, reason and status of decision lines and ignores the rest', async () => {
    const line =
      '{"ts":"2026-11-29T00:00:00.000Z","event":"egress","method":"CONNECT","host":"evil.example","port":443,"allowed":false,"reason":"host not allowed","status":403}';
    const input = egressInputFromProxyLine('github', line);
    expect(input).toEqual({
      type: 'mcp.egress',
      refs: {
        server: 'github',
        host: 'evil.example',
        port: 443,
        allowed: false,
        reason: 'host not allowed',
        status: 403,
      },
    });
    expect(egressInputFromProxyLine('github', '{"event":"close","host":"a","port":1}')).toBeUndefined();
    expect(egressInputFromProxyLine('github', 'not json')).toBeUndefined();
    expect(egressInputFromProxyLine('github', '{"event":"egress","host":"a","port":"80"}')).toBeUndefined();

    const log = await AuditLog.open({ path, session: 's' });
    await log.append(input!);
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 1 });
  });
});

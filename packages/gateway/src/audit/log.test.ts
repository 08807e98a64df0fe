import fs, { existsSync, rmSync, writeFileSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readFile, rename, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestOf } from '@ringfence/policy';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sampleInput, writeSampleLog } from './__fixtures__/sample.js';
import { AuditLog, defaultAuditPath } from './log.js';
import { AUDIT_GENESIS, AUDIT_STRING_MAX, type AuditEntry } from './types.js';
import { verifyAuditLog } from './verify.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-log-'));
  path = join(dir, 'home', 'audit.jsonl');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const entries = async (file = path) =>
  (await readFile(file, 'utf8'))
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as AuditEntry);

describe('AuditLog deferred entries', () => {
  it('a deferred entry shares the next append and keeps its place in the order', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    const deferred = log.append({ type: 'gateway.start', refs: { pid: 1 } }, { defer: true });
    const next = await log.append({ type: 'gateway.start', refs: { pid: 2 } });
    expect(await deferred).toBe(1);
    expect(next).toBe(2);
    expect((await entries()).map((e) => (e.refs as { pid: number }).pid)).toEqual([1, 2]);
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 2 });
  });

  it('a deferred entry alone is still written, and close() flushes one that is waiting', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    expect(await log.append({ type: 'gateway.start', refs: { pid: 7 } }, { defer: true })).toBe(1);
    const waiting = log.append({ type: 'gateway.start', refs: { pid: 8 } }, { defer: true });
    await log.close();
    expect(await waiting).toBe(2);
    expect((await entries()).map((e) => (e.refs as { pid: number }).pid)).toEqual([7, 8]);
  });
});

describe('AuditLog', () => {
  it('creates the directory 0700 and the file 0600, and defaults to RINGFENCE_HOME', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.append({ type: 'gateway.start', refs: { pid: process.pid } });
    await log.close();
    expect((await stat(join(dir, 'home'))).mode & 0o777).toBe(0o700);
    expect((await stat(path)).mode & 0o777).toBe(0o600);
    expect(defaultAuditPath({ RINGFENCE_HOME: '/x/rf' })).toBe('/x/rf/audit.jsonl');
  });

  it('tightens an existing log that others could read to 0600', async () => {
    await mkdir(join(dir, 'home'), { mode: 0o700 });
    await writeFile(path, '');
    await chmod(path, 0o644);
    const log = await AuditLog.open({ path, session: 's' });
    await log.close();
    expect((await stat(path)).mode & 0o777).toBe(0o600);
  });

  it('resolves each append with its seq, and a result can name its decision', async () => {
    const log = await AuditLog.open({ path, session: 'sess' });
    expect(await log.append({ type: 'gateway.start', refs: { pid: 42, version: '0.1.0' } })).toBe(1);
    const decision = await log.append({
      type: 'mcp.decision',
      agent: 'ci',
      scope: 'contractors',
      refs: {
        phase: 'call',
        server: 'github',
        tool: 'list_issues',
        allowed: true,
        rule: 'default_action',
        arguments: { repo: 'a/b' },
      },
    });
    expect(decision).toBe(2);
    const result = await log.append({
      type: 'mcp.result',
      parentSeq: decision,
      refs: { server: 'github', tool: 'list_issues', is_error: false, result: { content: [] } },
    });
    expect(result).toBe(3);
    expect(log.head.seq).toBe(3);
    await log.close();
    const [start, dec, res] = await entries();
    expect(start).toMatchObject({
      seq: 1,
      type: 'gateway.start',
      session: 'sess',
      prev: AUDIT_GENESIS,
      refs: { pid: 42 },
    });
    expect(dec).toMatchObject({
      seq: 2,
      agent: 'ci',
      scope: 'contractors',
      refs: { arguments: digestOf({ repo: 'a/b' }) },
    });
    expect(res).toMatchObject({
      seq: 3,
      parent_seq: 2,
      refs: { result: digestOf({ content: [] }), is_error: false },
    });
    expect(Object.keys(dec!)).toEqual(['seq', 'ts', 'type', 'session', 'agent', 'scope', 'refs', 'prev']);
  });

  it('never writes argument or result content, only digests', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    const seq = await log.append({
      type: 'mcp.decision',
      refs: {
        phase: 'call',
        server: 'mail',
        tool: 'send',
        allowed: true,
        rule: 'r',
        arguments: { body: 'SECRET-ARGUMENT-7f3a', to: 'boss@example.com' },
      },
    });
    await log.append({
      type: 'mcp.result',
      parentSeq: seq,
      refs: {
        server: 'mail',
        tool: 'send',
        is_error: true,
        result: { content: [{ type: 'text', text: 'SECRET-RESULT-91be' }] },
      },
    });
    await log.close();
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('SECRET-ARGUMENT-7f3a');
    expect(text).not.toContain('boss@example.com');
    expect(text).not.toContain('SECRET-RESULT-91be');
    expect(text).toContain(digestOf({ body: 'SECRET-ARGUMENT-7f3a', to: 'boss@example.com' }));
  });

  it('records null for arguments without a canonical form, and clips long names', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.append({
      type: 'mcp.decision',
      refs: {
        phase: 'call',
        server: 's',
        tool: 'x'.repeat(5000),
        allowed: false,
        rule: 'schema',
        arguments: { a: '\ud800' },
      },
    });
    await log.close();
    const [entry] = await entries();
    expect(entry?.type === 'mcp.decision' && entry.refs.arguments).toBeNull();
    expect(entry?.type === 'mcp.decision' && entry.refs.tool.length).toBe(AUDIT_STRING_MAX);
    expect((await verifyAuditLog(path)).ok).toBe(true);
  });

  it('serialises 300 concurrent appends into a contiguous chain and refuses a bad entry alone', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    const bad = log
      .append({ type: 'mcp.egress', refs: { server: '', host: 'h', port: 1, allowed: true, reason: '' } })
      .catch((error: unknown) => error);
    const seqs = await Promise.all(Array.from({ length: 300 }, (_, i) => log.append(sampleInput(i))));
    expect(await bad).toMatchObject({ code: 'AUDIT_INVALID_ENTRY' });
    await log.close();
    expect([...seqs].sort((a, b) => a - b)).toEqual(Array.from({ length: 300 }, (_, i) => i + 1));
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 300 });
  });

  it('never strands an append made right after a failed one (a retry in the catch)', async () => {
    const log = await AuditLog.open({ path, session: 's', lockTimeoutMs: 100 });
    writeFileSync(`${path}.lock`, JSON.stringify({ pid: process.pid, nonce: 'someone-else' }));
    const retried = log.append(sampleInput(0)).catch(() => {
      rmSync(`${path}.lock`);
      return log.append(sampleInput(0));
    });
    const settled = await Promise.race([
      retried,
      new Promise<'stuck'>((resolve) => setTimeout(() => resolve('stuck'), 5_000)),
    ]);
    expect(settled).toBe(1);
    await log.close();
  });

  it('refuses a result whose parent_seq is not earlier', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.append(sampleInput(0));
    await expect(
      log.append({
        type: 'mcp.result',
        parentSeq: 2,
        refs: { server: 's', tool: 't', is_error: false, result: 1 },
      }),
    ).rejects.toMatchObject({ code: 'AUDIT_INVALID_ENTRY' });
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 1 });
  });

  it('keeps the chain when two writers in one process take turns (tail re-read on change)', async () => {
    const a = await AuditLog.open({ path, session: 'a' });
    const b = await AuditLog.open({ path, session: 'b' });
    for (let i = 0; i < 20; i++) {
      await (i % 3 === 0 ? b : a).append(sampleInput(i));
    }
    await Promise.all([a.append(sampleInput(1)), b.append(sampleInput(3)), a.append(sampleInput(0))]);
    await a.close();
    await b.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 23 });
  });

  it('refuses to append after a torn line, on open and in a running writer, until the file is moved aside', async () => {
    await writeSampleLog(path, 5);
    const running = await AuditLog.open({ path, session: 's' });
    await writeFile(path, '{"seq":6,"ts":"2026-', { flag: 'a' });
    await expect(AuditLog.open({ path, session: 's' })).rejects.toMatchObject({ code: 'AUDIT_TORN_TAIL' });
    await expect(running.append(sampleInput(0))).rejects.toMatchObject({
      code: 'AUDIT_TORN_TAIL',
      message: expect.stringContaining('audit verify'),
    });
    expect((await verifyAuditLog(path)) as object).toMatchObject({
      ok: false,
      line: 6,
      code: 'AUDIT_TORN_LINE',
    });

    await rename(path, `${path}.torn`);
    await expect(running.append(sampleInput(0))).resolves.toBe(1);
    await running.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 1 });
  });

  it('starts a new chain (seq 1, genesis) when the log is moved aside under a running writer, and says so', async () => {
    const notices: string[] = [];
    const log = await AuditLog.open({ path, session: 's', onNotice: (m) => notices.push(m) });
    await log.append(sampleInput(0));
    await log.append(sampleInput(1));
    await rename(path, `${path}.old`);
    expect(await log.append(sampleInput(0))).toBe(1);
    await log.close();
    expect(notices.join('\n')).toMatch(/moved away or deleted/);
    const [first] = await entries();
    expect(first?.prev).toBe(AUDIT_GENESIS);
    expect(await verifyAuditLog(`${path}.old`)).toMatchObject({ ok: true, entries: 2 });
  });

  it('refuses a log whose last line is not an entry', async () => {
    await writeSampleLog(path, 3);
    await writeFile(path, 'not json\n', { flag: 'a' });
    await expect(AuditLog.open({ path, session: 's' })).rejects.toMatchObject({ code: 'AUDIT_TAIL_CORRUPT' });
  });

  it('refuses a log path that is a symbolic link', async () => {
    await mkdir(join(dir, 'home'), { mode: 0o700 });
    await writeFile(join(dir, 'elsewhere'), '');
    await symlink(join(dir, 'elsewhere'), path);
    await expect(AuditLog.open({ path, session: 's' })).rejects.toMatchObject({ code: 'AUDIT_NOT_A_FILE' });
  });

  it('gives up with AUDIT_LOCK_TIMEOUT while another live process holds the lock', async () => {
    // No lingering: the writer must not still hold the lock when the other "process" takes it.
    const log = await AuditLog.open({ path, session: 's', lockTimeoutMs: 150, lockLingerMs: 0 });
    await writeFile(`${path}.lock`, JSON.stringify({ pid: process.pid, nonce: 'someone-else' }));
    await expect(log.append(sampleInput(0))).rejects.toMatchObject({ code: 'AUDIT_LOCK_TIMEOUT' });
    await rm(`${path}.lock`);
    await expect(log.append(sampleInput(0))).resolves.toBe(1);
    await log.close();
  });

  it('refuses appends after close', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.close();
    await expect(log.append(sampleInput(0))).rejects.toMatchObject({ code: 'AUDIT_CLOSED' });
  });
});

// No small tmpfs can be mounted in the test environment, so a full disk is simulated by making
// the file layer's calls fail with ENOSPC (FileHandle.prototype, shared by every open file).
async function fileHandlePrototype(): Promise<Record<string, (...args: unknown[]) => Promise<unknown>>> {
  const { open } = await import('node:fs/promises');
  const probe = await open(join(dir, 'probe'), 'w');
  await probe.close();
  await rm(join(dir, 'probe'));
  return Object.getPrototypeOf(probe);
}
const enospc = () => Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });

describe('AuditLog on a full disk', () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('refuses the entry at once naming the file and the fix, and holds a deferred result back until writing works', async () => {
    const notices: string[] = [];
    const log = await AuditLog.open({ path, session: 's', onNotice: (m) => notices.push(m) });
    await log.append(sampleInput(0));
    vi.spyOn(await fileHandlePrototype(), 'datasync').mockRejectedValueOnce(enospc());
    const result = log.append({ ...sampleInput(1) }, { defer: true });
    await expect(log.append(sampleInput(2))).rejects.toMatchObject({
      code: 'AUDIT_WRITE_FAILED',
      message: expect.stringMatching(new RegExp(`${path}.*ENOSPC.*Free disk space`)),
    });
    expect(notices.join('\n')).toMatch(/1 result entry could not be written.*next entry that succeeds/);
    // The disk has room again: the next entry carries the held-back one, in its original order.
    expect(await log.append(sampleInput(3))).toBe(3);
    expect(await result).toBe(2);
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 3 });
  });

  it('names the fix for a home that cannot be written (read-only file system)', async () => {
    // The lease is kept for the whole test, so the failing write is the entry's own (the lock's
    // owner line failing is the last test of this block).
    const log = await AuditLog.open({ path, session: 's', lockLingerMs: 60_000 });
    const erofs = Object.assign(new Error('EROFS: read-only file system'), { code: 'EROFS' });
    const failed = vi.spyOn(fs, 'writeSync').mockImplementationOnce(() => {
      throw erofs;
    });
    await expect(log.append(sampleInput(0))).rejects.toMatchObject({
      code: 'AUDIT_WRITE_FAILED',
      message: expect.stringMatching(
        new RegExp(`${path} \\(EROFS\\)\\. Make ${join(dir, 'home')} writable by you`),
      ),
    });
    expect(failed).toHaveBeenCalled();
    await expect(log.append(sampleInput(0))).resolves.toBe(1);
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 1 });
  });

  it('takes a torn write back (half the line reached the file) and refuses the entry; the chain stays whole', async () => {
    const log = await AuditLog.open({ path, session: 's', lockLingerMs: 60_000 });
    await log.append(sampleInput(0));
    const write = fs.writeSync;
    // ENOSPC part-way through: write(2) returns the bytes it could place, not an error.
    vi.spyOn(fs, 'writeSync').mockImplementationOnce(((fd: number, data: Buffer) =>
      write(fd, data, 0, data.length >> 1, null)) as typeof fs.writeSync);
    await expect(log.append(sampleInput(1))).rejects.toMatchObject({
      code: 'AUDIT_WRITE_FAILED',
      message: expect.stringContaining('short write'),
    });
    await expect(log.append(sampleInput(2))).resolves.toBe(2);
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 2 });
  });

  it('close() makes a last try for held-back entries', async () => {
    const log = await AuditLog.open({ path, session: 's', onNotice: () => {} });
    vi.spyOn(await fileHandlePrototype(), 'datasync').mockRejectedValueOnce(enospc());
    const held = log.append(sampleInput(1), { defer: true });
    await expect(log.append(sampleInput(2))).rejects.toMatchObject({ code: 'AUDIT_WRITE_FAILED' });
    await log.close();
    expect(await held).toBe(1);
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 1 });
  });

  it('leaves no lock file when the lock itself cannot be written, and the next append goes through at once', async () => {
    const log = await AuditLog.open({ path, session: 's', lockLingerMs: 0 });
    vi.spyOn(await fileHandlePrototype(), 'write').mockRejectedValueOnce(enospc());
    await expect(log.append(sampleInput(0))).rejects.toMatchObject({
      code: 'AUDIT_WRITE_FAILED',
      message: expect.stringContaining(`${path}.lock (ENOSPC). Free disk space`),
    });
    expect(existsSync(`${path}.lock`)).toBe(false);
    // With a lock file left behind this would wait out the 5 s stale window (then time out).
    const later = await AuditLog.open({ path, session: 't', lockTimeoutMs: 1_000 });
    await expect(later.append(sampleInput(1))).resolves.toBe(1);
    await later.close();
    await log.close();
  });
});

// The entries of gateway tasks: a call decision and its result naming the task, and `mcp.task`
// (a cancel, a refused lookup): chained and verified like every other entry, described by
// `audit tail` with hostile ids rendered, and refused when malformed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeAuditLine } from './describe.js';
import { AuditLog } from './log.js';
import type { AuditEntry } from './types.js';
import { verifyAuditLog } from './verify.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-tasks-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('task entries', () => {
  it('are written, verified and described; a client-chosen id is rendered', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    const decision = await log.append({
      type: 'mcp.decision',
      agent: 'alice',
      refs: {
        phase: 'call',
        server: 'w',
        tool: 't',
        allowed: true,
        rule: 'r',
        arguments: {},
        task: 'rf-abc',
      },
    });
    await log.append({
      type: 'mcp.result',
      agent: 'alice',
      parentSeq: decision,
      refs: { server: 'w', tool: 't', is_error: false, result: { content: [] }, task: 'rf-abc' },
    });
    await log.append({
      type: 'mcp.task',
      agent: 'mallory',
      refs: { op: 'get', task: 'rf-abc\n12 allowed', allowed: false, reason: 'no such task of yours' },
    });
    await log.append({
      type: 'mcp.task',
      agent: 'alice',
      refs: { op: 'cancel', task: 'rf-abc', allowed: true, reason: 'cancelled', server: 'w', tool: 't' },
    });
    await log.close();
    expect((await verifyAuditLog(path)).ok).toBe(true);
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    const described = lines.map((raw) => describeAuditLine({ raw, entry: JSON.parse(raw) as AuditEntry }));
    expect(described[1]).toContain('task=rf-abc');
    expect(described[2]).toContain('tasks/get');
    expect(described[2]).toContain('REFUSED');
    expect(described[2]).not.toContain('\n');
    expect(described[3]).toContain('tasks/cancel');
  });

  it('refuses a task on an expose decision and an unknown op', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await expect(
      log.append({
        type: 'mcp.decision',
        refs: { phase: 'expose', server: 'w', tool: 't', allowed: true, rule: 'pinned', task: 'rf-x' },
      }),
    ).rejects.toThrow(/names no task/);
    await expect(
      log.append({
        type: 'mcp.task',
        refs: { op: 'list' as never, task: 'rf-x', allowed: false, reason: 'r' },
      }),
    ).rejects.toThrow(/op must be/);
    await log.close();
  });
});

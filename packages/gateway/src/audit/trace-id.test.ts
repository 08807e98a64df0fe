import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestOf } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import { checkEntryShape, serializeEntry } from './format.js';
import { AuditLog } from './log.js';
import { AUDIT_GENESIS, type AuditEntry } from './types.js';
import { verifyAuditLog } from './verify.js';

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const decision = {
  seq: 2,
  ts: '2026-11-29T00:00:00.000Z',
  type: 'mcp.decision',
  session: 's',
  refs: {
    phase: 'call',
    server: 'gh',
    tool: 't',
    allowed: true,
    rule: 'r',
    arguments: digestOf({}),
    trace_id: TRACE,
  },
  prev: AUDIT_GENESIS,
};
const result = {
  ...decision,
  seq: 3,
  type: 'mcp.result',
  parent_seq: 2,
  refs: { server: 'gh', tool: 't', is_error: false, result: null, trace_id: TRACE },
};

describe('the trace_id of a call’s entries', () => {
  it('is accepted on a decision and a result, written last in refs; entries without it keep their bytes', () => {
    expect(checkEntryShape(decision)).toMatchObject({ ok: true });
    expect(checkEntryShape(result)).toMatchObject({ ok: true });
    expect(serializeEntry(decision as AuditEntry)).toContain(
      `"arguments":"${digestOf({})}","trace_id":"${TRACE}"}`,
    );
    const { trace_id: _dropped, ...older } = decision.refs;
    expect(serializeEntry({ ...decision, refs: older } as AuditEntry)).toContain(
      `"arguments":"${digestOf({})}"}`,
    );
  });

  it.each([
    ['upper-case hex', TRACE.toUpperCase()],
    ['all zeros (invalid in W3C trace context)', '0'.repeat(32)],
    ['a whole traceparent', `00-${TRACE}-00f067aa0ba902b7-01`],
    ['something to smuggle', `${TRACE}\n{"forged":true}`],
    ['a number', 42],
  ])('is refused as %s, so a rewritten entry cannot carry anything else there', (_what, value) => {
    const shaped = checkEntryShape({ ...decision, refs: { ...decision.refs, trace_id: value } });
    expect(shaped).toMatchObject({ ok: false, message: expect.stringContaining('trace_id') });
  });

  it('is refused on entries other than a call’s decision and result', () => {
    const start = { ...decision, type: 'gateway.start', refs: { pid: 1, trace_id: TRACE } };
    expect(checkEntryShape(start)).toMatchObject({ ok: false });
  });
});

describe('a log holding trace ids', () => {
  it('verifies, and a trace_id rewritten in place breaks the chain', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'rf-audit-trace-'));
    try {
      const path = join(dir, 'audit.jsonl');
      const log = await AuditLog.open({ path, session: 's' });
      const seq = await log.append({
        type: 'mcp.decision',
        refs: { ...decision.refs, phase: 'call', arguments: {} },
      });
      await log.append({ type: 'mcp.result', parentSeq: seq, refs: { ...result.refs, result: {} } });
      await log.close();
      expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 2 });
      const text = await readFile(path, 'utf8');
      expect(text.split(TRACE).length - 1).toBe(2);
      await writeFile(path, text.replace(TRACE, 'f'.repeat(32)));
      expect(await verifyAuditLog(path)).toMatchObject({ ok: false });
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

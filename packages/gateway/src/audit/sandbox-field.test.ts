import { mkdtemp, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { AuditLog } from './log.js';
import { scanLine } from './scan.js';
import { checkEntryShape } from './spec.js';
import { verifyAuditLog } from './verify.js';

describe('the sandbox fields', () => {
  it('`mcp serve --sandbox NAME` is written in every entry of that log, and the log verifies', async () => {
    const path = join(await mkdtemp(join(tmpdir(), 'rf-audit-sbx-')), 'audit.jsonl');
    const log = await AuditLog.open({ path, session: 's', sandbox: 'work' });
    await log.append({ type: 'gateway.start', refs: { pid: 1 } });
    await log.append({
      type: 'mcp.decision',
      refs: {
        phase: 'call',
        server: 'ringfence',
        tool: 'sandbox_run',
        allowed: true,
        rule: 'r',
        arguments: {},
        sandbox: 'box',
      },
    });
    await log.append({
      type: 'mcp.egress',
      refs: { server: 'x', host: 'h', port: 443, allowed: false, reason: 'no' },
    });
    await log.close();
    const plain = await AuditLog.open({ path, session: 't' });
    await plain.append({ type: 'gateway.start', refs: { pid: 2 } });
    await plain.close();
    const lines = (await readFile(path, 'utf8')).trim().split('\n');
    const entries = lines.map((line) => JSON.parse(line));
    expect(entries.map((e) => e.sandbox)).toEqual(['work', 'work', 'work', undefined]);
    // In the written order: after scope, before refs.
    expect(lines[0]).toMatch(/"session":"s","sandbox":"work","refs":/);
    expect(entries[1].refs.sandbox).toBe('box');
    for (const line of lines) expect(scanLine(Buffer.from(line))).toBeDefined();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true });
  });

  it('refuses a sandbox that is not a name, at the envelope and in refs', () => {
    const base = {
      seq: 1,
      ts: '2026-12-01T00:00:00.000Z',
      type: 'gateway.start',
      session: 's',
      refs: { pid: 1 },
      prev: `sha256:${'0'.repeat(64)}`,
    };
    for (const sandbox of ['', 7, null, ['a']]) {
      expect(checkEntryShape({ ...base, sandbox }), String(sandbox)).toMatchObject({ ok: false });
      expect(scanLine(Buffer.from(JSON.stringify({ ...base, sandbox }))), String(sandbox)).toBeUndefined();
    }
    const decision = {
      ...base,
      type: 'mcp.decision',
      refs: { phase: 'call', server: 'ringfence', tool: 't', allowed: true, rule: 'r', sandbox: 3 },
    };
    expect(checkEntryShape(decision)).toMatchObject({ ok: false });
  });
});

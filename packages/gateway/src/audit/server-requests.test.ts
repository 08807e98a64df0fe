// The entries of sampling and elicitation from servers: written with digests only, chained and
// verified like every other entry, described by `audit tail`, and refused when malformed.
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { digestOf } from '@ringfence/policy';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { describeAuditLine } from './describe.js';
import { AuditLog } from './log.js';
import type { AuditEntry } from './types.js';
import { verifyAuditLog } from './verify.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-asks-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const REQUEST = {
  messages: [{ role: 'user', content: { type: 'text', text: 'the secret plan' } }],
  maxTokens: 5,
};
const ANSWER = { role: 'assistant', model: 'm', content: { type: 'text', text: 'the secret answer' } };

describe('mcp.server_request and mcp.server_answer', () => {
  it('store digests, never the request or the answer, and verify', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.append({
      type: 'mcp.server_request',
      refs: {
        server: 'w',
        method: 'sampling/createMessage',
        allowed: false,
        rule: 'registration',
        reason: 'not registered',
        request: REQUEST,
      },
    });
    const seq = await log.append({
      type: 'mcp.server_request',
      agent: 'ci',
      refs: {
        server: 'w',
        method: 'sampling/createMessage',
        allowed: true,
        rule: 'allowed',
        request: REQUEST,
      },
    });
    await log.append({
      type: 'mcp.server_answer',
      parentSeq: seq,
      refs: { server: 'w', method: 'sampling/createMessage', is_error: false, answer: ANSWER },
    });
    await log.append({
      type: 'mcp.server_answer',
      parentSeq: seq,
      refs: {
        server: 'w',
        method: 'sampling/createMessage',
        is_error: true,
        answer: undefined,
        reason: 'declined',
      },
    });
    await log.close();
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('secret');
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as AuditEntry);
    expect(lines[0]!.refs).toMatchObject({
      allowed: false,
      rule: 'registration',
      request: digestOf(REQUEST),
    });
    expect(lines[2]).toMatchObject({ parent_seq: seq, refs: { answer: digestOf(ANSWER), is_error: false } });
    expect(lines[3]!.refs).toMatchObject({ answer: null, is_error: true });
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 4 });
    expect(describeAuditLine({ raw: '', entry: lines[0]! } as never)).toMatch(
      /mcp\.server_request .*w {2}sampling\/createMessage {2}REFUSED {2}rule=registration/,
    );
    expect(describeAuditLine({ raw: '', entry: lines[2]! } as never)).toMatch(
      /w {2}sampling\/createMessage {2}answered {2}for #2/,
    );
  });

  it('refuses an answer that names no earlier request, and a request without its digest', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await expect(
      log.append({
        type: 'mcp.server_answer',
        parentSeq: Number.MAX_SAFE_INTEGER,
        refs: { server: 'w', method: 'm', is_error: false, answer: {} },
      }),
    ).rejects.toMatchObject({ code: 'AUDIT_INVALID_ENTRY' });
    await expect(
      log.append({
        type: 'mcp.server_request',
        refs: { server: 'w', method: 'm', allowed: true, rule: '', request: {} },
      }),
    ).rejects.toMatchObject({ code: 'AUDIT_INVALID_ENTRY' });
    await log.close();
  });
});

// `mcp.oauth` entries (a held token used, refreshed, refused): chained and verified like every
// other entry, described by `audit tail`, and a token in place of its digest is refused.
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { tokenDigest } from '../remote-auth/store.js';
import { describeAuditLine } from './describe.js';
import { AuditLog } from './log.js';
import type { AuditEntry } from './types.js';
import { verifyAuditLog } from './verify.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-oauth-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(() => rm(dir, { recursive: true, force: true }));

describe('oauth entries', () => {
  it('are written, verified and described by digest', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.append({
      type: 'mcp.oauth',
      refs: { server: 'files', event: 'used', token: tokenDigest('AT-1') },
    });
    await log.append({
      type: 'mcp.oauth',
      refs: {
        server: 'files',
        event: 'refreshed',
        token: tokenDigest('AT-2'),
        previous: tokenDigest('AT-1'),
      },
    });
    await log.append({
      type: 'mcp.oauth',
      refs: {
        server: 'files',
        event: 'refused',
        token: tokenDigest('AT-2'),
        status: 401,
        reason: 'invalid_token',
      },
    });
    await log.close();
    expect((await verifyAuditLog(path)).ok).toBe(true);
    const text = await readFile(path, 'utf8');
    expect(text).not.toContain('AT-1');
    const lines = text.trim().split('\n');
    const described = lines.map((raw) => describeAuditLine({ raw, entry: JSON.parse(raw) as AuditEntry }));
    expect(described[1]).toContain('token refreshed');
    expect(described[2]).toMatch(/token refused.*401/);
  });

  it('refuses a line that holds something other than a short digest as its token', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    await log.append({
      type: 'mcp.oauth',
      refs: { server: 'files', event: 'used', token: tokenDigest('AT-1') },
    });
    await log.close();
    const text = await readFile(path, 'utf8');
    await writeFile(path, text.replace(/"token":"sha256:[0-9a-f]{16}"/, '"token":"eyJhbGciOi-raw-token"'));
    const verdict = await verifyAuditLog(path);
    expect(verdict.ok).toBe(false);
    expect(JSON.stringify(verdict)).toContain('refs.token must be sha256: and 16');
  });
});

import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleInput, writeSampleLog } from './__fixtures__/sample.js';
import { hashLine, serializeEntry } from './format.js';
import { AuditLog } from './log.js';
import { AUDIT_GENESIS, type AuditEntry } from './types.js';
import { verifyAuditLog } from './verify.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-verify-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function lines(): Promise<string[]> {
  const text = await readFile(path, 'utf8');
  expect(text.endsWith('\n')).toBe(true);
  return text.slice(0, -1).split('\n');
}
const save = (ls: string[]) => writeFile(path, `${ls.join('\n')}\n`);
const parse = (line: string) => JSON.parse(line) as AuditEntry;

async function expectBrokenAt(line: number, code?: string) {
  const result = await verifyAuditLog(path);
  expect(result.ok, JSON.stringify(result)).toBe(false);
  if (result.ok) return;
  expect(result.line).toBe(line);
  if (code) expect(result.code).toBe(code);
  expect(result.message).toMatch(new RegExp(`^line ${line}: `));
}

describe('verifyAuditLog', () => {
  it('accepts an intact log of many entries and names its last hash', async () => {
    await writeSampleLog(path, 500);
    const result = await verifyAuditLog(path);
    const all = await lines();
    expect(result).toEqual({
      ok: true,
      path,
      exists: true,
      entries: 500,
      lastHash: hashLine(all[499]!),
      interrupted: expect.any(Array),
    });
    expect(all.map((l) => parse(l).seq)).toEqual(Array.from({ length: 500 }, (_, i) => i + 1));
  });

  it('accepts result entries with and without dropped in one log, and refuses a malformed dropped at its line', async () => {
    const log = await AuditLog.open({ path, session: 'sess-1' });
    const decisionSeq = await log.append(sampleInput(1));
    const refs = { server: 'github', tool: 'create_issue', is_error: false, result: { content: [] } };
    await log.append({ type: 'mcp.result', parentSeq: decisionSeq, refs });
    await log.append({ type: 'mcp.result', parentSeq: decisionSeq, refs: { ...refs, dropped: 3 } });
    await log.append({ type: 'mcp.result', parentSeq: decisionSeq, refs });
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 4 });
    const all = await lines();
    expect(parse(all[1]!).refs).not.toHaveProperty('dropped');
    expect(parse(all[2]!).refs).toMatchObject({ dropped: 3 });

    // A rewritten count with the chain recomputed after it: only the shape check can catch it.
    for (const bad of ['0', '-3', '1.5', '"3"', 'null']) {
      const forged = [...all];
      forged[2] = forged[2]!.replace('"dropped":3', `"dropped":${bad}`);
      forged[3] = forged[3]!.replace(parse(all[3]!).prev, hashLine(forged[2]!));
      await save(forged);
      await expectBrokenAt(3, 'AUDIT_BAD_SHAPE');
    }
  });

  it('reports forwarded calls that have no result entry as interrupted, by the seq of their decision', async () => {
    const log = await AuditLog.open({ path, session: 's' });
    const call = (allowed: boolean) =>
      log.append({
        type: 'mcp.decision',
        refs: { phase: 'call', server: 'docs', tool: 'read', allowed, rule: 'r', arguments: {} },
      });
    const result = (parentSeq: number) =>
      log.append({
        type: 'mcp.result',
        parentSeq,
        refs: { server: 'docs', tool: 'read', is_error: false, result: 'ok' },
      });
    const answered = await call(true);
    const lost = await call(true);
    await result(answered);
    await call(false); // refused: never forwarded, so no result is owed
    await log.append(sampleInput(0)); // an expose decision: not a call
    const inFlight = await call(true);
    const late = await call(true);
    await result(late);
    await log.close();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 8, interrupted: [lost, inFlight] });
  });

  it('treats an absent file and an empty file as an empty log', async () => {
    expect(await verifyAuditLog(path)).toEqual({
      ok: true,
      path,
      exists: false,
      entries: 0,
      lastHash: AUDIT_GENESIS,
      interrupted: [],
    });
    await writeFile(path, '');
    expect(await verifyAuditLog(path)).toEqual({
      ok: true,
      path,
      exists: true,
      entries: 0,
      lastHash: AUDIT_GENESIS,
      interrupted: [],
    });
  });

  it.each([10, 2, 1])('finds one edited byte inside line %i (a value that stays valid)', async (n) => {
    await writeSampleLog(path, 20);
    const all = await lines();
    // Flip the session id: still valid JSON, still the right shape, still canonical.
    all[n - 1] = all[n - 1]!.replace('"session":"sess-1"', '"session":"sess-2"');
    await save(all);
    await expectBrokenAt(n, 'AUDIT_LINE_CHANGED');
  });

  it('finds an edited prev digest on a middle line at that line', async () => {
    await writeSampleLog(path, 20);
    const all = await lines();
    const entry = parse(all[7]!);
    const flipped = entry.prev.endsWith('0') ? `${entry.prev.slice(0, -1)}1` : `${entry.prev.slice(0, -1)}0`;
    all[7] = all[7]!.replace(entry.prev, flipped);
    await save(all);
    await expectBrokenAt(8, 'AUDIT_LINE_CHANGED');
  });

  it('finds an edit that breaks the JSON, the shape or the byte form at that line', async () => {
    await writeSampleLog(path, 20);
    const original = await lines();
    const cases: [string, string][] = [
      [original[4]!.replace('{"seq"', '{"seq" '), 'AUDIT_NOT_CANONICAL'],
      [original[4]!.replace('"type":"', '"type":"x'), 'AUDIT_BAD_SHAPE'],
      [original[4]!.slice(0, -1), 'AUDIT_BAD_JSON'],
      [`${original[4]!}\r`, 'AUDIT_NOT_CANONICAL'],
    ];
    for (const [edited, code] of cases) {
      const all = [...original];
      all[4] = edited;
      await save(all);
      await expectBrokenAt(5, code);
    }
  });

  // The byte-form check compares JSON.stringify of the parsed line after checking key order
  // against the spec, so key order at every level and duplicate keys must each be caught.
  it('finds keys reordered at the top, inside refs and inside refs.policy, and a duplicate key', async () => {
    const log = await AuditLog.open({ path, session: 'sess-1' });
    const policy = { name: 'org', digest: `sha256:${'a'.repeat(64)}` as const, signer: 'ops' };
    for (let i = 1; i <= 6; i++) {
      await log.append({
        type: 'mcp.decision',
        refs: { phase: 'expose', server: 'docs', tool: `t${i}`, allowed: true, rule: 'pinned', policy },
      });
    }
    await log.close();
    const original = await lines();
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 6 });
    const reorder = (line: string, a: string, b: string) => {
      const value = JSON.parse(line) as Record<string, unknown>;
      const keys = Object.keys(value);
      const [i, j] = [keys.indexOf(a), keys.indexOf(b)];
      [keys[i], keys[j]] = [keys[j]!, keys[i]!];
      return JSON.stringify(Object.fromEntries(keys.map((k) => [k, value[k]])));
    };
    const entry = parse(original[2]!);
    const refs = entry.refs as unknown as Record<string, unknown>;
    const cases = [
      reorder(original[2]!, 'session', 'type'),
      original[2]!.replace(JSON.stringify(refs), reorder(JSON.stringify(refs), 'server', 'tool')),
      original[2]!.replace(JSON.stringify(policy), reorder(JSON.stringify(policy), 'name', 'signer')),
      `${original[2]!.slice(0, -1)},"seq":${entry.seq}}`,
    ];
    for (const edited of cases) {
      expect(edited).not.toBe(original[2]);
      const all = [...original];
      all[2] = edited;
      await save(all);
      await expectBrokenAt(3, 'AUDIT_NOT_CANONICAL');
    }
  });

  it('finds a seq that was renumbered at that line', async () => {
    await writeSampleLog(path, 20);
    const all = await lines();
    all[11] = all[11]!.replace('{"seq":12,', '{"seq":13,');
    await save(all);
    await expectBrokenAt(12, 'AUDIT_SEQ_ORDER');
  });

  it.each([1, 9, 19])('finds deleted line %i at the line where it is missing', async (n) => {
    await writeSampleLog(path, 20);
    const all = await lines();
    all.splice(n - 1, 1);
    await save(all);
    await expectBrokenAt(n, 'AUDIT_SEQ_GAP');
  });

  it('finds a garbage line inserted in the middle', async () => {
    await writeSampleLog(path, 20);
    const all = await lines();
    all.splice(6, 0, '{"hello":"world"}');
    await save(all);
    await expectBrokenAt(7, 'AUDIT_BAD_SHAPE');
  });

  it('finds a forged line inserted with the right seq and prev (the next line no longer fits)', async () => {
    await writeSampleLog(path, 20);
    const all = await lines();
    const before = parse(all[5]!);
    const forged = serializeEntry({
      ...parse(all[6]!),
      session: 'forged',
      seq: before.seq + 1,
      prev: hashLine(all[5]!),
    } as AuditEntry);
    all.splice(6, 0, forged);
    await save(all);
    await expectBrokenAt(7, 'AUDIT_LINE_INSERTED');
  });

  it('finds a copy of an earlier line inserted later, and a line repeated', async () => {
    await writeSampleLog(path, 20);
    const original = await lines();
    const copied = [...original];
    copied.splice(12, 0, original[2]!);
    await save(copied);
    await expectBrokenAt(13, 'AUDIT_LINE_INSERTED');

    const repeated = [...original];
    repeated.splice(12, 0, original[11]!);
    await save(repeated);
    await expectBrokenAt(13, 'AUDIT_DUPLICATE_LINE');
  });

  it.each([3, 18])('finds lines %i and the next one swapped, at the first of them', async (n) => {
    await writeSampleLog(path, 20);
    const all = await lines();
    [all[n - 1], all[n]] = [all[n]!, all[n - 1]!];
    await save(all);
    await expectBrokenAt(n, 'AUDIT_SEQ_ORDER');
  });

  it('reads lines across the ends of its read buffer: lines swapped, repeated or inserted there are found at their line', async () => {
    await writeSampleLog(path, 3000);
    const all = await lines();
    expect(await verifyAuditLog(path)).toMatchObject({
      ok: true,
      entries: 3000,
      lastHash: hashLine(all[2999]!),
    });
    // The reader's buffer is 256 KiB: the lines around that offset are split across two reads.
    let edge = 0;
    for (let offset = 0; offset <= 256 * 1024; edge++) offset += Buffer.byteLength(all[edge]!) + 1;
    edge -= 1;
    for (let k = edge - 1; k <= edge + 2; k++) {
      const swapped = [...all];
      [swapped[k], swapped[k + 1]] = [swapped[k + 1]!, swapped[k]!];
      await save(swapped);
      await expectBrokenAt(k + 1, 'AUDIT_SEQ_ORDER');
      await save([...all.slice(0, k + 1), all[k]!, ...all.slice(k + 1)]);
      await expectBrokenAt(k + 2, 'AUDIT_DUPLICATE_LINE');
      await save([...all.slice(0, k + 1), all[k - 5]!, ...all.slice(k + 1)]);
      await expectBrokenAt(k + 2, 'AUDIT_LINE_INSERTED');
    }
  });

  it('reads a line longer than its read buffer to report it at its line, and refuses one over 1 MiB as not a log', async () => {
    await writeSampleLog(path, 5);
    const all = await lines();
    await save([...all, 'x'.repeat(600 * 1024), all[0]!]);
    await expectBrokenAt(6, 'AUDIT_BAD_JSON');
    await save([...all, 'x'.repeat(1024 * 1024 + 1)]);
    expect(await verifyAuditLog(path)).toMatchObject({
      ok: false,
      line: 0,
      code: 'AUDIT_BAD_JSON',
      message: 'a line is longer than 1048576 bytes; this is not an audit log',
    });
  });

  it('finds a line swapped with the last line', async () => {
    await writeSampleLog(path, 20);
    const all = await lines();
    [all[4], all[19]] = [all[19]!, all[4]!];
    await save(all);
    await expectBrokenAt(5);
  });

  it('finds a file truncated mid-line (torn tail)', async () => {
    await writeSampleLog(path, 20);
    const text = await readFile(path, 'utf8');
    const cut = text.lastIndexOf('\n', text.length - 2) + 25;
    await writeFile(path, text.slice(0, cut));
    await expectBrokenAt(20, 'AUDIT_TORN_LINE');
  });

  it('finds a wrong genesis on line 1', async () => {
    await writeSampleLog(path, 5);
    const all = await lines();
    all[0] = all[0]!.replace(AUDIT_GENESIS, `sha256:${'1'.repeat(64)}`);
    await save(all);
    await expectBrokenAt(1, 'AUDIT_BAD_GENESIS');
  });

  it('finds two logs joined together where the second starts', async () => {
    await writeSampleLog(path, 5);
    const first = await lines();
    await save([...first, ...first]);
    await expectBrokenAt(6, 'AUDIT_SEQ_ORDER');
  });

  it('reports bytes that are not UTF-8, and a blank line, at their line', async () => {
    await writeSampleLog(path, 5);
    const text = await readFile(path);
    const all = await lines();
    await writeFile(path, Buffer.concat([text, Buffer.from([0xff, 0xfe, 0x0a])]));
    await expectBrokenAt(6, 'AUDIT_BAD_JSON');
    await save([...all.slice(0, 2), '', ...all.slice(2)]);
    await expectBrokenAt(3, 'AUDIT_BAD_JSON');
  });

  it('verifies cleanly while a writer keeps appending (never a half-written last line)', async () => {
    const log = await AuditLog.open({ path, session: 'busy' });
    let writing = true;
    const writer = (async () => {
      for (let i = 0; i < 60; i++) {
        await Promise.all(Array.from({ length: 10 }, (_, j) => log.append(sampleInput(i * 10 + j))));
      }
      writing = false;
    })();
    const results = [];
    while (writing) results.push(await verifyAuditLog(path));
    await writer;
    await log.close();
    expect(results.length).toBeGreaterThan(0);
    for (const result of results) expect(result, JSON.stringify(result)).toMatchObject({ ok: true });
    expect(await verifyAuditLog(path)).toMatchObject({ ok: true, entries: 600 });
  });

  it('cannot see a rewrite of the last line that keeps its prev (that is what anchoring lastHash is for)', async () => {
    await writeSampleLog(path, 8);
    const before = await verifyAuditLog(path);
    const all = await lines();
    all[7] = all[7]!.replace('"port":443', '"port":444');
    await save(all);
    const after = await verifyAuditLog(path);
    expect(after.ok).toBe(true);
    // ...but the anchor moved, which is how a copy kept elsewhere catches it.
    expect(after.ok && before.ok && after.lastHash !== before.lastHash).toBe(true);
  });
});

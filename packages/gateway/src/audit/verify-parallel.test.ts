import { mkdtemp, open, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { writeSampleLog } from './__fixtures__/sample.js';
import { AuditLog } from './log.js';
import { verifyAuditLog } from './verify.js';
import { verifyInParallel } from './verify-parallel.js';

let dir: string;
let path: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rf-audit-parallel-'));
  path = join(dir, 'audit.jsonl');
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

/** The parallel pass over the file as it is now, cut into slices of about `sliceBytes`. */
async function parallel(sliceBytes: number) {
  const handle = await open(path, 'r');
  try {
    return await verifyInParallel(path, handle, (await handle.stat()).size, sliceBytes);
  } finally {
    await handle.close();
  }
}

async function lines(): Promise<string[]> {
  return (await readFile(path, 'utf8')).slice(0, -1).split('\n');
}
const save = (ls: string[], tail = '\n') => writeFile(path, `${ls.join('\n')}${tail}`);

/** Index of the line that starts slice 2 when `ls` (as a file) is cut in two. */
function cutIndex(ls: string[]): number {
  const half = Math.floor((Buffer.byteLength(ls.join('\n')) + 1) / 2);
  let offset = 0;
  for (const [i, line] of ls.entries()) {
    if (offset >= half) return i;
    offset += Buffer.byteLength(line) + 1;
  }
  throw new Error('no second slice');
}

/**
 * The first `edit(k)` near the middle whose damage starts exactly where slice 2 does, so that
 * both slices are clean on their own and only the stitching can see it.
 */
function atTheCut(ls: string[], edit: (k: number) => string[]): string[] {
  const middle = cutIndex(ls);
  for (let k = middle - 20; k <= middle + 20; k++) {
    const edited = edit(k);
    if (cutIndex(edited) === k) return edited;
  }
  throw new Error('no edit lands on the cut');
}

/** Cut in two: slices of a bit less than half the file. */
const inTwo = (ls: string[]) => parallel(Math.floor(Buffer.byteLength(ls.join('\n')) / 2) - 200);

// Each slice is a worker thread; from TypeScript source (vitest) every worker first loads the
// TypeScript compiler to strip types, which takes seconds on a loaded machine.
describe('verifyInParallel', { timeout: 180_000 }, () => {
  it('gives the sequential walk’s verdict on an intact log, in 2 and in 4 slices', async () => {
    await writeSampleLog(path, 800);
    const size = (await readFile(path)).length;
    const sequential = await verifyAuditLog(path);
    expect(sequential.ok).toBe(true);
    if (!sequential.ok) return;
    for (const slices of [2, 4]) {
      expect(await parallel(Math.floor(size / slices))).toEqual({
        entries: 800,
        lastHash: sequential.lastHash,
        interrupted: sequential.interrupted,
      });
    }
  });

  it('joins the calls left open across slices: a result in a later slice closes an earlier decision', async () => {
    // 300 calls; each result is written 150 entries after its decision, so many cross the cut;
    // every seventh call never gets a result (its gateway was killed with it in flight).
    const log = await AuditLog.open({ path, session: 'sess-1' });
    await log.append({ type: 'gateway.start', refs: { pid: process.pid } });
    const decisions: number[] = [];
    const pending: number[] = [];
    for (let i = 0; i < 300; i++) {
      const seq = await log.append({
        type: 'mcp.decision',
        refs: { phase: 'call', server: 's', tool: 't', allowed: true, rule: 'default', arguments: { i } },
      });
      decisions.push(seq);
      if (i % 7 !== 0) pending.push(seq);
      if (pending.length > 75) {
        const parent = pending.shift() as number;
        await log.append({
          type: 'mcp.result',
          parentSeq: parent,
          refs: { server: 's', tool: 't', is_error: false, result: { content: [] } },
        });
      }
    }
    await log.close();
    const open = [...decisions.filter((_, i) => i % 7 === 0), ...pending].sort((a, b) => a - b);
    const sequential = await verifyAuditLog(path);
    expect(sequential).toMatchObject({ ok: true, interrupted: open });
    const size = (await readFile(path)).length;
    for (const slices of [2, 4]) {
      expect(await parallel(Math.floor(size / slices))).toMatchObject({ interrupted: open });
    }
  });

  // Every slice is clean on its own in these: only the stitching between slices can see them.
  it('refuses to vouch for a line deleted at the cut, or a second log joined at the cut', async () => {
    await writeSampleLog(path, 400);
    const original = await lines();

    const deleted = atTheCut(original, (k) => original.filter((_, i) => i !== k));
    await save(deleted);
    expect(await inTwo(deleted)).toBeUndefined();

    const joined = atTheCut(original, (k) => [
      ...original.slice(0, k),
      ...original.slice(0, original.length - k),
    ]);
    await save(joined);
    expect(await inTwo(joined)).toBeUndefined();
  });

  it('refuses to vouch for a bad line inside a slice, a torn tail and a wrong start', async () => {
    await writeSampleLog(path, 400);
    const original = await lines();

    const reformatted = [...original];
    const inside = cutIndex(original) + 10;
    reformatted[inside] = (reformatted[inside] as string).replace('{"seq"', '{ "seq"');
    await save(reformatted);
    expect(await inTwo(reformatted)).toBeUndefined();

    await save(original, '');
    expect(await inTwo(original)).toBeUndefined();

    await save(original.slice(1));
    expect(await inTwo(original.slice(1))).toBeUndefined();
  });

  it('leaves the report to the sequential walk, which still names the line', async () => {
    await writeSampleLog(path, 400);
    const original = await lines();
    const cut = cutIndex(original);
    await save(original.filter((_, i) => i !== cut));
    expect(await verifyAuditLog(path)).toMatchObject({ ok: false, line: cut + 1, code: 'AUDIT_SEQ_GAP' });
  });
});

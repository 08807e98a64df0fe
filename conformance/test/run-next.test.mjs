// run-next.mjs end to end with a stand-in suite (test/fake-suite/fake-suite-next.mjs) and stand-in
// requirement sets: the real v2 fixture, scripted results. Only the scored scenarios count, a
// repeated check id counts per occurrence, thresholds come per revision and mode from a file, and
// a direct run that differs from the inventory measures nothing. The real suite runs in CI.
import { execFile } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const RUN = fileURLToPath(new URL('../run-next.mjs', import.meta.url));
const FAKE = fileURLToPath(new URL('fake-suite/fake-suite-next.mjs', import.meta.url));
const dirs = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const REQUIREMENTS = {
  '2025-11-25':
    'server:\n  - ping\n  - tools-list\n\nnot_scored:\n  - scenario: json-schema-2020-12\n    leg: server\n    reason: pending\n',
  '2026-07-28':
    'server:\n  - server-stateless\n\nnot_scored:\n  - scenario: tasks-lifecycle\n    leg: server\n    reason: extension\n',
};
const INVENTORY = {
  suite: '@modelcontextprotocol/conformance@fake',
  sets: {
    '2025-11-25': { scenarios: { ping: ['ping'], 'tools-list': ['tools-list', 'wire-schema-valid'] } },
    '2026-07-28': { scenarios: { 'server-stateless': ['meta-400', 'meta-400', 'discover'] } },
  },
};
const ok = (id) => ({ id, status: 'SUCCESS' });
const bad = (id) => ({ id, status: 'FAILURE', errorMessage: `${id} failed` });
const allPass = () => ({
  '2025-11-25': {
    ping: [ok('ping')],
    'tools-list': [ok('tools-list'), ok('wire-schema-valid')],
    'json-schema-2020-12': [ok('json-schema-2020-12-tool-found'), bad('json-schema-2020-12-$defs')],
  },
  '2026-07-28': {
    'server-stateless': [ok('meta-400'), ok('meta-400'), ok('discover')],
    'tasks-lifecycle': [bad('tasks-create')],
  },
});
const THRESHOLDS = { '2025-11-25': { direct: { http: 3 } }, '2026-07-28': { direct: { http: 3 } } };

function runNext(args, { plan = allPass(), thresholds = THRESHOLDS, inventory = INVENTORY } = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-run-next-'));
  dirs.push(dir);
  copyFileSync(FAKE, join(dir, 'fake-suite-next.mjs'));
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(plan));
  mkdirSync(join(dir, 'requirements'));
  for (const [revision, text] of Object.entries(REQUIREMENTS))
    writeFileSync(join(dir, 'requirements', `${revision}.yaml`), text);
  writeFileSync(join(dir, 'thresholds.json'), JSON.stringify(thresholds));
  writeFileSync(join(dir, 'checks.json'), JSON.stringify(inventory));
  const out = join(dir, 'results', 'next.json');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        RUN,
        ...args,
        '--thresholds',
        join(dir, 'thresholds.json'),
        '--inventory',
        join(dir, 'checks.json'),
        '--out',
        out,
      ],
      {
        env: {
          ...process.env,
          CONFORMANCE_NODE: process.execPath,
          CONFORMANCE_SUITE_BIN: join(dir, 'fake-suite-next.mjs'),
          CONFORMANCE_REQUIREMENTS_DIR: dir,
        },
      },
      (error, stdout, stderr) => {
        let summary;
        try {
          summary = JSON.parse(readFileSync(out, 'utf8'));
        } catch {}
        resolve({ code: error ? error.code : 0, stdout, stderr, summary });
      },
    );
  });
}

describe('run-next.mjs --direct', () => {
  it('scores each requirement set on its scored scenarios only, and reports the others apart', async () => {
    const result = await runNext(['--direct']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.summary.verdicts).toEqual([
      {
        revision: '2025-11-25',
        mode: 'direct',
        transport: 'http',
        passed: 3,
        total: 3,
        expected: 3,
        ok: true,
      },
      {
        revision: '2026-07-28',
        mode: 'direct',
        transport: 'http',
        passed: 3,
        total: 3,
        expected: 3,
        ok: true,
      },
    ]);
    expect(result.stdout).toContain(
      'not scored by 2026-07-28 (run for visibility): 0/1 reported checks pass (tasks-lifecycle 0/1)',
    );
    expect(result.stdout).toContain(
      'conformance 2025-11-25 direct http: 3/3 scored checks pass (threshold 3)',
    );
  });

  it('exits 1 when one occurrence of a repeated check fails, and says by how much', async () => {
    const plan = allPass();
    plan['2026-07-28']['server-stateless'] = [ok('meta-400'), bad('meta-400'), ok('discover')];
    const result = await runNext(['--direct', '--requirements', '2026-07-28'], { plan });
    expect(result.code).toBe(1);
    expect(result.stdout).toContain(
      'conformance 2026-07-28 direct http: 2/3 scored checks pass (threshold 3) — 1 below the threshold',
    );
  });

  it('says which line of the thresholds file to raise when a count is above it', async () => {
    const result = await runNext(['--direct', '--requirements', '2025-11-25'], {
      thresholds: { '2025-11-25': { direct: { http: 2 } } },
    });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('raise "2025-11-25"."direct"."http" to 3');
  });

  it('measures nothing when the direct run reports scored checks the inventory does not have', async () => {
    const plan = allPass();
    plan['2025-11-25'].ping.push(ok('ping-again'));
    const result = await runNext(['--direct'], { plan });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('ping: check ping-again not in the inventory');
  });

  it('measures nothing when a scored scenario did not run', async () => {
    const plan = allPass();
    delete plan['2025-11-25']['tools-list'];
    const result = await runNext(['--direct', '--requirements', '2025-11-25'], { plan });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('the suite did not run these scored scenarios: tools-list');
  });
});

// The runner end to end, with a stand-in suite (test/fake-suite) on this Node: real fixture, real
// gateway and proxy for --through-ringfence, scripted results. The real suite runs in CI
// (npm run conformance).
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const here = (path) => fileURLToPath(new URL(path, import.meta.url));
const RUN = here('../run.mjs');
const inventory = JSON.parse(readFileSync(here('../checks.json'), 'utf8'));
const dirs = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Every inventory check with SUCCESS, changed by `edit(scenario, checks)`. */
function plan(edit = (_scenario, checks) => checks, extra = {}) {
  const scenarios = Object.fromEntries(
    Object.entries(inventory.scenarios).map(([scenario, ids]) => [
      scenario,
      edit(
        scenario,
        ids.map((id) => ({ id, status: 'SUCCESS' })),
      ),
    ]),
  );
  return { scenarios, ...extra };
}

function runner(args, thePlan, env = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'conformance-run-'));
  dirs.push(dir);
  copyFileSync(here('fake-suite/fake-suite.mjs'), join(dir, 'fake-suite.mjs'));
  writeFileSync(join(dir, 'plan.json'), JSON.stringify(thePlan));
  const out = join(dir, 'results', 'latest.json');
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [RUN, ...args, '--out', out],
      {
        env: {
          ...process.env,
          CONFORMANCE_NODE: process.execPath,
          CONFORMANCE_SUITE_BIN: join(dir, 'fake-suite.mjs'),
          ...env,
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

const total = Object.values(inventory.scenarios).flat().length;

describe('run.mjs --direct', () => {
  it('passes at the threshold, prints the table and writes the summary', async () => {
    const result = await runner(['--direct', '--expect-direct', String(total)], plan());
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/^ {2}PASS {2}tools-call-with-progress +tools-call-with-progress$/m);
    expect(result.stdout).toContain(`conformance direct: ${total}/${total} checks pass (threshold ${total})`);
    expect(result.summary.verdicts).toEqual([
      { mode: 'direct', passed: total, total, expected: total, ok: true },
    ]);
    expect(result.summary.modes.direct.rows).toHaveLength(total);
  });

  it('exits 1 below the threshold', async () => {
    const oneFails = plan((scenario, checks) =>
      scenario === 'ping' ? [{ id: 'ping', status: 'FAILURE', errorMessage: 'no pong' }] : checks,
    );
    const result = await runner(['--direct', '--expect-direct', String(total)], oneFails);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL {2}ping/m);
    expect(result.stdout).toContain('[1] no pong');
    expect(result.stdout).toContain(
      `conformance direct: ${total - 1}/${total} checks pass (threshold ${total}) — 1 below`,
    );
    expect(result.summary.verdicts[0].ok).toBe(false);
  });

  it('exits 2 when the direct run does not report exactly the inventory (the suite changed)', async () => {
    const missing = plan((scenario, checks) => (scenario === 'tools-list' ? [] : checks));
    const result = await runner(['--direct'], missing);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /differ from conformance\/checks.json .*\n {2}tools-list: check tools-list missing/,
    );
  });

  it('exits 2, whatever it counted, when the suite reached for anything but loopback', async () => {
    const result = await runner(['--direct'], plan(undefined, { phoneHome: true }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/tried to reach beyond loopback.*\n.*refused a connection to 0\.0\.0\.0:9/);
  });

  it('does not run the suite on a Node where the guard does not take hold', async () => {
    const result = await runner(['--direct'], plan(), {
      CONFORMANCE_NODE: here('fake-suite/node-without-guard.sh'),
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /the loopback guard does not work on .*node-without-guard\.sh .*the suite is not run unguarded/,
    );
    expect(result.summary).toBeUndefined();
  });

  it('exits 2 when the suite did not finish', async () => {
    const result = await runner(['--direct'], plan(undefined, { noTotals: true }));
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/printed no "Total: N passed, M failed" line/);
  });

  it('counts a scenario that crashed as its check failing, with the reason', async () => {
    const crashed = plan((scenario, checks) => (scenario === 'resources-list' ? 'crash' : checks));
    const result = await runner(['--direct', '--expect-direct', String(total)], crashed);
    expect(result.code).toBe(1);
    expect(result.stdout).toMatch(/^ {2}FAIL {2}resources-list/m);
    expect(result.stdout).toContain('the scenario failed to run: Error: fake crash');
  });

  it('says to raise the threshold when more pass than it asks', async () => {
    const result = await runner(['--direct', '--expect-direct', '7'], plan());
    expect(result.code).toBe(0);
    expect(result.stdout).toContain(
      `conformance direct: ${total}/${total} checks pass (threshold 7) — above the threshold: raise --expect-direct to ${total}`,
    );
  });

  it('refuses bad arguments with exit 2 and the usage', async () => {
    const result = await runner(['--direct', '--expect-direct', 'lots'], plan());
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/--expect-direct takes a number of checks, not "lots"\nusage: /);
  });
});

describe('run.mjs --through-ringfence', () => {
  it('reaches the fixture through a real gateway and the token proxy, and scores what the suite says', async () => {
    const crashed = plan((scenario, checks) =>
      scenario === 'prompts-list'
        ? 'crash'
        : scenario === 'elicitation-sep1034-defaults'
          ? [{ id: 'elicitation-sep1034-general', status: 'FAILURE', errorMessage: 'Failed: not listed' }]
          : checks,
    );
    const result = await runner(['--through-ringfence', '--expect-through', String(total - 6)], crashed);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    expect(result.summary.modes.through.gateway).toMatchObject({ server: 'everything' });
    expect(['only', 'prefixed']).toContain(result.summary.modes.through.gateway.serve);
    expect(result.summary.verdicts[0]).toMatchObject({ passed: total - 6, total, ok: true });
    expect(result.stdout).toMatch(/^ {2}MISS {2}elicitation-sep1034-string-default/m);
    expect(result.stdout).toContain('the scenario failed to run: Error: fake crash');
    expect(result.stdout).not.toContain('raise --expect-through');
  });
});

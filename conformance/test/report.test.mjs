// Reading the suite's results and scoring them: a count the runner cannot vouch for is refused,
// and a scenario that stops early costs every check it would have reported.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { causes, formatMode, inventoryDifferences, score } from '../lib/report.mjs';
import { readSuiteRun } from '../lib/suite.mjs';

const inventory = {
  suite: 'x@1',
  scenarios: { ping: ['ping'], elicit: ['elicit-a', 'elicit-b'], prompts: ['prompts-list'] },
};
const ok = (id) => ({ id, status: 'SUCCESS' });
const bad = (id, errorMessage) => ({ id, status: 'FAILURE', errorMessage });

describe('readSuiteRun', () => {
  const dirs = [];
  afterEach(() => {
    for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
  });
  function resultsDir(files) {
    const dir = mkdtempSync(join(tmpdir(), 'conformance-report-'));
    dirs.push(dir);
    for (const [scenario, checks] of Object.entries(files)) {
      const sub = join(dir, `server-${scenario}-2026-11-30T13-42-46-826Z`);
      mkdirSync(sub);
      writeFileSync(join(sub, 'checks.json'), JSON.stringify(checks));
    }
    return dir;
  }
  const announce = (...names) => names.map((n) => `=== Running scenario: ${n} ===`).join('\n');

  it('reads each announced scenario, and one failure for a scenario that wrote no results', () => {
    const dir = resultsDir({ ping: [ok('ping'), { id: 'note', status: 'INFO' }], 'elicit-x-2': [ok('e')] });
    const runs = readSuiteRun({
      stdout: `${announce('ping', 'elicit-x-2', 'prompts')}\nTotal: 2 passed, 1 failed\n`,
      stderr: 'Failed to run scenario prompts: Error: socket hang up\n    at x',
      resultsDir: dir,
    });
    expect(runs.map((r) => r.scenario)).toEqual(['ping', 'elicit-x-2', 'prompts']);
    expect(runs[2].checks).toEqual([
      { id: 'prompts', status: 'FAILURE', errorMessage: 'the scenario failed to run: Error: socket hang up' },
    ]);
  });

  it('refuses a run without the totals line, or whose totals differ from its files', () => {
    const dir = resultsDir({ ping: [ok('ping')] });
    expect(() => readSuiteRun({ stdout: announce('ping'), stderr: '', resultsDir: dir })).toThrow(
      /did not finish/,
    );
    expect(() =>
      readSuiteRun({ stdout: `${announce('ping')}\nTotal: 2 passed, 0 failed`, stderr: '', resultsDir: dir }),
    ).toThrow(/totals \(2 passed, 0 failed\) differ from its results files \(1 passed, 0 failed\)/);
  });

  it('refuses results of a scenario the suite did not announce', () => {
    const dir = resultsDir({ ping: [ok('ping')], other: [ok('o')] });
    expect(() =>
      readSuiteRun({ stdout: `${announce('ping')}\nTotal: 2 passed, 0 failed`, stderr: '', resultsDir: dir }),
    ).toThrow(/results for other, a scenario the suite did not announce/);
  });

  it('takes a scenario folder without checks.json (0.2.x leaves one when a scenario throws) as no results', () => {
    const dir = resultsDir({ ping: [ok('ping')] });
    mkdirSync(join(dir, 'server-tasks-x-2026-11-30T13-42-46-900Z'));
    const runs = readSuiteRun({
      stdout: `${announce('ping', 'tasks-x')}\nTotal: 1 passed, 1 failed\n`,
      stderr: 'Failed to run scenario tasks-x: Error: Bad Request: Server not initialized\n',
      resultsDir: dir,
    });
    expect(runs[1]).toEqual({
      scenario: 'tasks-x',
      checks: [
        {
          id: 'tasks-x',
          status: 'FAILURE',
          errorMessage: 'the scenario failed to run: Error: Bad Request: Server not initialized',
        },
      ],
    });
  });
});

describe('score', () => {
  it('scores against the inventory: a scenario that stopped early misses its checks, with its reason', () => {
    const result = score(
      [
        { scenario: 'ping', checks: [ok('ping')] },
        { scenario: 'elicit', checks: [bad('elicit-general', 'Failed: no elicitation')] },
      ],
      inventory,
    );
    expect(result).toMatchObject({ passed: 1, total: 4 });
    expect(result.rows).toEqual([
      { scenario: 'ping', id: 'ping', status: 'pass' },
      { scenario: 'elicit', id: 'elicit-a', status: 'not reported', reason: 'Failed: no elicitation' },
      { scenario: 'elicit', id: 'elicit-b', status: 'not reported', reason: 'Failed: no elicitation' },
      {
        scenario: 'prompts',
        id: 'prompts-list',
        status: 'not reported',
        reason: 'the suite did not run this scenario',
      },
    ]);
  });

  it('scores an id that occurs several times in a scenario occurrence by occurrence', () => {
    const twice = { scenarios: { stateless: ['meta-400', 'meta-400', 'meta-400', 'discover'] } };
    const result = score(
      [{ scenario: 'stateless', checks: [ok('meta-400'), bad('meta-400', 'got 200'), ok('discover')] }],
      twice,
    );
    expect(result.rows.map((r) => r.status)).toEqual(['pass', 'fail', 'not reported', 'pass']);
    expect(result.passed).toBe(2);
    expect(
      inventoryDifferences([{ scenario: 'stateless', checks: [ok('meta-400'), ok('discover')] }], twice),
    ).toEqual(['stateless: check meta-400 missing (1 of 3)']);
  });

  it('counts a check reported as a warning as not passed', () => {
    const result = score([{ scenario: 'ping', checks: [{ id: 'ping', status: 'WARNING' }] }], {
      scenarios: { ping: ['ping'] },
    });
    expect(result.passed).toBe(0);
    expect(result.rows[0].reason).toBe('the scenario ended without this check');
  });
});

describe('inventoryDifferences', () => {
  it('is empty for a run that reports exactly the inventory, and names every difference otherwise', () => {
    const full = [
      { scenario: 'ping', checks: [ok('ping')] },
      { scenario: 'elicit', checks: [ok('elicit-a'), bad('elicit-b', 'x'), { id: 'i', status: 'INFO' }] },
      { scenario: 'prompts', checks: [ok('prompts-list')] },
    ];
    expect(inventoryDifferences(full, inventory)).toEqual([]);
    const off = [
      { scenario: 'ping', checks: [ok('ping'), ok('ping-2')] },
      { scenario: 'elicit', checks: [ok('elicit-a')] },
      { scenario: 'new', checks: [ok('n')] },
    ];
    expect(inventoryDifferences(off, inventory)).toEqual([
      'ping: check ping-2 not in the inventory',
      'elicit: check elicit-b missing',
      'scenario prompts did not run',
      'scenario new is not in the inventory',
    ]);
  });
});

describe('causes and formatMode', () => {
  const rows = [
    {
      scenario: 's',
      id: 'a',
      status: 'fail',
      reason: 'Failed: MCP error -32602: MCP error -32602: "x" is not listed',
    },
    { scenario: 's', id: 'b', status: 'not reported', reason: 'Failed: MCP error -32602: "y" is not listed' },
    { scenario: 's', id: 'c', status: 'fail', reason: 'MCP error -32601: Method not found' },
    { scenario: 's', id: 'd', status: 'pass' },
  ];

  it('groups failures whose reasons differ only in quoted names, largest group first', () => {
    expect(causes(rows)).toEqual([
      { cause: 'MCP error -32602: "…" is not listed', ids: ['a', 'b'] },
      { cause: 'MCP error -32601: Method not found', ids: ['c'] },
    ]);
  });

  it("prints each check and the count, with no line CI would take for a test runner's closing count", () => {
    const text = formatMode('direct', { rows, passed: 1, total: 4 });
    expect(text).toMatch(/^ {2}PASS {2}d {2}s$/m);
    expect(text).toMatch(/^ {2}MISS {2}b {2}s$/m);
    expect(text).toMatch(/direct: 1\/4 checks pass$/);
    expect(text).not.toMatch(/^\s*(\w+:\s*)?\d+ passed, \d+ failed/m);
  });
});

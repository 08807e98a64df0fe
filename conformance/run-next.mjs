#!/usr/bin/env node
// The newest MCP conformance suite (conformance/suite-next, 0.2.0-alpha.12) as a judge, per spec
// revision (docs/conformance.md). Beside run.mjs (0.1.16), which it leaves as it is.
//
//   node conformance/run-next.mjs [--requirements REVISION]... [--direct] [--through-ringfence]
//                                 [--through-ringfence-allowed] [--through-ringfence-pinned-2025] [--no-thresholds]
//                                 [--record-inventory] [--out FILE]
//
// --requirements 2025-11-25 | 2026-07-28   the suite's frozen requirement set (default: both)
// --direct / --through-ringfence / --through-ringfence-allowed   as in run.mjs, against the v2
//                      fixture (fixtures/next/server.mjs); default: all three
// thresholds           conformance/next/thresholds.json (--thresholds FILE): the least number of
//                      scored checks that must pass, per revision, mode and transport
//                      (--no-thresholds: report only)
// --inventory FILE     the scored checks the direct run reports (default conformance/next/checks.json)
// --record-inventory   write what the direct run reports as conformance/next/checks.json (after a
//                      suite upgrade; review the diff)
//
// Only the scenarios a requirement set scores are counted, against the inventory of their checks
// (a check a failing scenario never reports counts as failed); the set's not-scored scenarios
// (extensions, pending) run too and are reported apart. The suite reaches servers by URL only, so
// every cell is over streamable HTTP: see docs/conformance.md for stdio.
//
// Exit: 0 every count met its threshold, 1 a count is below it, 2 nothing could be measured.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startUntil, stop } from './lib/processes.mjs';
import { formatMode, inventoryDifferences, score } from './lib/report.mjs';
import { REVISIONS, readRequirements } from './lib/requirements.mjs';
import { serveThroughRingfence } from './lib/ringfence.mjs';
import { runSuite, SUITE_NEXT_DIR, suiteVersion } from './lib/suite.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'next', 'server.mjs');
const INVENTORY = join(here, 'next', 'checks.json');
const THRESHOLDS = join(here, 'next', 'thresholds.json');
const SUITE_PACKAGE = join(SUITE_NEXT_DIR, 'node_modules', '@modelcontextprotocol', 'conformance');
const SERVER_NAME = 'everything';
const TRANSPORT = 'http';
const MODES = /** @type {const} */ (['direct', 'through', 'allowed', 'pinned']);
const USAGE =
  'usage: node conformance/run-next.mjs [--requirements 2025-11-25|2026-07-28]... [--direct] [--through-ringfence] [--through-ringfence-allowed] [--through-ringfence-pinned-2025] [--thresholds FILE | --no-thresholds] [--inventory FILE] [--record-inventory] [--out FILE]';

class UsageError extends Error {}

function parseArgs(argv) {
  const options = {
    revisions: /** @type {string[]} */ ([]),
    modes: /** @type {string[]} */ ([]),
    thresholds: true,
    thresholdsFile: THRESHOLDS,
    inventoryFile: INVENTORY,
    record: false,
    out: join(here, 'results', 'next.json'),
  };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === '--requirements') {
      const revision = argv[++i];
      if (!REVISIONS.includes(/** @type {any} */ (revision)))
        throw new UsageError(`--requirements takes ${REVISIONS.join(' or ')}, not ${revision}`);
      options.revisions.push(revision);
    } else if (arg === '--direct') options.modes.push('direct');
    else if (arg === '--through-ringfence') options.modes.push('through');
    else if (arg === '--through-ringfence-allowed') options.modes.push('allowed');
    else if (arg === '--through-ringfence-pinned-2025') options.modes.push('pinned');
    else if (arg === '--no-thresholds') options.thresholds = false;
    else if (arg === '--thresholds' || arg === '--inventory') {
      const file = argv[++i];
      if (!file) throw new UsageError(`${arg} needs a file`);
      if (arg === '--thresholds') options.thresholdsFile = file;
      else options.inventoryFile = file;
    } else if (arg === '--record-inventory') options.record = true;
    else if (arg === '--out') {
      options.out = argv[++i];
      if (!options.out) throw new UsageError('--out needs a file');
    } else throw new UsageError(`unknown argument ${arg}`);
  }
  if (options.revisions.length === 0) options.revisions = [...REVISIONS];
  if (options.modes.length === 0) options.modes = [...MODES];
  if (options.record && !options.modes.includes('direct'))
    throw new UsageError('--record-inventory records the direct run: add --direct');
  options.revisions = [...new Set(options.revisions)];
  options.modes = MODES.filter((m) => options.modes.includes(m));
  return options;
}

async function startFixture() {
  const started = await startUntil(process.execPath, [FIXTURE], {
    ready: /^\{"url":"(http:[^"]+)"\}$/,
    timeoutMs: 30_000,
  });
  return { url: started.match[1], close: () => stop(started.child) };
}

/** Checks (SUCCESS or FAILURE) of the scored scenarios, as an inventory: { scenario: [id] }. */
function inventoryOf(runs, scored) {
  return Object.fromEntries(
    runs
      .filter((r) => scored.includes(r.scenario))
      .map((r) => [
        r.scenario,
        r.checks.filter((c) => c.status === 'SUCCESS' || c.status === 'FAILURE').map((c) => c.id),
      ]),
  );
}

/** Not-scored scenarios: how many of the checks they reported passed, by reason. */
function notScoredSummary(runs, notScored) {
  const rows = notScored.map(({ scenario, reason }) => {
    const checks = (runs.find((r) => r.scenario === scenario)?.checks ?? []).filter(
      (c) => c.status === 'SUCCESS' || c.status === 'FAILURE',
    );
    return {
      scenario,
      reason,
      passed: checks.filter((c) => c.status === 'SUCCESS').length,
      reported: checks.length,
    };
  });
  return {
    passed: rows.reduce((n, r) => n + r.passed, 0),
    reported: rows.reduce((n, r) => n + r.reported, 0),
    rows,
  };
}

/** One mode: fixture (and gateway) up, the suite once per requirement set, everything stopped. */
async function measureMode(mode, options, requirements, inventory, resultsDir) {
  const fixture = await startFixture();
  let through;
  const results = [];
  try {
    let url = fixture.url;
    if (mode !== 'direct') {
      through = await serveThroughRingfence({
        fixtureUrl: fixture.url,
        name: SERVER_NAME,
        allow: mode === 'allowed' || mode === 'pinned',
        ...(mode === 'pinned' ? { protocol: '2025' } : {}),
      });
      url = through.url;
    }
    // The gateway's audit log is read after each set's run: what that run added is its own.
    let audited = through?.serverRequests();
    for (const revision of options.revisions) {
      const started = Date.now();
      const workDir = join(resultsDir, revision, mode);
      const run = await runSuite({
        url,
        workDir,
        suiteDir: SUITE_NEXT_DIR,
        args: ['--requirements', revision],
      });
      if (run.blocked.length > 0)
        throw new Error(
          `the suite tried to reach beyond loopback, so this run counts for nothing:\n${run.blocked.join('\n')}`,
        );
      const { scored, notScored } = requirements[revision];
      const missing = scored.filter((s) => !run.runs.some((r) => r.scenario === s));
      if (missing.length > 0)
        throw new Error(`the suite did not run these scored scenarios: ${missing.join(', ')}`);
      if (mode === 'direct' && options.record) {
        inventory.sets[revision] = { scenarios: inventoryOf(run.runs, scored) };
      }
      const set = inventory.sets[revision];
      if (!set)
        throw new Error(
          `conformance/next/checks.json has no inventory for ${revision}; record it with --direct --record-inventory`,
        );
      if (mode === 'direct') {
        const differences = inventoryDifferences(
          run.runs.filter((r) => scored.includes(r.scenario)),
          set,
        );
        if (differences.length > 0)
          throw new Error(
            `the suite's scored checks against the fixture differ from conformance/next/checks.json (${inventory.suite}); after a suite upgrade record them again (--direct --record-inventory) and review the diff:\n  ${differences.join('\n  ')}`,
          );
      }
      const scoredResult = score(run.runs, set);
      const auditedNow = through?.serverRequests();
      const serverRequests = auditedNow && since(audited, auditedNow);
      audited = auditedNow;
      results.push({
        revision,
        mode,
        transport: TRANSPORT,
        ...(through && serverRequests ? { gateway: { serve: through.mode, serverRequests } } : {}),
        passed: scoredResult.passed,
        total: scoredResult.total,
        notScored: notScoredSummary(run.runs, notScored),
        durationMs: Date.now() - started,
        suiteOutput: relative(process.cwd(), workDir),
        rows: scoredResult.rows,
      });
    }
    return results;
  } catch (error) {
    if (through)
      /** @type {Error} */ (error).message +=
        `\nThe gateway's output:\n${through.gatewayOutput.stderr.split('\n').slice(-20).join('\n')}`;
    throw error;
  } finally {
    if (through) {
      mkdirSync(join(resultsDir, mode), { recursive: true });
      writeFileSync(join(resultsDir, mode, 'gateway-stderr.txt'), through.gatewayOutput.stderr);
    }
    await through?.close();
    await fixture.close();
  }
}

/** Audit counts of sampling and elicitation (lib/ringfence.mjs) added between two readings. */
function since(before, after) {
  const rules = {};
  for (const [rule, n] of Object.entries(after.rules)) {
    const added = n - (before?.rules[rule] ?? 0);
    if (added > 0) rules[rule] = added;
  }
  return {
    passed: after.passed - (before?.passed ?? 0),
    refused: after.refused - (before?.refused ?? 0),
    rules,
  };
}

const LABELS = {
  direct: 'direct (suite → v2 fixture)',
  through: 'through ringfence (suite → mcp serve --http → v2 fixture)',
  allowed: 'through ringfence, sampling and elicitation allowed',
  pinned: 'through ringfence, allowed, registered with --protocol 2025',
};

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`conformance-next: ${error.message}\n${USAGE}\n`);
    return 2;
  }
  const resultsDir = join(dirname(options.out), 'next');
  mkdirSync(resultsDir, { recursive: true });
  const inventory = options.record
    ? { suite: `@modelcontextprotocol/conformance@${suiteVersion(SUITE_NEXT_DIR)}`, sets: {} }
    : JSON.parse(readFileSync(options.inventoryFile, 'utf8'));
  const thresholds = options.thresholds
    ? JSON.parse(readFileSync(options.thresholdsFile, 'utf8'))
    : undefined;
  const results = [];
  try {
    // CONFORMANCE_REQUIREMENTS_DIR: the requirement sets of a stand-in suite (tests).
    const requirementsFrom = process.env.CONFORMANCE_REQUIREMENTS_DIR ?? SUITE_PACKAGE;
    const requirements = Object.fromEntries(
      options.revisions.map((r) => [r, readRequirements(requirementsFrom, r)]),
    );
    for (const mode of options.modes) {
      for (const result of await measureMode(mode, options, requirements, inventory, resultsDir)) {
        results.push(result);
        const label = `${result.revision} ${LABELS[mode]}${result.gateway ? `, ${result.gateway.serve} mode` : ''}, ${TRANSPORT}`;
        process.stdout.write(`${formatMode(label, result)}\n`);
        if (result.gateway) {
          const { passed, refused, rules } = result.gateway.serverRequests;
          const why = Object.entries(rules)
            .map(([rule, n]) => `${rule} ${n}`)
            .join(', ');
          process.stdout.write(
            `  sampling and elicitation in the gateway's audit log for this run: ${passed} passed on, ${refused} refused${why ? ` (${why})` : ''}\n`,
          );
        }
        const ns = result.notScored;
        process.stdout.write(
          `  not scored by ${result.revision} (run for visibility): ${ns.passed}/${ns.reported} reported checks pass (${ns.rows
            .map((r) => `${r.scenario} ${r.passed}/${r.reported}`)
            .join(', ')})\n`,
        );
      }
    }
  } catch (error) {
    process.stderr.write(`conformance-next: could not measure: ${/** @type {Error} */ (error).message}\n`);
    return 2;
  }
  if (options.record) {
    writeFileSync(options.inventoryFile, `${JSON.stringify(inventory, null, 2)}\n`);
    process.stdout.write(`\ninventory written to ${relative(process.cwd(), options.inventoryFile)}\n`);
  }
  const verdicts = results.map((r) => {
    const expected = thresholds?.[r.revision]?.[r.mode]?.[r.transport];
    return { ...pick(r), expected, ok: expected === undefined || r.passed >= expected };
  });
  writeFileSync(
    options.out,
    `${JSON.stringify({ suite: inventory.suite, suiteInstalled: suiteVersion(SUITE_NEXT_DIR), date: new Date().toISOString(), verdicts, results }, null, 2)}\n`,
  );
  process.stdout.write(`\nsummary written to ${relative(process.cwd(), options.out)}\n`);
  for (const v of verdicts) {
    const threshold = v.expected === undefined ? 'no threshold' : `threshold ${v.expected}`;
    let note = '';
    if (!v.ok)
      note = ` — ${v.expected - v.passed} below the threshold: something that passed before fails now`;
    else if (v.expected !== undefined && v.passed > v.expected)
      note = ` — above the threshold: raise "${v.revision}"."${v.mode}"."${v.transport}" to ${v.passed} in conformance/next/thresholds.json`;
    process.stdout.write(
      `conformance ${v.revision} ${v.mode} ${v.transport}: ${v.passed}/${v.total} scored checks pass (${threshold})${note}\n`,
    );
  }
  return verdicts.every((v) => v.ok) ? 0 : 1;
}

function pick({ revision, mode, transport, passed, total }) {
  return { revision, mode, transport, passed, total };
}

process.exitCode = await main();

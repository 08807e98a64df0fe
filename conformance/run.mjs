#!/usr/bin/env node
// The MCP conformance suite as a judge (docs/conformance.md). Runs on the repository's Node 20;
// the suite itself runs on the Node 22 installed in conformance/suite/.
//
//   node conformance/run.mjs [--direct] [--through-ringfence] [--through-ringfence-allowed]
//                            [--expect-direct N] [--expect-through M] [--expect-allowed K]
//
// --direct             the suite against the fixture (conformance/fixtures/everything-server.mjs)
// --through-ringfence  the suite against `ringfence mcp serve --http` with the fixture registered
//                      behind it as a user would by default (with --only NAME when this build's
//                      `mcp serve` has it): its sampling and elicitation requests are refused
// --through-ringfence-allowed
//                      the same, registered with --allow-sampling --allow-elicitation
// --expect-direct N / --expect-through M / --expect-allowed K
//                      the least number of checks that must pass (exit 1 below it)
// --out FILE           the JSON summary (default conformance/results/latest.json)
//
// Exit: 0 when every mode ran and met its threshold, 1 when a count is below its threshold,
// 2 when the harness could not measure (bad arguments, nothing installed, a process failed).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs, USAGE, UsageError } from './lib/options.mjs';
import { startUntil, stop } from './lib/processes.mjs';
import { formatMode, inventoryDifferences, score } from './lib/report.mjs';
import { serveThroughRingfence } from './lib/ringfence.mjs';
import { runSuite, suiteVersion } from './lib/suite.mjs';

const here = dirname(fileURLToPath(import.meta.url));
const FIXTURE = join(here, 'fixtures', 'everything-server.mjs');
const SERVER_NAME = 'everything';

async function startFixture() {
  const started = await startUntil(process.execPath, [FIXTURE], {
    ready: /^\{"url":"(http:[^"]+)"\}$/,
    timeoutMs: 30_000,
  });
  return { url: started.match[1], close: () => stop(started.child) };
}

/** One mode: fixture up, (gateway and proxy up,) suite run, everything stopped. */
async function measure(mode, inventory, resultsDir) {
  const started = Date.now();
  const fixture = await startFixture();
  let through;
  try {
    let url = fixture.url;
    if (mode !== 'direct') {
      through = await serveThroughRingfence({
        fixtureUrl: fixture.url,
        name: SERVER_NAME,
        allow: mode === 'allowed',
      });
      url = through.url;
    }
    const workDir = join(resultsDir, mode);
    const run = await runSuite({ url, workDir });
    if (run.blocked.length > 0) {
      throw new Error(
        `the suite tried to reach beyond loopback, so this run counts for nothing:\n${run.blocked.join('\n')}`,
      );
    }
    if (mode === 'direct') {
      const differences = inventoryDifferences(run.runs, inventory);
      if (differences.length > 0) {
        throw new Error(
          `the suite's checks against the fixture differ from conformance/checks.json (${inventory.suite}); if the suite was upgraded, update the inventory to what it now reports:\n  ${differences.join('\n  ')}`,
        );
      }
    }
    const scored = score(run.runs, inventory);
    return {
      mode,
      ...(through
        ? {
            gateway: {
              serve: through.mode,
              server: SERVER_NAME,
              registration: mode === 'allowed' ? 'sampling and elicitation allowed' : 'default',
              // Each refusal of sampling or elicitation is an audit entry: counted here from the log.
              serverRequests: through.serverRequests(),
            },
          }
        : {}),
      passed: scored.passed,
      total: scored.total,
      durationMs: Date.now() - started,
      suiteOutput: relative(process.cwd(), workDir),
      rows: scored.rows,
    };
  } catch (error) {
    if (through)
      /** @type {Error} */ (error).message +=
        `\nThe gateway's output:\n${through.gatewayOutput.stderr.split('\n').slice(-20).join('\n')}`;
    throw error;
  } finally {
    // What the gateway reported (pinning, refusals, warnings) beside the suite's own output.
    if (through) {
      mkdirSync(join(resultsDir, mode), { recursive: true });
      writeFileSync(join(resultsDir, mode, 'gateway-stderr.txt'), through.gatewayOutput.stderr);
    }
    await through?.close();
    await fixture.close();
  }
}

const LABELS = {
  direct: 'direct (suite → fixture)',
  through: 'through ringfence (suite → mcp serve --http → fixture)',
  allowed:
    'through ringfence, sampling and elicitation allowed (mcp add --allow-sampling --allow-elicitation)',
};

async function main() {
  let options;
  try {
    options = parseArgs(process.argv.slice(2), join(here, 'results', 'latest.json'));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`conformance: ${/** @type {Error} */ (error).message}\n${USAGE}\n`);
    return 2;
  }
  const inventory = JSON.parse(readFileSync(join(here, 'checks.json'), 'utf8'));
  const resultsDir = dirname(options.out);
  mkdirSync(resultsDir, { recursive: true });
  const results = [];
  for (const mode of options.modes) {
    try {
      results.push(await measure(mode, inventory, resultsDir));
    } catch (error) {
      process.stderr.write(
        `conformance: ${mode} could not be measured: ${/** @type {Error} */ (error).message}\n`,
      );
      return 2;
    }
    const result = /** @type {(typeof results)[number]} */ (results.at(-1));
    const label = result.gateway ? `${LABELS[mode]}, ${result.gateway.serve} mode` : LABELS.direct;
    process.stdout.write(`${formatMode(label, result)}\n`);
    if (result.gateway) {
      const { passed, refused, rules } = result.gateway.serverRequests;
      const why = Object.entries(rules)
        .map(([rule, n]) => `${rule} ${n}`)
        .join(', ');
      process.stdout.write(
        `  sampling and elicitation in the gateway's audit log: ${passed} passed on, ${refused} refused${why ? ` (${why})` : ''}\n`,
      );
    }
  }
  const verdicts = results.map((r) => {
    const expected = options.expect[r.mode];
    return {
      mode: r.mode,
      passed: r.passed,
      total: r.total,
      expected,
      ok: expected === undefined || r.passed >= expected,
    };
  });
  const summary = {
    suite: inventory.suite,
    suiteInstalled: suiteVersion(),
    date: new Date().toISOString(),
    verdicts,
    modes: Object.fromEntries(results.map((r) => [r.mode, r])),
  };
  writeFileSync(options.out, `${JSON.stringify(summary, null, 2)}\n`);
  process.stdout.write(`\nsummary written to ${relative(process.cwd(), options.out)}\n`);
  for (const v of verdicts) {
    const threshold = v.expected === undefined ? 'no threshold' : `threshold ${v.expected}`;
    let note = '';
    if (!v.ok)
      note = ` — ${v.expected - v.passed} below the threshold: something that passed before fails now`;
    else if (v.expected !== undefined && v.passed > v.expected) {
      note = ` — above the threshold: raise --expect-${v.mode} to ${v.passed} (package.json "conformance")`;
    }
    process.stdout.write(`conformance ${v.mode}: ${v.passed}/${v.total} checks pass (${threshold})${note}\n`);
  }
  return verdicts.every((v) => v.ok) ? 0 : 1;
}

process.exitCode = await main();

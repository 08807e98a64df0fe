// Issue 26's goals as rows: each sub-bench's JSON in, one row per goal out (figure, ringfence,
// anchor, ratio or limit, goal, verdict). Pure: no I/O, so the verdicts can be tested on fake
// figures (test/e2e/bench-goals.test.ts). A missing input or key gives `n/a` with the reason,
// never a guess: other helpers change the sub-benches while this reads them.

/** The contained call may take docker run -i's p50 + the audit fdatasync p50 + this (ms). */
export const CONTAINED_P50_SLACK_MS = 0.3;
export const GOALS = {
  cpuPerCallUs: 500,
  rps8VsDockerRun: 0.6,
  readyOneVsDockerRun: 1.2,
  readyFiveVsDockerRun: 1.0,
  egressSetupVsSquid: 1.0,
  egressBulkVsSquid: 0.9,
  remoteCpuVsSupergateway: 1.0,
  versionMs: 150,
  auditVerifyMBps: 100,
};

/** `obj.a.b.c` as a finite number, or undefined. */
export function num(obj, ...path) {
  let v = obj;
  for (const key of path) {
    if (v === null || typeof v !== 'object') return undefined;
    v = v[key];
  }
  return typeof v === 'number' && Number.isFinite(v) ? v : undefined;
}

/** Why an input has no figures: it was skipped or failed (the harness says so), or is absent. */
const why = (input, what) =>
  input?.skipped ? `skipped: ${input.skipped}` : input?.failed ? `failed: ${input.failed}` : `no ${what}`;

/**
 * The anchor for "5 servers": 5 concurrent `docker run -i` to ready. Another slice adds it to
 * containers.bench's `ready_ms`; its key is read by meaning (five + docker/direct) when it is
 * not the expected name.
 */
export function fiveDockerRunReady(readyMs) {
  if (!readyMs || typeof readyMs !== 'object') return undefined;
  // `five_direct_docker_run` is its name (perf-ready); ratios (`…_vs_…`, `ratio…`) and the
  // baseline's figures are not the anchor.
  const keys = Object.keys(readyMs).sort((a, b) =>
    a === 'five_direct_docker_run' ? -1 : b === 'five_direct_docker_run' ? 1 : 0,
  );
  for (const key of keys) {
    const value = readyMs[key];
    if (/five/.test(key) && /(docker|direct)/.test(key) && !/ratio|_vs_|baseline/.test(key)) {
      const v = typeof value === 'number' ? value : (num(value, 'ms') ?? num(value, 'median'));
      if (v !== undefined) return { key, ms: v };
    }
  }
  return undefined;
}

/** `ringfence --version` and `node -e 0` medians (ms) from startup.bench's text table. */
export function parseStartup(text) {
  const pick = (label) => {
    const line = String(text ?? '')
      .split('\n')
      .find((l) => l.trim().startsWith(`${label} `) || l.trim() === label);
    const m = line && /\s(\d+(?:\.\d+)?)(?:\s|$)/.exec(line.trim().slice(label.length));
    return m ? Number(m[1]) : undefined;
  };
  return { version_ms: pick('ringfence --version'), node_ms: pick('node -e 0') };
}

const f = (x, digits = 2) =>
  x === undefined
    ? 'n/a'
    : Number.isInteger(x)
      ? String(x)
      : Math.abs(x) >= 100
        ? x.toFixed(0)
        : x.toFixed(digits);
/** A compared quantity: 3 decimals at most, none from 100 up, no trailing zeros (0.888, 1.2, 2320). */
const g = (x) => String(Number(x.toFixed(Math.abs(x) >= 100 ? 0 : 3)));
const verdict = (ok) => (ok ? 'met' : 'NOT met');

/** A row: `value` compared with `limit` by `cmp` ('<=' or '>='); n/a when either is missing. */
function row({ id, figure, ringfence, anchor, measure, limit, cmp, goal, unit, reason, info, shown }) {
  const known = measure !== undefined && (info || limit !== undefined);
  return {
    id,
    figure,
    ringfence: ringfence === undefined ? 'n/a' : `${f(ringfence)}${unit ? ` ${unit}` : ''}`,
    anchor: anchor ?? '—',
    ratio: measure === undefined ? 'n/a' : cmp ? `${g(measure)} ${cmp} ${g(limit)}` : (shown ?? '—'),
    goal,
    verdict: !known ? 'n/a' : info ? 'info' : verdict(cmp === '<=' ? measure <= limit : measure >= limit),
    ...(!known && reason ? { note: reason } : {}),
    value: ringfence,
    measure,
    limit,
  };
}

/**
 * inputs: { callCpu, callCpuRemote, callCpuTmpfs, callCpuBare, containers, containersTmpfs, fdatasync, calls,
 * egress, startup, auditVerify }, each the sub-bench's parsed JSON (startup: parseStartup's
 * object), or { skipped | failed: reason }, or undefined.
 */
export function goalRows(inputs) {
  const { callCpu, callCpuRemote, callCpuTmpfs, callCpuBare, containers, containersTmpfs } = inputs;
  const { fdatasync } = inputs;
  const { calls, egress, startup, auditVerify } = inputs;
  const rows = [];
  const cpuLimit = GOALS.cpuPerCallUs;

  // call-cpu.bench: the contained path (probe image) and, with BENCH_UPSTREAM=remote, the remote
  // one (a streamable-HTTP server on loopback), each warmed, sequential and 8 callers.
  for (const [input, path, what] of [
    [callCpu, 'contained', 'call-cpu figures'],
    [callCpuRemote, 'remote', 'call-cpu remote figures'],
  ]) {
    for (const [key, label] of [
      ['sequential', 'sequential'],
      ['eight_callers', '8 callers'],
    ]) {
      const us = num(input, key, 'cpu_us_per_call');
      const split = ['main_thread_user_us', 'main_thread_system_us', 'other_threads_us'].map((k) =>
        num(input, key, k),
      );
      rows.push(
        row({
          id: `cpu-${path}-${key}`,
          figure: `gateway CPU per call, ${path}, ${label}`,
          ringfence: us,
          unit: 'µs',
          // Where it goes: the main thread's user and system time, then every other thread's.
          anchor: split.includes(undefined)
            ? undefined
            : `main ${f(split[0])} usr + ${f(split[1])} sys, other threads ${f(split[2])} µs`,
          measure: us,
          cmp: '<=',
          limit: cpuLimit,
          goal: `≤ ${cpuLimit} µs`,
          reason: why(input, what),
        }),
      );
    }
  }
  // calls.bench: the remote path beside supergateway (its own mix of sequential and 8 callers).
  const remoteMs = num(calls, 'summary', 'ringfence_stdio', 'cpu_ms_per_call');
  const remoteUs = remoteMs === undefined ? undefined : remoteMs * 1000;
  const sgMs = num(calls, 'summary', 'supergateway_stdio', 'cpu_ms_per_call');

  const gwP50 = num(containers, 'call_ms', 'gateway', 'p50');
  const dockerP50 = num(containers, 'call_ms', 'direct_docker_run', 'p50');
  const syncP50 = num(fdatasync, 'p50_ms');
  const p50Limit =
    dockerP50 !== undefined && syncP50 !== undefined
      ? dockerP50 + syncP50 + CONTAINED_P50_SLACK_MS
      : undefined;
  rows.push(
    row({
      id: 'contained-p50',
      figure: 'contained call p50',
      ringfence: gwP50,
      unit: 'ms',
      anchor:
        dockerP50 === undefined || syncP50 === undefined
          ? undefined
          : `docker run -i ${f(dockerP50, 3)} + fdatasync ${f(syncP50, 3)} + ${CONTAINED_P50_SLACK_MS} ms`,
      measure: gwP50,
      cmp: '<=',
      limit: p50Limit,
      goal: '≤ docker p50 + fdatasync p50 + 0.3 ms',
      reason:
        gwP50 === undefined || dockerP50 === undefined
          ? why(containers, 'containers figures')
          : why(fdatasync, 'fdatasync figure'),
    }),
  );
  rows.push(
    row({
      id: 'audit-fdatasync',
      figure: `audit fdatasync p50 (${fdatasync?.fs ?? '?'}, same dir as RINGFENCE_HOME)`,
      ringfence: syncP50,
      unit: 'ms',
      anchor: num(fdatasync, 'p99_ms') === undefined ? undefined : `p99 ${f(fdatasync.p99_ms, 3)} ms`,
      measure: syncP50,
      info: true,
      goal: 'part of the anchor above',
      reason: why(fdatasync, 'fdatasync figure'),
    }),
  );

  const rps = num(containers, 'calls_per_s_8_callers', 'gateway');
  const dockerRps = num(containers, 'calls_per_s_8_callers', 'direct_docker_run');
  rows.push(
    row({
      id: 'contained-rps8',
      figure: 'calls/s, 8 callers, contained',
      ringfence: rps,
      unit: '/s',
      anchor: dockerRps === undefined ? undefined : `docker run -i ${f(dockerRps)} /s`,
      measure: rps !== undefined && dockerRps ? rps / dockerRps : undefined,
      cmp: '>=',
      limit: GOALS.rps8VsDockerRun,
      goal: `≥ ${GOALS.rps8VsDockerRun}× docker run -i`,
      reason: why(containers, 'containers figures'),
    }),
  );

  const readyOne = num(containers, 'ready_ms', 'one');
  const readyDocker = num(containers, 'ready_ms', 'direct_docker_run');
  rows.push(
    row({
      id: 'ready-one',
      figure: 'ready, 1 contained server',
      ringfence: readyOne,
      unit: 'ms',
      anchor: readyDocker === undefined ? undefined : `docker run -i ${f(readyDocker)} ms`,
      measure: readyOne !== undefined && readyDocker ? readyOne / readyDocker : undefined,
      cmp: '<=',
      limit: GOALS.readyOneVsDockerRun,
      goal: `≤ ${GOALS.readyOneVsDockerRun}× docker run -i`,
      reason: why(containers, 'ready figures (BENCH_READY=0?)'),
    }),
  );
  const readyFive = num(containers, 'ready_ms', 'five');
  const five = fiveDockerRunReady(containers?.ready_ms);
  rows.push(
    row({
      id: 'ready-five',
      figure: 'ready, 5 contained servers',
      ringfence: readyFive,
      unit: 'ms',
      anchor: five ? `5 concurrent docker run -i ${f(five.ms)} ms` : undefined,
      measure: readyFive !== undefined && five?.ms ? readyFive / five.ms : undefined,
      cmp: '<=',
      limit: GOALS.readyFiveVsDockerRun,
      goal: `≤ ${GOALS.readyFiveVsDockerRun}× 5 concurrent docker run -i`,
      reason:
        readyFive !== undefined && !five
          ? 'containers.bench has no 5-concurrent docker run -i anchor in ready_ms'
          : why(containers, 'ready figures'),
    }),
  );

  const setup = num(egress, 'setup', 'ringfence', 'median');
  const setupSquid = num(egress, 'setup', 'squid', 'median');
  const noSquid = egress && !egress.skipped && !egress.failed && egress.squid !== 'debian squid';
  rows.push(
    row({
      id: 'egress-setup',
      figure: 'egress CONNECT setup p50',
      ringfence: setup,
      unit: 'ms',
      anchor: setupSquid === undefined ? undefined : `squid ${f(setupSquid, 3)} ms`,
      measure: setup !== undefined && setupSquid ? setup / setupSquid : undefined,
      cmp: '<=',
      limit: GOALS.egressSetupVsSquid,
      goal: `≤ ${GOALS.egressSetupVsSquid}× squid`,
      reason: noSquid ? 'squid not available (apt-get install squid)' : why(egress, 'egress setup figures'),
    }),
  );
  const bulk = num(egress, 'bulk', 'ringfence', 'median');
  const bulkSquid = num(egress, 'bulk', 'squid', 'median');
  rows.push(
    row({
      id: 'egress-bulk',
      figure: 'egress bulk through CONNECT',
      ringfence: bulk,
      unit: 'MiB/s',
      anchor: bulkSquid === undefined ? undefined : `squid ${f(bulkSquid)} MiB/s`,
      measure: bulk !== undefined && bulkSquid ? bulk / bulkSquid : undefined,
      cmp: '>=',
      limit: GOALS.egressBulkVsSquid,
      goal: `≥ ${GOALS.egressBulkVsSquid}× squid`,
      reason: noSquid ? 'squid not available (apt-get install squid)' : why(egress, 'egress bulk figures'),
    }),
  );

  rows.push(
    row({
      id: 'remote-cpu-vs-supergateway',
      figure: 'no regression: remote CPU vs supergateway',
      ringfence: remoteUs,
      unit: 'µs',
      anchor: sgMs === undefined ? undefined : `supergateway ${f(sgMs * 1000)} µs`,
      measure:
        num(calls, 'goals', 'cpu_stdio_vs_supergateway') ??
        (remoteMs !== undefined && sgMs ? remoteMs / sgMs : undefined),
      cmp: '<=',
      limit: GOALS.remoteCpuVsSupergateway,
      goal: `≤ ${GOALS.remoteCpuVsSupergateway}× supergateway`,
      reason:
        calls && !calls.skipped && !calls.failed ? 'no supergateway figures' : why(calls, 'calls figures'),
    }),
  );
  const version = num(startup, 'version_ms');
  const node0 = num(startup, 'node_ms');
  rows.push(
    row({
      id: 'cli-version',
      figure: 'no regression: ringfence --version',
      ringfence: version,
      unit: 'ms',
      anchor: node0 === undefined ? undefined : `node -e 0 ${f(node0)} ms`,
      measure: version,
      cmp: '<=',
      limit: GOALS.versionMs,
      goal: `≤ ${GOALS.versionMs} ms`,
      reason: why(startup, 'startup figures'),
    }),
  );
  const mbps = num(auditVerify, 'mb_per_s');
  const perCpu = num(auditVerify, 'mb_per_cpu_s');
  rows.push(
    row({
      id: 'audit-verify',
      figure: 'no regression: audit verify',
      ringfence: mbps,
      unit: 'MB/s',
      // Wall-clock MB/s is what the goal names; per CPU-second shows what a busy machine hides.
      anchor: perCpu === undefined ? undefined : `${f(perCpu)} MB per CPU-s`,
      measure: mbps,
      cmp: '>=',
      limit: GOALS.auditVerifyMBps,
      goal: `≥ ${GOALS.auditVerifyMBps} MB/s`,
      reason: why(auditVerify, 'audit-verify figures'),
    }),
  );

  // Floors (informational): the same path with the audit on tmpfs, or a bare attach relay.
  for (const [input, name, label] of [
    [callCpuTmpfs, 'tmpfs', 'audit on tmpfs'],
    [callCpuBare, 'bare-attach', 'bare attach relay'],
  ]) {
    const us = num(input, 'sequential', 'cpu_us_per_call');
    const us8 = num(input, 'eight_callers', 'cpu_us_per_call');
    rows.push(
      row({
        id: `floor-cpu-${name}`,
        figure: `floor: contained CPU per call, ${label}`,
        ringfence: us,
        unit: 'µs',
        anchor: us8 === undefined ? undefined : `8 callers ${f(us8)} µs`,
        measure: us,
        info: true,
        goal: 'floor (info)',
        reason: why(input, `${label} figures`),
      }),
    );
  }
  const tmpfsP50 = num(containersTmpfs, 'call_ms', 'gateway', 'p50');
  const tmpfsDocker = num(containersTmpfs, 'call_ms', 'direct_docker_run', 'p50');
  rows.push(
    row({
      id: 'floor-p50-tmpfs',
      figure: 'floor: contained call p50, audit on tmpfs',
      ringfence: tmpfsP50,
      unit: 'ms',
      anchor: tmpfsDocker === undefined ? undefined : `docker run -i ${f(tmpfsDocker, 3)} ms`,
      measure: tmpfsP50 !== undefined && tmpfsDocker !== undefined ? tmpfsP50 - tmpfsDocker : undefined,
      shown:
        tmpfsP50 !== undefined && tmpfsDocker !== undefined
          ? `+${f(tmpfsP50 - tmpfsDocker, 3)} ms`
          : undefined,
      info: true,
      goal: 'info: added over docker run -i (goal w/o sync: +0.3 ms)',
      reason: why(containersTmpfs, 'tmpfs containers figures'),
    }),
  );
  return rows;
}

/** The rows as a fixed-width table for a terminal. */
export function formatTable(rows) {
  const cols = [
    ['figure', 'figure'],
    ['ringfence', 'ringfence'],
    ['anchor', 'anchor'],
    ['ratio', 'ratio / limit'],
    ['goal', 'goal'],
    ['verdict', 'verdict'],
  ];
  const cell = (r, key) => (key === 'verdict' && r.note ? `${r.verdict} (${r.note})` : String(r[key]));
  const widths = cols.map(([key, title]) => Math.max(title.length, ...rows.map((r) => cell(r, key).length)));
  const line = (cells) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join(' | ')
      .trimEnd();
  return [
    line(cols.map(([, title]) => title)),
    widths.map((w) => '-'.repeat(w)).join('-|-'),
    ...rows.map((r) => line(cols.map(([key]) => cell(r, key)))),
  ].join('\n');
}

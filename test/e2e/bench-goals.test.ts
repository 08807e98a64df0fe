import { describe, expect, it } from 'vitest';
import { formatTable, type GoalRow, goalRows, parseStartup } from '../../scripts/bench-goals/rows.mjs';

// The goals bench's verdicts (scripts/bench-goals.mjs), fed fake sub-bench output in the shapes
// the sub-benches print: a row is met, not met or n/a by its own figures and never by another's.

const containers = (over: Record<string, unknown> = {}) => ({
  ready_ms: { one: 1100, five: 2400, direct_docker_run: 1000, ratio_one_to_docker_run: 1.1 },
  call_ms: { gateway: { p50: 1.5, p99: 4 }, direct_docker_run: { p50: 0.7, p99: 3 } },
  calls_per_s_8_callers: { gateway: 1900, direct_docker_run: 3000 },
  ...over,
});
const callCpu = (seq: number, eight: number) => ({
  sequential: { cpu_us_per_call: seq },
  eight_callers: { cpu_us_per_call: eight },
});
const calls = (rf: number, sg: number) => ({
  summary: {
    direct: { p50: 0.3 },
    ringfence_stdio: { cpu_ms_per_call: rf },
    supergateway_stdio: { cpu_ms_per_call: sg },
  },
  goals: { cpu_stdio_vs_supergateway: Number((rf / sg).toFixed(3)) },
});
const egress = {
  squid: 'debian squid',
  setup: { ringfence: { median: 0.5 }, squid: { median: 0.45 } },
  bulk: { ringfence: { median: 430 }, squid: { median: 235 } },
};
const all = {
  callCpu: callCpu(480, 520),
  callCpuRemote: callCpu(450, 300),
  containers: containers(),
  fdatasync: { p50_ms: 0.6, p99_ms: 3, fs: 'ext2/ext3' },
  calls: calls(0.45, 0.5),
  egress,
  startup: { version_ms: 120, node_ms: 90 },
  auditVerify: { mb_per_s: 160, mb_per_cpu_s: 170 },
};
const byId = (rows: GoalRow[]) => Object.fromEntries(rows.map((r) => [r.id, r]));

describe('goals bench rows', () => {
  it('judges each goal by its own figures against its own limit', () => {
    const r = byId(goalRows(all));
    expect(r['cpu-contained-sequential']?.verdict).toBe('met'); // 480 ≤ 500
    expect(r['cpu-contained-sequential']?.ratio).toBe('480 <= 500');
    expect(r['cpu-contained-eight_callers']?.verdict).toBe('NOT met'); // 520 > 500
    expect(r['cpu-remote-sequential']?.verdict).toBe('met'); // 450 µs
    expect(r['cpu-remote-eight_callers']?.verdict).toBe('met');
    // 1.5 ms against 0.7 + 0.6 + 0.3 = 1.6 ms
    expect(r['contained-p50']?.verdict).toBe('met');
    expect(r['contained-p50']?.limit).toBeCloseTo(1.6, 6);
    expect(r['contained-rps8']?.measure).toBeCloseTo(1900 / 3000, 6);
    expect(r['contained-rps8']?.verdict).toBe('met');
    expect(r['ready-one']?.verdict).toBe('met'); // 1.1 ≤ 1.2
    expect(r['egress-setup']?.verdict).toBe('NOT met'); // 0.5 / 0.45 > 1
    expect(r['egress-bulk']?.verdict).toBe('met');
    expect(r['remote-cpu-vs-supergateway']?.verdict).toBe('met'); // 0.9
    expect(r['cli-version']?.verdict).toBe('met');
    expect(r['audit-verify']?.verdict).toBe('met');
  });

  it('turns a goal to NOT met when its figure crosses the limit, and only that goal', () => {
    const slow = byId(
      goalRows({
        ...all,
        containers: containers({ call_ms: { gateway: { p50: 1.61 }, direct_docker_run: { p50: 0.7 } } }),
      }),
    );
    expect(slow['contained-p50']?.verdict).toBe('NOT met');
    expect(slow['ready-one']?.verdict).toBe('met');
    const r = byId(
      goalRows({
        ...all,
        calls: calls(0.55, 0.5),
        callCpuRemote: callCpu(501, 300),
        startup: { version_ms: 151, node_ms: 90 },
        auditVerify: { mb_per_s: 99.9 },
        containers: containers({
          calls_per_s_8_callers: { gateway: 1799, direct_docker_run: 3000 },
          ready_ms: { one: 1201, five: 2400, direct_docker_run: 1000 },
        }),
      }),
    );
    expect(r['cpu-remote-sequential']?.verdict).toBe('NOT met');
    expect(r['cpu-remote-eight_callers']?.verdict).toBe('met');
    expect(r['remote-cpu-vs-supergateway']?.verdict).toBe('NOT met');
    expect(r['cli-version']?.verdict).toBe('NOT met');
    expect(r['audit-verify']?.verdict).toBe('NOT met');
    expect(r['contained-rps8']?.verdict).toBe('NOT met');
    expect(r['ready-one']?.verdict).toBe('NOT met');
    expect(r['cpu-contained-sequential']?.verdict).toBe('met');
  });

  it('says n/a with the reason when a figure is missing, skipped or failed; never met', () => {
    const r = byId(
      goalRows({
        callCpu: { skipped: 'needs docker' },
        containers: { failed: 'exit 1: boom' },
        fdatasync: { p50_ms: 0.6 },
        egress: { squid: 'not available', bulk: { ringfence: { median: 400 } } },
      }),
    );
    expect(r['cpu-contained-sequential']).toMatchObject({ verdict: 'n/a', note: 'skipped: needs docker' });
    expect(r['contained-p50']).toMatchObject({ verdict: 'n/a', note: 'failed: exit 1: boom' });
    expect(r['egress-bulk']?.verdict).toBe('n/a');
    expect(r['egress-bulk']?.note).toMatch(/squid/);
    expect(r['cli-version']?.verdict).toBe('n/a');
    expect(goalRows({}).filter((row) => row.verdict === 'met')).toEqual([]);
  });

  it('compares 5 servers with 5 concurrent docker run -i only when that anchor is in the JSON', () => {
    expect(byId(goalRows(all))['ready-five']).toMatchObject({ verdict: 'n/a' });
    expect(byId(goalRows(all))['ready-five']?.note).toMatch(/5-concurrent/);
    const withAnchor = containers({
      // The shape containers.bench reports it in: ratios beside the anchor are not the anchor.
      ready_ms: {
        ready_five_vs_five_docker_run: 0.5,
        baseline_five_vs_five_docker_run: 0.7,
        one: 1100,
        five: 2400,
        direct_docker_run: 1000,
        five_direct_docker_run: 2500,
      },
    });
    const five = byId(goalRows({ ...all, containers: withAnchor }))['ready-five'];
    expect(five?.measure).toBeCloseTo(0.96, 6);
    expect(five?.verdict).toBe('met');
  });

  it('keeps floor rows informational', () => {
    const containersTmpfs = {
      call_ms: { gateway: { p50: 1.2 }, direct_docker_run: { p50: 0.75 } },
    };
    const r = byId(goalRows({ ...all, callCpuTmpfs: callCpu(300, 250), containersTmpfs }));
    expect(r['floor-cpu-tmpfs']).toMatchObject({ verdict: 'info', value: 300 });
    expect(r['floor-cpu-bare-attach']?.verdict).toBe('n/a');
    expect(r['floor-p50-tmpfs']).toMatchObject({ verdict: 'info', ratio: '+0.450 ms' });
    expect(r['floor-p50-tmpfs']?.measure).toBeCloseTo(0.45, 6);
  });

  it('reads --version and node -e 0 from the startup bench table', () => {
    const text = [
      'start-up, median of 3 interleaved rounds (ms; node v20.20.2)',
      '  node -e 0                                    101',
      '  ringfence --version                          115  (1.1x node -e 0)',
      '  baseline: ringfence --version                130  (1.3x node -e 0)',
      '  ringfence --help                             240  (2.4x node -e 0)',
    ].join('\n');
    expect(parseStartup(text)).toEqual({ version_ms: 115, node_ms: 101 });
    expect(parseStartup('nothing')).toEqual({ version_ms: undefined, node_ms: undefined });
  });

  it('prints one line per row with its verdict', () => {
    const rows = goalRows(all);
    const lines = formatTable(rows).split('\n');
    expect(lines).toHaveLength(rows.length + 2);
    expect(lines.find((l) => l.startsWith('contained call p50'))).toMatch(/\| met$/);
  });
});

// ringfence-egress-proxy benchmark: side by side, interleaved, medians. Loopback only.
//   npm run bench                      (all workloads, ROUNDS=5)
//   ROUNDS=3 BULK_MIB=128 npm run bench
//   BENCH_BASELINE=/work/main npm run bench   (adds `baseline`: that checkout's built proxy, same run)
// For a harness: BENCH_ROUNDS overrides ROUNDS; the last line on stdout is one JSON object (the
// goal rows under `goals`, every figure besides), also written to the path in BENCH_JSON if set.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { connect } from 'node:net';
import { join } from 'node:path';
import {
  BUNDLE,
  cpuMs,
  HERE,
  median,
  rssKiB,
  startBareRelay,
  startEcho,
  startOrigin,
  startRingfence,
  startSource,
  startSquid,
} from './lib.mjs';

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? process.env.ROUNDS ?? 5);
const BULK_MIB = Number(process.env.BULK_MIB ?? 256);
const SMALL_REQUESTS = Number(process.env.SMALL_REQUESTS ?? 4000);
const SMALL_CONCURRENCY = Number(process.env.SMALL_CONCURRENCY ?? 32);
const CONNECTS = Number(process.env.CONNECTS ?? 1000);
const CONNECT_CONCURRENCY = Number(process.env.CONNECT_CONCURRENCY ?? 16);
const IDLE_TUNNELS = Number(process.env.IDLE_TUNNELS ?? 1000);
const SETUPS = Number(process.env.SETUPS ?? 500);
// ONLY=bulk,small,connect,setup,memory runs a subset (for quick looks; the docs quote full runs).
const BASELINE = process.env.BENCH_BASELINE
  ? join(
      process.env.BENCH_BASELINE,
      'packages',
      'egress-proxy',
      'dist',
      'bundle',
      'ringfence-egress-proxy.mjs',
    )
  : null;
const ONLY = new Set((process.env.ONLY ?? 'bulk,small,connect,setup,memory').split(','));

if (!existsSync(BUNDLE))
  execFileSync(process.execPath, [join(HERE, '..', 'scripts', 'bundle.mjs')], { stdio: 'inherit' });

const say = (s) => process.stdout.write(`${s}\n`);

/** Opens a connection to `port`; through a proxy when `connectTo` is given. Resolves with the socket. */
function openPath(port, connectTo) {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port, noDelay: true });
    s.once('error', reject);
    s.once('connect', () => {
      if (!connectTo) return resolve(s);
      s.write(`CONNECT ${connectTo} HTTP/1.1\r\nHost: ${connectTo}\r\n\r\n`);
      let head = '';
      const onData = (d) => {
        head += d.toString('latin1');
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) return;
        s.off('data', onData);
        if (!/^HTTP\/1\.[01] 200/.test(head))
          return reject(new Error(`CONNECT refused: ${head.split('\r\n')[0]}`));
        s.pause();
        resolve(s);
      };
      s.on('data', onData);
    });
  });
}

async function bulkOnce(port, connectTo) {
  const bytes = BULK_MIB * 1024 * 1024;
  const s = await openPath(port, connectTo);
  return new Promise((resolve, reject) => {
    let got = 0;
    const started = process.hrtime.bigint();
    s.on('data', (d) => {
      got += d.length;
    });
    s.on('end', () => {
      const secs = Number(process.hrtime.bigint() - started) / 1e9;
      s.destroy();
      if (got !== bytes) return reject(new Error(`bulk got ${got} of ${bytes}`));
      resolve(bytes / 1024 / 1024 / secs);
    });
    s.on('error', reject);
    s.resume();
    s.write('go');
  });
}

async function smallOnce(proxyPort, url) {
  const agent = new Agent({ keepAlive: true, maxSockets: SMALL_CONCURRENCY });
  const target = new URL(url);
  let next = 0;
  const one = () =>
    new Promise((resolve, reject) => {
      const req = request(
        proxyPort
          ? { host: '127.0.0.1', port: proxyPort, path: url, headers: { host: target.host }, agent }
          : { host: '127.0.0.1', port: Number(target.port), path: target.pathname, agent },
        (res) => {
          if (res.statusCode !== 200) reject(new Error(`status ${res.statusCode}`));
          res.resume();
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end();
    });
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: SMALL_CONCURRENCY }, async () => {
      while (next < SMALL_REQUESTS) {
        next++;
        await one();
      }
    }),
  );
  const secs = Number(process.hrtime.bigint() - started) / 1e9;
  agent.destroy();
  return SMALL_REQUESTS / secs;
}

async function connectOnce(port, connectTo) {
  let next = 0;
  const one = async () => {
    const s = await openPath(port, connectTo);
    s.resume();
    await new Promise((resolve, reject) => {
      s.once('data', resolve);
      s.once('error', reject);
      s.write('x');
    });
    s.destroy();
  };
  const started = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: CONNECT_CONCURRENCY }, async () => {
      while (next < CONNECTS) {
        next++;
        await one();
      }
    }),
  );
  return CONNECTS / (Number(process.hrtime.bigint() - started) / 1e9);
}

/**
 * CONNECT setup latency as a client sees it: TCP connect to the proxy, CONNECT, until the 200's
 * head is read. One at a time, so it is the latency of a tunnel's setup, not a queue's. Returns
 * the run's p50 in milliseconds.
 */
async function setupOnce(port, connectTo) {
  const times = [];
  for (let i = 0; i < SETUPS; i++) {
    const started = process.hrtime.bigint();
    const s = await openPath(port, connectTo);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
    s.destroy();
  }
  return median(times);
}

async function idleMemory(peer, echoTarget) {
  await new Promise((r) => setTimeout(r, 500));
  const before = peer.pids().reduce((a, pid) => a + rssKiB(pid), 0);
  const sockets = [];
  for (let i = 0; i < IDLE_TUNNELS; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, IDLE_TUNNELS - i) }, () => openPath(peer.port, echoTarget)),
    );
    sockets.push(...batch);
  }
  // One round trip on every tunnel so each holds the buffers it would hold in real use.
  await Promise.all(
    sockets.map(
      (s) =>
        new Promise((resolve) => {
          s.resume();
          s.once('data', resolve);
          s.write('x');
        }),
    ),
  );
  await new Promise((r) => setTimeout(r, 1500));
  const after = peer.pids().reduce((a, pid) => a + rssKiB(pid), 0);
  for (const s of sockets) s.destroy();
  return { before, after, perTunnelKiB: (after - before) / IDLE_TUNNELS };
}

function shuffle(xs) {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * Runs every variant ROUNDS times in shuffled order and keeps medians. Where a variant names the
 * relay process (`pid`), its CPU time per operation is recorded too: on a shared, noisy machine
 * that figure is far steadier than throughput, which also depends on what else is running.
 */
async function interleaved(variants, opsPerRun) {
  const samples = Object.fromEntries(variants.map((v) => [v.name, []]));
  const cpu = Object.fromEntries(variants.map((v) => [v.name, []]));
  // One unrecorded pass: JIT warm-up for the Node processes, page cache and pools for all.
  for (const v of variants) await v.run();
  for (let round = 0; round < ROUNDS; round++) {
    for (const v of shuffle(variants)) {
      const before = v.pid ? cpuMs(v.pid) : 0;
      samples[v.name].push(await v.run());
      if (v.pid) cpu[v.name].push(((cpuMs(v.pid) - before) * 1000) / opsPerRun);
    }
  }
  return Object.fromEntries(
    Object.entries(samples).map(([k, xs]) => [
      k,
      {
        median: median(xs),
        samples: xs,
        ...(cpu[k].length ? { cpu_us_per_op: median(cpu[k]), cpu_us_samples: cpu[k] } : {}),
      },
    ]),
  );
}

const cpuNote = (v) => (v.cpu_us_per_op !== undefined ? `  cpu ${v.cpu_us_per_op.toFixed(1)} us/op` : '');

const fmt = (x) => (x >= 100 ? x.toFixed(0) : x.toFixed(2));

async function main() {
  const results = { date: new Date().toISOString(), node: process.version, rounds: ROUNDS };
  const source = await startSource(BULK_MIB * 1024 * 1024);
  const echo = await startEcho();
  const origin = await startOrigin();
  const bulkTarget = `bench.test:${source.port}`;
  const echoTarget = `bench.test:${echo.port}`;
  const ringfence = await startRingfence([bulkTarget, echoTarget, `bench.test:${origin.port}`]);
  const bare = await startBareRelay(source.port);
  // The floor of a CONNECT setup in Node: the head read, a dial, the 200, no checks, no log.
  const bareConnect = await startBareRelay(echo.port, true);
  const baseline = BASELINE
    ? await startRingfence([bulkTarget, echoTarget, `bench.test:${origin.port}`], BASELINE)
    : null;
  // The same workload through the baseline build, when there is one.
  const withBaseline = (variants, run) =>
    baseline
      ? [...variants, { name: 'baseline', pid: baseline.proc.pid, run: () => run(baseline.port) }]
      : variants;
  let squid = null;
  try {
    squid = await startSquid();
  } catch (err) {
    say(`squid: not available (${err.message})`);
  }
  results.squid = squid ? 'debian squid' : 'not available';
  say(
    `rounds=${ROUNDS} bulk=${BULK_MIB}MiB small=${SMALL_REQUESTS}x${SMALL_CONCURRENCY} connect=${CONNECTS}x${CONNECT_CONCURRENCY}`,
  );

  if (ONLY.has('bulk')) {
    const bulkVariants = withBaseline(
      [
        { name: 'direct', run: () => bulkOnce(source.port) },
        { name: 'bare-relay', pid: bare.proc.pid, run: () => bulkOnce(bare.port) },
        { name: 'ringfence', pid: ringfence.proc.pid, run: () => bulkOnce(ringfence.port, bulkTarget) },
      ],
      (port) => bulkOnce(port, bulkTarget),
    );
    if (squid)
      bulkVariants.push({ name: 'squid', pid: squid.proc.pid, run: () => bulkOnce(squid.port, bulkTarget) });
    results.bulk = await interleaved(bulkVariants, BULK_MIB);
    const b = results.bulk;
    say('\nbulk transfer through a CONNECT tunnel (MiB/s, median)');
    for (const [k, v] of Object.entries(b))
      say(`  ${k.padEnd(11)} ${fmt(v.median).padStart(8)}${cpuNote(v)}   [${v.samples.map(fmt).join(', ')}]`);
    results.bulk_ratios = {
      ringfence_vs_bare: b.ringfence.median / b['bare-relay'].median,
      ringfence_vs_direct: b.ringfence.median / b.direct.median,
      bare_vs_direct: b['bare-relay'].median / b.direct.median,
      ...(squid ? { squid_vs_direct: b.squid.median / b.direct.median } : {}),
    };
    say(
      `  ratios: ${Object.entries(results.bulk_ratios)
        .map(([k, v]) => `${k}=${v.toFixed(2)}`)
        .join('  ')}`,
    );
  }

  const url = `http://bench.test:${origin.port}/small`;
  if (ONLY.has('small')) {
    const smallVariants = withBaseline(
      [
        { name: 'direct', run: () => smallOnce(0, url) },
        { name: 'ringfence', pid: ringfence.proc.pid, run: () => smallOnce(ringfence.port, url) },
      ],
      (port) => smallOnce(port, url),
    );
    if (squid)
      smallVariants.push({ name: 'squid', pid: squid.proc.pid, run: () => smallOnce(squid.port, url) });
    results.small = await interleaved(smallVariants, SMALL_REQUESTS);
    say('\nsmall plain-HTTP requests, keep-alive client (requests/s, median)');
    for (const [k, v] of Object.entries(results.small))
      say(`  ${k.padEnd(11)} ${fmt(v.median).padStart(8)}${cpuNote(v)}   [${v.samples.map(fmt).join(', ')}]`);
    if (squid)
      say(
        `  ratio ringfence/squid = ${(results.small.ringfence.median / results.small.squid.median).toFixed(2)}`,
      );
  }

  if (ONLY.has('connect')) {
    const connectVariants = withBaseline(
      [
        { name: 'direct', run: () => connectOnce(echo.port) },
        { name: 'ringfence', pid: ringfence.proc.pid, run: () => connectOnce(ringfence.port, echoTarget) },
      ],
      (port) => connectOnce(port, echoTarget),
    );
    if (squid)
      connectVariants.push({
        name: 'squid',
        pid: squid.proc.pid,
        run: () => connectOnce(squid.port, echoTarget),
      });
    results.connect = await interleaved(connectVariants, CONNECTS);
    say('\nCONNECT setup + one round trip + close (tunnels/s, median)');
    for (const [k, v] of Object.entries(results.connect))
      say(`  ${k.padEnd(11)} ${fmt(v.median).padStart(8)}${cpuNote(v)}   [${v.samples.map(fmt).join(', ')}]`);
  }

  if (ONLY.has('setup')) {
    const setupVariants = withBaseline(
      [
        { name: 'direct', run: () => setupOnce(echo.port) },
        {
          name: 'bare-connect',
          pid: bareConnect.proc.pid,
          run: () => setupOnce(bareConnect.port, echoTarget),
        },
        { name: 'ringfence', pid: ringfence.proc.pid, run: () => setupOnce(ringfence.port, echoTarget) },
      ],
      (port) => setupOnce(port, echoTarget),
    );
    if (squid)
      setupVariants.push({
        name: 'squid',
        pid: squid.proc.pid,
        run: () => setupOnce(squid.port, echoTarget),
      });
    results.setup = await interleaved(setupVariants, SETUPS);
    say('\nCONNECT setup latency, one at a time, until the 200 is read (ms, median of per-run p50s)');
    for (const [k, v] of Object.entries(results.setup))
      say(
        `  ${k.padEnd(11)} ${v.median.toFixed(3).padStart(8)}${cpuNote(v)}   [${v.samples.map((x) => x.toFixed(3)).join(', ')}]`,
      );
    if (squid)
      say(
        `  ratio ringfence/squid = ${(results.setup.ringfence.median / results.setup.squid.median).toFixed(2)}`,
      );
    if (baseline)
      say(
        `  ratio ringfence/baseline = ${(results.setup.ringfence.median / results.setup.baseline.median).toFixed(2)}`,
      );
    if (squid)
      say(
        `  floor: bare-connect/squid = ${(results.setup['bare-connect'].median / results.setup.squid.median).toFixed(2)} (a Node CONNECT relay with no checks)`,
      );
  }

  // Memory on fresh processes, so earlier workloads' heap growth is not counted.
  await ringfence.stop();
  await baseline?.stop();
  if (squid) await squid.stop();
  if (ONLY.has('memory')) {
    say(`\nmemory with ${IDLE_TUNNELS} idle tunnels (RSS growth)`);
    const freshRing = await startRingfence([echoTarget]);
    results.memory = { ringfence: await idleMemory(freshRing, echoTarget) };
    await freshRing.stop();
    if (BASELINE) {
      const freshBase = await startRingfence([echoTarget], BASELINE);
      results.memory.baseline = await idleMemory(freshBase, echoTarget);
      await freshBase.stop();
    }
    const freshSquid = squid ? await startSquid().catch(() => null) : null;
    if (freshSquid) {
      results.memory.squid = await idleMemory(freshSquid, echoTarget);
      await freshSquid.stop();
    }
    for (const [k, v] of Object.entries(results.memory)) {
      say(
        `  ${k.padEnd(11)} ${v.before} KiB -> ${v.after} KiB = ${v.perTunnelKiB.toFixed(1)} KiB per tunnel`,
      );
    }
  }

  results.goals = goalRows(results);
  say('\ngoals (issue 26), ringfence against squid in this run');
  for (const [name, g] of Object.entries(results.goals))
    say(
      `  ${name.padEnd(20)} ringfence ${figure(g, g.ringfence)} vs squid ${figure(g, g.squid)} ${g.unit}  ratio ${g.ratio.toFixed(2)} (goal ${g.goal})  ${g.met ? 'met' : 'NOT met'}${g.cpu_ratio !== undefined ? `  [cpu/op ratio ${g.cpu_ratio.toFixed(2)}]` : ''}${floorNote(g)}`,
    );

  await bare.stop();
  await bareConnect.stop();
  for (const s of [source.server, echo.server, origin.server]) {
    s.closeAllConnections?.();
    s.close();
  }
  // A partial run (ONLY=…) is a quick look; it must not replace the full figures the docs quote.
  const out = join(HERE, process.env.ONLY ? 'last-partial-run.json' : 'last-run.json');
  writeFileSync(out, `${JSON.stringify(results, null, 2)}\n`);
  chmodSync(out, 0o644);
  say(`\nwrote ${out}`);
  if (process.env.BENCH_JSON) writeFileSync(process.env.BENCH_JSON, `${JSON.stringify(results, null, 2)}\n`);
  // Last on stdout, one line: what a harness reads.
  say(JSON.stringify(results));
}

const figure = (g, x) => (g.unit === 'ms' ? x.toFixed(3) : fmt(x));

const floorNote = (g) => {
  const floor = g.floor_bare_connect_ratio ?? g.floor_bare_relay_ratio;
  return floor === undefined ? '' : `  [bare Node floor ${floor.toFixed(2)}]`;
};

/**
 * The issue's goal rows: CONNECT setup p50 at most squid's, bulk throughput at least 0.9x squid's.
 * Each carries the CPU-per-operation ratio too, the steadier figure on a shared machine.
 */
function goalRows(results) {
  const goals = {};
  // One row: ringfence against squid in one workload, with the bare Node floor when it ran.
  const row = (variants, unit, goal, met, floorName, floorKey) => {
    const r = variants.ringfence;
    const q = variants.squid;
    const ratio = r.median / q.median;
    return {
      unit,
      ringfence: r.median,
      squid: q.median,
      ratio,
      goal,
      met: met(ratio),
      ...(r.cpu_us_per_op !== undefined && q.cpu_us_per_op
        ? { cpu_ratio: r.cpu_us_per_op / q.cpu_us_per_op }
        : {}),
      ...(variants[floorName] ? { [floorKey]: variants[floorName].median / q.median } : {}),
    };
  };
  if (results.setup?.squid)
    goals.connect_setup_p50 = row(
      results.setup,
      'ms',
      '<= 1.0',
      (x) => x <= 1.0,
      'bare-connect',
      'floor_bare_connect_ratio',
    );
  if (results.bulk?.squid)
    goals.bulk_throughput = row(
      results.bulk,
      'MiB/s',
      '>= 0.9',
      (x) => x >= 0.9,
      'bare-relay',
      'floor_bare_relay_ratio',
    );
  return goals;
}

main().then(
  () => process.exit(0),
  (err) => {
    process.stderr.write(`bench failed: ${err.stack}\n`);
    process.exit(1);
  },
);

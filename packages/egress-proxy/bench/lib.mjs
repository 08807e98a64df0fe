// Shared pieces of the benchmark: loopback servers, peer processes, statistics.
// Everything here listens on and connects to 127.0.0.1 only.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { connect, createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const HERE = dirname(fileURLToPath(import.meta.url));
export const BUNDLE = join(HERE, '..', 'dist', 'bundle', 'ringfence-egress-proxy.mjs');

// Every peer process the bench starts, so none outlives it, whatever way it ends.
const children = new Set();
process.on('exit', () => {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});
function track(proc) {
  children.add(proc);
  proc.once('exit', () => children.delete(proc));
  return proc;
}

export const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)));
}

/** A TCP source: on connection, writes `bytes` and ends. */
export async function startSource(bytes) {
  const chunk = Buffer.alloc(256 * 1024, 0x61);
  const server = createServer((socket) => {
    socket.on('error', () => {});
    let left = bytes;
    const pump = () => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!socket.write(n === chunk.length ? chunk : chunk.subarray(0, n)))
          return socket.once('drain', pump);
      }
      socket.end();
    };
    // Wait for one byte from the client so tunnel setup is not part of the timed transfer.
    socket.once('data', pump);
  });
  return { server, port: await listen(server) };
}

/** A TCP echo server (for CONNECT setup and idle tunnels). */
export async function startEcho() {
  const server = createServer((socket) => {
    socket.on('error', () => {});
    socket.on('data', (d) => socket.write(d));
  });
  return { server, port: await listen(server) };
}

/** A small-response HTTP origin. */
export async function startOrigin() {
  const body = Buffer.from('x'.repeat(256));
  const server = createHttpServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Content-Length': body.length });
    res.end(body);
  });
  server.keepAliveTimeout = 30_000;
  return { server, port: await listen(server) };
}

function waitForPort(proc, pattern, what) {
  return new Promise((resolve, reject) => {
    let err = '';
    const timer = setTimeout(() => reject(new Error(`${what} did not start: ${err}`)), 20_000);
    proc.stderr.on('data', (d) => {
      err += d.toString();
      const m = pattern.exec(err);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.once('exit', (code) => reject(new Error(`${what} exited ${code}: ${err}`)));
  });
}

export async function startRingfence(allow, bundle = BUNDLE) {
  const proc = track(
    spawn(
      process.execPath,
      [
        bundle,
        '--listen',
        '127.0.0.1:0',
        '--allow-address',
        '127.0.0.0/8',
        '--resolve',
        'bench.test=127.0.0.1',
        '--dns-server',
        '127.0.0.1:9',
        '--max-tunnels',
        '5000',
        ...allow.flatMap((a) => ['--allow', a]),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    ),
  );
  // Drain the decision log as a real consumer would.
  proc.stdout.on('data', () => {});
  const port = await waitForPort(proc, /"port":(\d+)/, 'ringfence-egress-proxy');
  return { proc, port, pids: () => [proc.pid], stop: () => stopProc(proc) };
}

/** A bare Node relay to `targetPort`; with `speaksConnect`, it answers a CONNECT head first. */
export async function startBareRelay(targetPort, speaksConnect = false) {
  const args = [join(HERE, 'bare-relay.mjs'), String(targetPort), ...(speaksConnect ? ['--connect'] : [])];
  const proc = track(
    spawn(process.execPath, args, {
      stdio: ['ignore', 'ignore', 'pipe'],
    }),
  );
  const port = await waitForPort(proc, /"port":(\d+)/, 'bare relay');
  return { proc, port, pids: () => [proc.pid], stop: () => stopProc(proc) };
}

function stopProc(proc) {
  if (proc.exitCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    proc.once('exit', resolve);
    proc.kill('SIGTERM');
  });
}

async function freePort() {
  const s = createServer();
  const port = await listen(s);
  await new Promise((r) => s.close(r));
  return port;
}

/**
 * Debian's squid as the peer (ToolHive's choice): no cache, no access log, CONNECT to any port,
 * names answered from a private hosts file so it never sends a DNS query.
 */
export async function startSquid() {
  const squidBin = ['/usr/sbin/squid', '/usr/bin/squid'].find((p) => {
    try {
      readFileSync(p);
      return true;
    } catch {
      return false;
    }
  });
  if (!squidBin) return null;
  const dir = `/tmp/ringfence-bench-squid-${process.pid}`;
  mkdirSync(dir, { recursive: true });
  chmodSync(dir, 0o777);
  const port = await freePort();
  writeFileSync(join(dir, 'hosts'), '127.0.0.1 bench.test\n');
  const conf = [
    `http_port 127.0.0.1:${port}`,
    'acl all_src src all',
    'http_access allow all_src',
    'cache deny all',
    'cache_mem 8 MB',
    'access_log none',
    `cache_log ${dir}/cache.log`,
    `pid_filename ${dir}/squid.pid`,
    `hosts_file ${dir}/hosts`,
    'dns_nameservers 127.0.0.1',
    'visible_hostname ringfence-bench',
    'max_filedescriptors 16384',
    'workers 1',
    'forwarded_for delete',
    'via off',
    'shutdown_lifetime 0 seconds',
    `coredump_dir ${dir}`,
  ].join('\n');
  writeFileSync(join(dir, 'squid.conf'), `${conf}\n`);
  const proc = track(
    spawn(squidBin, ['-N', '-f', join(dir, 'squid.conf')], { stdio: ['ignore', 'ignore', 'pipe'] }),
  );
  const deadline = Date.now() + 20_000;
  for (;;) {
    const up = await new Promise((resolve) => {
      const s = connect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (proc.exitCode !== null || Date.now() > deadline) {
      throw new Error(`squid did not start (see ${dir}/cache.log)`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    proc,
    port,
    pids: () => [proc.pid],
    stop: async () => {
      await stopProc(proc);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Resident memory of a process in KiB, from /proc. */
export function rssKiB(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const m = /VmRSS:\s+(\d+)\s+kB/.exec(status);
  return m ? Number(m[1]) : 0;
}

/** CPU time (user + system) a process has used so far, in milliseconds, from /proc. */
export function cpuMs(pid) {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // utime and stime are fields 14 and 15 of stat (12 and 13 after pid, comm and state).
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / 100;
}

// What the goals bench needs on this machine, each with what to do when it is missing. A
// missing piece skips the rows that need it (they read `n/a (skipped: …)`); it never crashes.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';

export const SQUID_PATHS = ['/usr/sbin/squid', '/usr/bin/squid'];

/** { built, docker, squid, supergateway, shm }: each { ok, detail?, fix? }. */
export function checkPrerequisites(repo) {
  const out = {};
  const dist = ['packages/cli/bin/run.js', 'packages/gateway/dist', 'packages/egress-proxy/dist'].filter(
    (p) => !existsSync(join(repo, p)),
  );
  out.built = dist.length
    ? { ok: false, detail: `missing ${dist.join(', ')}`, fix: 'npm ci && npm run build' }
    : { ok: true };
  const info = spawnSync('docker', ['info', '--format', '{{.ServerVersion}}'], {
    encoding: 'utf8',
    timeout: 20_000,
  });
  out.docker =
    info.status === 0
      ? { ok: true, detail: `docker engine ${info.stdout.trim()}` }
      : {
          ok: false,
          detail: `docker info failed: ${(info.error?.message ?? info.stderr ?? '').trim().split('\n')[0]}`,
          fix: 'scripts/ensure-engine (installs and starts Debian docker.io when run as root), then re-run',
        };
  const squid = SQUID_PATHS.find((p) => existsSync(p));
  out.squid = squid
    ? { ok: true, detail: squid }
    : {
        ok: false,
        detail: 'no squid binary (the egress rows use squid as their anchor)',
        fix: 'apt-get install squid (Debian; the bench starts its own squid on loopback)',
      };
  out.supergateway = existsSync(join(repo, 'node_modules/supergateway/dist/index.js'))
    ? { ok: true }
    : {
        ok: false,
        detail: 'node_modules/supergateway missing (the remote-CPU anchor)',
        fix: 'npm ci (supergateway is a devDependency of packages/gateway)',
      };
  out.shm = existsSync('/dev/shm')
    ? { ok: true }
    : { ok: false, detail: 'no /dev/shm (the audit-on-tmpfs floor rows)', fix: 'mount a tmpfs on /dev/shm' };
  return out;
}

/** Lines for people: each missing prerequisite, what it costs, and how to get it. */
export function describeMissing(prereqs) {
  return Object.entries(prereqs)
    .filter(([, p]) => !p.ok)
    .map(([name, p]) => `missing ${name}: ${p.detail}\n  fix: ${p.fix}`);
}

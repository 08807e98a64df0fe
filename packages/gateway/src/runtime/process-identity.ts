import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * The start time of a process (field 22 of /proc/PID/stat, clock ticks since boot), so that a
 * recycled pid is not mistaken for the gateway that created an object. Undefined where /proc is
 * not available or the process does not exist.
 */
export function processStartTime(
  pid: number,
  readStat: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): string | undefined {
  let stat: string;
  try {
    stat = readStat(`/proc/${pid}/stat`);
  } catch {
    return undefined;
  }
  // The command name (field 2) is in parentheses and may itself contain spaces or parentheses.
  const end = stat.lastIndexOf(')');
  if (end < 0) return undefined;
  const fields = stat.slice(end + 2).split(' ');
  // fields[0] is field 3 (state), so field 22 is fields[19].
  return fields[19];
}

/** Whether a process with this pid exists (EPERM: it exists, owned by someone else). */
export function pidExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Whether the process that labelled an object still runs: same pid and same start time where
 * /proc tells start times; where it does not (macOS, or a label written without one), only
 * whether the pid exists — erring towards "alive", since sweeping a live gateway's containers
 * would break it.
 */
export function ownerIsAlive(
  pid: number,
  startTime: string | undefined,
  probe: (pid: number) => string | undefined = processStartTime,
  exists: (pid: number) => boolean = pidExists,
): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const current = probe(pid);
  if (current === undefined)
    return probe(process.pid) === undefined || startTime === undefined ? exists(pid) : false;
  return startTime === undefined || startTime === current;
}

/**
 * This host, as labels name it: a digest of the machine id (or boot id) and the host name, so a
 * sweep never judges objects a gateway on another host (a shared or remote engine) created.
 */
export function hostIdentity(read: (path: string) => string = (p) => readFileSync(p, 'utf8')): string {
  let id = '';
  for (const path of ['/etc/machine-id', '/var/lib/dbus/machine-id', '/proc/sys/kernel/random/boot_id']) {
    try {
      id = read(path).trim();
      if (id) break;
    } catch {
      /* try the next */
    }
  }
  return createHash('sha256').update(`${id}\n${hostname()}`).digest('hex').slice(0, 16);
}

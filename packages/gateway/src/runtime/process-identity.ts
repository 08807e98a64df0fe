import { readFileSync } from 'node:fs';

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

/** Whether the process that labelled an object still runs (same pid and same start time). */
export function ownerIsAlive(
  pid: number,
  startTime: string | undefined,
  probe: (pid: number) => string | undefined = processStartTime,
): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  const current = probe(pid);
  if (current === undefined) return false;
  return startTime === undefined || startTime === current;
}

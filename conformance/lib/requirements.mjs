// The newest suite's requirement sets (requirements/<revision>.yaml in its package): which server
// scenarios a spec revision scores, and which it runs without scoring (extension, pending,
// added-after-release). Only the `server` list and the server legs of `not_scored` are read; the
// format is the suite's own small, fixed YAML, read line by line so the runner needs no parser.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

export const REVISIONS = /** @type {const} */ (['2025-11-25', '2026-07-28']);

/** Parse one requirement set: { scored: [scenario], notScored: [{ scenario, reason }] } (server leg). */
export function parseRequirements(text) {
  /** @type {string[]} */
  const scored = [];
  /** @type {{ scenario: string, leg?: string, reason?: string }[]} */
  const notScored = [];
  let section;
  /** @type {{ scenario: string, leg?: string, reason?: string } | undefined} */
  let entry;
  for (const line of text.split('\n')) {
    if (/^\s*(#|$)/.test(line)) continue;
    const top = /^([a-z_]+):\s*$/.exec(line);
    if (top) {
      section = top[1];
      continue;
    }
    if (section === 'server') {
      const item = /^ {2}- (\S+)\s*$/.exec(line);
      if (!item) throw new Error(`unexpected line in the server list: ${line}`);
      scored.push(String(item[1]));
    } else if (section === 'not_scored') {
      const start = /^ {2}- scenario: (\S+)\s*$/.exec(line);
      const field = /^ {4}(leg|reason): (\S+)\s*$/.exec(line);
      if (start) {
        const started = { scenario: String(start[1]) };
        notScored.push(started);
        entry = started;
      } else if (field && entry) entry[/** @type {'leg' | 'reason'} */ (field[1])] = field[2];
    }
  }
  if (scored.length === 0) throw new Error('no server scenarios in the requirement set');
  return {
    scored,
    notScored: notScored
      .filter((e) => e.leg === 'server')
      .map(({ scenario, reason }) => ({ scenario, reason: reason ?? 'unknown' })),
  };
}

/** The requirement set `revision` as the installed suite ships it. */
export function readRequirements(suitePackageDir, revision) {
  return parseRequirements(readFileSync(join(suitePackageDir, 'requirements', `${revision}.yaml`), 'utf8'));
}

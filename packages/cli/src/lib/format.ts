import type { CheckStatus } from '@ringfence/gateway/doctor';

const MARK: Record<CheckStatus, string> = { ok: 'ok  ', warn: 'warn', fail: 'FAIL' };

/** Two-column text: a status mark, a padded title, the summary, and an indented fix line. */
export function formatCheckLines(
  checks: readonly { title: string; status: CheckStatus; summary: string; fix?: string }[],
): string[] {
  const width = Math.max(...checks.map((check) => check.title.length));
  const lines: string[] = [];
  for (const check of checks) {
    lines.push(`${MARK[check.status]}  ${check.title.padEnd(width)}  ${check.summary}`);
    if (check.fix && check.status !== 'ok') lines.push(`      ${' '.repeat(width)}  fix: ${check.fix}`);
  }
  return lines;
}

export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

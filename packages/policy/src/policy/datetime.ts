const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|[+-](\d{2}):(\d{2}))$/;

/**
 * Milliseconds since the epoch for an RFC 3339 date-time with an explicit offset, or undefined.
 * Written here rather than borrowed from a formats plugin so that the policy has exactly one
 * definition of a valid date. Calendar days are checked (no 30 February); leap seconds are not
 * accepted, since a policy never needs one.
 */
export function parseDateTime(text: string): number | undefined {
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = [m[1], m[2], m[3], m[4], m[5], m[6]].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59 || second > 59) return undefined;
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > daysInMonth) return undefined;
  if (m[9] !== undefined && (Number(m[9]) > 23 || Number(m[10]) > 59)) return undefined;
  const ms = Date.parse(text.toUpperCase());
  return Number.isFinite(ms) ? ms : undefined;
}

/** ajv format predicate for `date-time`. */
export function isDateTime(text: string): boolean {
  return parseDateTime(text) !== undefined;
}

/** Parse repeated KEY=VALUE flags into a record; an entry without "=" is a usage error. */
export function parseKeyValues(values: readonly string[] | undefined, flag: string): Record<string, string> {
  const record: Record<string, string> = {};
  for (const value of values ?? []) {
    const index = value.indexOf('=');
    if (index <= 0) throw new Error(`${flag} expects KEY=VALUE, got "${value}"`);
    record[value.slice(0, index)] = value.slice(index + 1);
  }
  return record;
}

// The runner's command line (run.mjs documents it).
export const USAGE =
  'usage: node conformance/run.mjs [--direct] [--through-ringfence] [--through-ringfence-allowed] [--expect-direct N] [--expect-through M] [--expect-allowed K] [--out FILE]';

/** Each mode's flag, as the runner takes it. */
export const MODE_FLAGS = {
  direct: '--direct',
  through: '--through-ringfence',
  allowed: '--through-ringfence-allowed',
};

export class UsageError extends Error {}

/** The runner's arguments; `defaultOut` is where the JSON summary goes without --out. */
export function parseArgs(argv, defaultOut) {
  /** @type {{ modes: ('direct' | 'through' | 'allowed')[], expect: { direct?: number, through?: number, allowed?: number }, out: string }} */
  const options = { modes: [], expect: {}, out: defaultOut };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      const v = argv[++i];
      if (v === undefined) throw new UsageError(`${arg} needs a value`);
      return v;
    };
    const count = () => {
      const v = value();
      if (!/^\d+$/.test(v)) throw new UsageError(`${arg} takes a number of checks, not "${v}"`);
      return Number(v);
    };
    if (arg === '--direct') options.modes.push('direct');
    else if (arg === '--through-ringfence') options.modes.push('through');
    else if (arg === '--through-ringfence-allowed') options.modes.push('allowed');
    else if (arg === '--expect-direct') options.expect.direct = count();
    else if (arg === '--expect-through') options.expect.through = count();
    else if (arg === '--expect-allowed') options.expect.allowed = count();
    else if (arg === '--out') options.out = value();
    else throw new UsageError(`unknown argument ${arg}`);
  }
  if (options.modes.length === 0)
    throw new UsageError(
      'say which mode to run: --direct, --through-ringfence, --through-ringfence-allowed, or several',
    );
  for (const mode of /** @type {const} */ (['direct', 'through', 'allowed'])) {
    if (options.expect[mode] !== undefined && !options.modes.includes(mode)) {
      throw new UsageError(`--expect-${mode} is given but that mode is not run (add ${MODE_FLAGS[mode]})`);
    }
  }
  options.modes = [...new Set(options.modes)];
  return options;
}

// A small seeded property-testing harness. fast-check is not installed in this workspace (see the
// package report); this keeps the same shape: a generator, many runs, and the failing seed and
// case printed so a failure can be replayed.

export type Random = () => number;

/** mulberry32: tiny, seedable, good enough to explore inputs. */
export function seeded(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function int(r: Random, min: number, max: number): number {
  return min + Math.floor(r() * (max - min + 1));
}

export function pick<T>(r: Random, items: readonly T[]): T {
  return items[int(r, 0, items.length - 1)]!;
}

const ALPHABET = [
  'a',
  'b',
  'z',
  'A',
  '0',
  ' ',
  '"',
  '\\',
  '/',
  '\n',
  '\u0000',
  '\u001f',
  'é',
  '€',
  '\u2028',
  '😀',
  '\ud7ff',
  '\ue000',
  '~',
];

export function string(r: Random, maxLength = 8): string {
  let s = '';
  const n = int(r, 0, maxLength);
  for (let i = 0; i < n; i++) s += pick(r, ALPHABET);
  return s;
}

export function number(r: Random): number {
  switch (int(r, 0, 5)) {
    case 0:
      return int(r, -1000, 1000);
    case 1:
      return (r() - 0.5) * 10 ** int(r, -30, 30);
    case 2:
      return pick(r, [0, -0, 1e21, 1e-7, 5e-324, Number.MAX_VALUE, Number.MIN_SAFE_INTEGER, 0.1 + 0.2]);
    case 3:
      return int(r, 0, 2 ** 31) * 2 ** int(r, 0, 30);
    default:
      return r();
  }
}

/** An arbitrary JSON value (no lone surrogates). */
export function json(r: Random, depth = 3): unknown {
  const kind = depth <= 0 ? int(r, 0, 3) : int(r, 0, 5);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r() < 0.5;
    case 2:
      return number(r);
    case 3:
      return string(r);
    case 4:
      return Array.from({ length: int(r, 0, 4) }, () => json(r, depth - 1));
    default: {
      const out: Record<string, unknown> = {};
      for (let i = int(r, 0, 5); i > 0; i--) {
        const key = string(r, 4);
        if (key !== '__proto__') out[key] = json(r, depth - 1);
      }
      return out;
    }
  }
}

/** Runs `property` on `runs` generated cases; rethrows with the seed and case on failure. */
export function forAll<T>(
  runs: number,
  generate: (r: Random) => T,
  property: (value: T, r: Random) => void,
  seed = 20261129,
): void {
  for (let i = 0; i < runs; i++) {
    const r = seeded(seed + i);
    const value = generate(r);
    try {
      property(value, r);
    } catch (error) {
      throw new Error(
        `property failed for seed ${seed + i} with ${safe(value)}: ${(error as Error).message}`,
        { cause: error },
      );
    }
  }
}

function safe(value: unknown): string {
  try {
    return JSON.stringify(value).slice(0, 500);
  } catch {
    return String(value);
  }
}

/** Shuffles own keys of every object, deeply: same JSON value, different insertion order. */
export function shuffleKeys(value: unknown, r: Random): unknown {
  if (Array.isArray(value)) return value.map((v) => shuffleKeys(v, r));
  if (typeof value !== 'object' || value === null) return value;
  const entries = Object.entries(value);
  for (let i = entries.length - 1; i > 0; i--) {
    const j = int(r, 0, i);
    [entries[i], entries[j]] = [entries[j]!, entries[i]!];
  }
  return Object.fromEntries(entries.map(([k, v]) => [k, shuffleKeys(v, r)]));
}

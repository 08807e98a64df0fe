/**
 * The translated RE2 pattern must answer exactly what `new RegExp(p, "u").test(input)` answers
 * (ajv's default engine): class sets compared over every code point, then a seeded, generated
 * corpus of patterns and inputs compared match by match, then token soup for syntax agreement.
 * A disagreement prints the pattern and the input (JSON, so invisible characters show).
 */
import { describe, expect, it } from 'vitest';
import { type CharSet, contains, DOT, MAX_CODE_POINT, SPACE } from './charset.js';
import { MAX_REPEAT, PatternProblem, translateEcmaPattern } from './ecma-regex.js';
import { compileRe2, PatternRefused, type Re2Like } from './regex.js';

/** mulberry32, as in packages/policy/src/testing/property.ts: a failure names its seed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const SEED = 0x5eed_0011;
const random = seeded(SEED);
const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
const pick = <T>(items: readonly T[]): T => items[int(0, items.length - 1)] as T;

/** Every Unicode whitespace and line terminator ECMA-262 knows, and what RE2 gets wrong around them. */
const SPACES = [
  '\t',
  '\n',
  '\v',
  '\f',
  '\r',
  ' ',
  '\u00a0',
  '\u1680',
  ...Array.from({ length: 11 }, (_, i) => String.fromCharCode(0x2000 + i)),
  '\u2028',
  '\u2029',
  '\u202f',
  '\u205f',
  '\u3000',
  '\ufeff',
];
const OTHERS = [
  'a',
  'b',
  'z',
  'A',
  'Z',
  '_',
  '0',
  '9',
  '-',
  '.',
  '\u0000',
  '\u0008',
  '\u0085', // NEL: not whitespace in ECMA-262
  '\u180e', // left Zs in Unicode 6.3
  '\u200b', // zero-width space: not whitespace
  '\u0663', // Arabic-Indic digit three: \p{Nd}, not \d
  '\u0967', // Devanagari digit one
  'é',
  'ß',
  '\u017f', // ſ, folds to s
  '\u212a', // Kelvin sign, folds to k
  'Ω',
  '\uffff',
  '😀',
  '😂',
  '\u{10ffff}',
  '\ud83d', // lone lead surrogate
  '\ude00', // lone trail surrogate
  '\udbff',
];
const ALPHABET = [...SPACES, ...OTHERS];

function inputsFor(): string[] {
  const inputs = ['', ...ALPHABET];
  for (let i = 0; i < 24; i++) {
    let s = '';
    const n = int(1, 6);
    for (let j = 0; j < n; j++) s += pick(ALPHABET);
    inputs.push(s);
  }
  inputs.push('a b', 'ab_9', 'a\nb', '\ud83d\ude00', '\ude00\ud83d', 'a\ud83d', '\ud83da');
  return inputs;
}

function nodeRegExp(pattern: string): RegExp | undefined {
  try {
    return new RegExp(pattern, 'u');
  } catch {
    return undefined;
  }
}

function ours(pattern: string): { re: Re2Like } | { problem: PatternProblem } {
  try {
    translateEcmaPattern(pattern);
  } catch (error) {
    if (error instanceof PatternProblem) return { problem: error };
    throw error;
  }
  try {
    return { re: compileRe2(pattern) };
  } catch (error) {
    if (error instanceof PatternRefused) return { problem: new PatternProblem('unsupported', error.reason) };
    throw error;
  }
}

/** What each disagreement looks like in the failure output. */
function disagreements(pattern: string, node: RegExp, re: Re2Like, inputs: readonly string[]): string[] {
  const out: string[] = [];
  for (const input of inputs) {
    const expected = node.test(input);
    const actual = re.test(input);
    if (actual !== expected) {
      out.push(
        `pattern ${JSON.stringify(pattern)} input ${JSON.stringify(input)}: RE2 ${actual}, RegExp ${expected}`,
      );
    }
  }
  return out;
}

// Generous timeouts: the work is fixed (a few seconds on a loaded 2-core machine), not a bound.
describe('ECMA-262 class sets', () => {
  function setMismatches(set: CharSet, atom: string): number[] {
    const node = new RegExp(`^${atom}$`, 'u');
    const wrong: number[] = [];
    for (let c = 0; c <= MAX_CODE_POINT; c++) {
      if (contains(set, c) !== node.test(String.fromCodePoint(c))) wrong.push(c);
      if (wrong.length > 5) break;
    }
    return wrong;
  }

  it("\\s is exactly Node's \\s and . exactly Node's ., over every code point", () => {
    expect(setMismatches(SPACE, '\\s')).toEqual([]);
    expect(setMismatches(DOT, '.')).toEqual([]);
  }, 60_000);

  it('each class escape, negated class and property agrees with RegExp at every range edge', () => {
    const failures: string[] = [];
    for (const atom of [
      '\\s',
      '\\S',
      '.',
      '\\d',
      '\\D',
      '\\w',
      '\\W',
      '[^a\\s]',
      '[^]',
      '\\p{L}',
      '\\P{Nd}',
    ]) {
      const pattern = `^${atom}$`;
      const node = new RegExp(pattern, 'u');
      const re = compileRe2(pattern);
      // Edges of every range the translation emits: where an off-by-one or a wrong table shows.
      const edges = new Set<number>(Array.from({ length: 0x80 }, (_, c) => c));
      for (const c of [0, 0xd7ff, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xe000, 0xffff, 0x10000, MAX_CODE_POINT])
        edges.add(c);
      // Every character the RE2 text names, escaped (\x{…}, \xHH, \punctuation) or raw.
      for (const m of translateEcmaPattern(pattern).matchAll(
        /\\x\{([0-9a-f]+)\}|\\x([0-9a-f]{2})|\\(.)|(.)/gsu,
      )) {
        const c =
          (m[1] ?? m[2])
            ? Number.parseInt((m[1] ?? m[2]) as string, 16)
            : (((m[3] ?? m[4]) as string).codePointAt(0) as number);
        for (const d of [c - 1, c, c + 1]) if (d >= 0 && d <= MAX_CODE_POINT) edges.add(d);
      }
      const inputs = [...edges].map((c) => String.fromCodePoint(c));
      failures.push(...disagreements(pattern, node, re, inputs));
    }
    expect(failures.slice(0, 10)).toEqual([]);
  }, 60_000);
});

// Pieces the generator combines; all valid in `u` mode on their own.
const ATOMS = [
  'a',
  'b',
  '_',
  '0',
  'é',
  '😀',
  ' ',
  '\\u{1F600}',
  '\\uD83D\\uDE00',
  '\\uD83D',
  '\\uDE00',
  // Two lone halves in a row: never one astral character, however they are written for RE2.
  '\\u{D83D}\\uDE00',
  '\\x41',
  '\\u00a0',
  '\\u2028',
  '\\ufeff',
  '\\u{10FFFF}',
  '\\t',
  '\\n',
  '\\r',
  '\\v',
  '\\cJ',
  '\\0',
  '\\/',
  '\\.',
  '\\*',
  '.',
  '\\s',
  '\\S',
  '\\d',
  '\\D',
  '\\w',
  '\\W',
];
// Property sets are hundreds of ranges and slow for re2js to compile (~10 ms): used sparingly.
const PROPERTIES = ['\\p{L}', '\\P{L}', '\\p{Nd}', '\\p{Zs}', '\\p{Script=Greek}'];
const CLASS_ITEMS = [
  'a',
  'z',
  'a-z',
  'A-Z',
  '0-9',
  '_',
  '\\s',
  '\\S',
  '\\d',
  '\\D',
  '\\w',
  '\\W',
  '\\b',
  '\\-',
  '-',
  '.',
  '[',
  '\\]',
  '^',
  'é',
  '\\n',
  '\\u00a0',
  '\\uD800-\\uDFFF',
  '\\uD83D',
  '\\u{D83D}\\uDE00',
  '\\uDBFE-\\uDC01',
  '😀-😂',
  '\\u{1F600}',
  '\\t-\\r',
];
const ASSERTIONS = ['^', '$', '\\b', '\\B'];
const QUANTIFIERS = ['*', '+', '?', '{2}', '{1,3}', '{0,}', '{0,1}', '*?', '+?', '??', '{2,}?'];

function generateClass(): string {
  let body = '';
  const n = int(0, 4);
  for (let i = 0; i < n; i++) body += random() < 0.03 ? pick(PROPERTIES) : pick(CLASS_ITEMS);
  return `[${random() < 0.4 ? '^' : ''}${body}]`;
}

function generate(depth: number): string {
  const alternatives: string[] = [];
  const count = random() < 0.25 ? int(2, 3) : 1;
  for (let a = 0; a < count; a++) {
    let alternative = '';
    const terms = int(0, 4);
    for (let t = 0; t < terms; t++) {
      const roll = random();
      if (roll < 0.15) {
        alternative += pick(ASSERTIONS);
        continue;
      }
      let atom: string;
      if (roll < 0.17) atom = pick(PROPERTIES);
      else if (roll < 0.55) atom = pick(ATOMS);
      else if (roll < 0.8) atom = generateClass();
      else if (depth > 0) atom = `${pick(['(', '(?:', `(?<g${a}${t}${depth}>`])}${generate(depth - 1)})`;
      else atom = pick(ATOMS);
      alternative += atom + (random() < 0.4 ? pick(QUANTIFIERS) : '');
    }
    alternatives.push(alternative);
  }
  return alternatives.join('|');
}

describe('translated patterns match what RegExp(p, "u") matches', () => {
  it(`a seeded corpus of generated patterns (seed ${SEED.toString(16)}) agrees on every input`, () => {
    const failures: string[] = [];
    let compared = 0;
    for (let i = 0; i < 2_500; i++) {
      const pattern = generate(2);
      const node = nodeRegExp(pattern);
      const mine = ours(pattern);
      if (node === undefined) {
        // Generated ranges can come out reversed or bounded by a class escape: both must refuse.
        if (!('problem' in mine) || mine.problem.kind !== 'syntax') {
          failures.push(`pattern ${JSON.stringify(pattern)}: RegExp throws, the translation does not`);
        }
        continue;
      }
      if ('problem' in mine) {
        failures.push(`pattern ${JSON.stringify(pattern)}: refused (${mine.problem.message}) but valid`);
        continue;
      }
      compared += 1;
      failures.push(...disagreements(pattern, node, mine.re, inputsFor()));
    }
    expect(failures.slice(0, 10)).toEqual([]);
    // The corpus is mostly valid patterns, so most of it is really compared.
    expect(compared).toBeGreaterThan(2_000);
  }, 60_000);

  const SOUP = [
    'a',
    '(',
    ')',
    '[',
    ']',
    '{',
    '}',
    '\\',
    '|',
    '*',
    '+',
    '?',
    '-',
    '^',
    '$',
    '.',
    '1',
    '2',
    ',',
    '0',
  ];
  const SOUP_MORE = [
    'k',
    '<',
    '>',
    '=',
    '!',
    ':',
    'u',
    'x',
    'c',
    'p',
    '{L}',
    'd',
    's',
    'b',
    'B',
    'D83D',
    'F',
    '😀',
    '/',
  ];

  it('token soup: whatever RegExp rejects is refused, whatever the translation calls a syntax error RegExp rejects, and the rest agrees', () => {
    const failures: string[] = [];
    const allowedRefusals =
      /backreference|lookahead|lookbehind|repetition count|group name|nested deeper|modifier group/;
    for (let i = 0; i < 3_000; i++) {
      let pattern = '';
      const n = int(1, 8);
      for (let j = 0; j < n; j++) pattern += pick(random() < 0.6 ? SOUP : SOUP_MORE);
      const node = nodeRegExp(pattern);
      const mine = ours(pattern);
      if ('problem' in mine) {
        if (mine.problem.kind === 'syntax' && node !== undefined) {
          failures.push(
            `pattern ${JSON.stringify(pattern)}: called a syntax error (${mine.problem.message}), RegExp accepts it`,
          );
        }
        if (mine.problem.kind === 'unsupported' && !allowedRefusals.test(mine.problem.message)) {
          failures.push(`pattern ${JSON.stringify(pattern)}: unexpected refusal ${mine.problem.message}`);
        }
        continue;
      }
      if (node === undefined) {
        failures.push(`pattern ${JSON.stringify(pattern)}: RegExp throws, the translation accepts it`);
        continue;
      }
      failures.push(
        ...disagreements(pattern, node, mine.re, [
          '',
          'a',
          'aa',
          'a{1}',
          '-',
          '\\',
          '\n',
          '\u2028',
          '😀',
          '\ud83d',
          ',0',
        ]),
      );
    }
    expect(failures.slice(0, 10)).toEqual([]);
  }, 60_000);
});

describe('refusals', () => {
  const refusal = (pattern: string) => {
    try {
      compileRe2(pattern);
    } catch (error) {
      if (error instanceof PatternRefused) return error.reason;
      throw error;
    }
    return 'accepted';
  };

  it.each([
    ['^(a)\\1$', 'a backreference "\\1"'],
    ['(?<x>a)\\k<x>', 'a named backreference'],
    ['^(?!admin)', 'a negative lookahead'],
    ['a(?=b)', 'a lookahead'],
    ['(?<=x)y', 'a lookbehind'],
    ['(?<!x)y', 'a negative lookbehind'],
    [`a{${MAX_REPEAT + 1}}`, 'a repetition count over 1000'],
    ['(?i:admin)', 'a modifier group'],
    ['(?<é>a)', 'a group name "é"'],
    [`${'('.repeat(65)}a${')'.repeat(65)}`, 'groups nested deeper than 64'],
  ])('%s cannot keep its meaning in linear time: refused', (pattern, construct) => {
    const reason = refusal(pattern);
    expect(reason).toContain(`uses ${construct}`);
    expect(reason).toContain('which cannot be checked in linear time with ECMA-262 meaning');
  });

  it.each([
    ['\\-', 'an invalid escape'],
    ['a{2,1}', 'out of order'],
    ['[z-a]', 'out of order'],
    ['[\\d-z]', 'range bound'],
    ['\\p{NotAProperty}', 'unknown Unicode property'],
    ['(?i)a', 'unknown group "(?i"'],
    ['a{', 'incomplete quantifier'],
    ['\\u{110000}', 'beyond U+10FFFF'],
    [']', 'a lone "]"'],
  ])('%s is not ECMA-262 in u mode: refused as such', (pattern, detail) => {
    expect(nodeRegExp(pattern)).toBeUndefined();
    const reason = refusal(pattern);
    expect(reason).toContain('is not a valid ECMA-262 regular expression (u flag)');
    expect(reason).toContain(detail);
  });

  it('RE2 program limits are refusals too, never a fallback', () => {
    expect(refusal('(?:(?:a{1000}){1000}){1000}')).toMatch(/^is more than RE2 can compile/);
  });

  it('ajv asking for other flags than "u" is refused rather than translated with u semantics', async () => {
    const { re2Engine } = await import('./regex.js');
    expect(() => re2Engine('a', '')).toThrow(PatternRefused);
    expect(re2Engine('a', 'u').test('a')).toBe(true);
  });
});

describe('linear time', () => {
  it('catastrophic patterns answer on long inputs (a backtracking engine would not return)', () => {
    // 2^100000 paths for a backtracking engine; RE2 reads the input once.
    const input = `${'a'.repeat(100_000)}!`;
    expect(compileRe2('^(a+)+$').test(input)).toBe(false);
    expect(compileRe2('^(a|a)*$').test(input)).toBe(false);
    expect(compileRe2('^(\\w+\\s?)*$').test(input)).toBe(false);
    expect(compileRe2('^(.*a){20}$').test(input)).toBe(false);
  }, 60_000);
});

import { canonicalize } from '@ringfence/policy';
import { describe, expect, it } from 'vitest';
import { decodeRendered } from './decode.js';
import { stringifyForTerminal, terminalSafeJson } from './json.js';
import {
  clip,
  escapedCharacterCount,
  isShownEscaped,
  type RenderMode,
  renderJsonText,
  renderUntrusted,
  visiblePart,
} from './render.js';

const MODES: RenderMode[] = ['block', 'line', 'name'];

/**
 * What must never reach a person raw, written independently of the implementation: the Unicode
 * classes by property, plus the spaces and fillers that draw as blank.
 */
const FORBIDDEN =
  /[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}\u00a0\u1680\u2000-\u200a\u202f\u205f\u3000\u2800]/u;
const forbiddenIn = (text: string, mode: RenderMode): string[] =>
  Array.from(text).filter(
    (ch) =>
      (FORBIDDEN.test(ch) && !(mode === 'block' && (ch === '\n' || ch === '\t'))) ||
      (mode === 'name' && ch === ' '),
  );

/** Every code point of a property, generated over the whole code space. */
function codePointsOf(property: RegExp): number[] {
  const out: number[] = [];
  for (let cp = 0; cp <= 0x10ffff; cp++) if (property.test(String.fromCodePoint(cp))) out.push(cp);
  return out;
}
const CF = codePointsOf(/^\p{Cf}$/u);

/** The format as a reader decodes it (docs/untrusted-text.md); decoding what was rendered gives back the input. */
const decode = decodeRendered;

const TAG = (ascii: string) =>
  Array.from(ascii, (c) => String.fromCodePoint(0xe0000 + c.charCodeAt(0))).join('');

/** A corpus of hostile and ordinary strings, each class on its own and mixed with real escapes. */
function corpus(): string[] {
  const samples = [
    '',
    'Search the docs.',
    'Search the docs.\n\tNext line — ünïcode, 日本語, עברית',
    'emoji 👍 and a family 👨‍👩‍👧 and a heart ❤️',
    `innocent${TAG('secret=hunter2')}`,
    'ok\u001b[8mhidden\u001b[0m',
    '\u001b[2K\rallowed',
    '\u001b]52;c;ZXZpbA==\u0007',
    '\u009b2J',
    'abc\u202edcba\u202c',
    'a\u200bb\u200cc\u200dd\u2060e\ufeff',
    'line\u2028sep\u2029para',
    'vs\ufe0f\u{e0100}',
    'pua\ue000\u{f0000}\u{10fffd}',
    'unassigned\u0378\u{e0080}\u{10ffff}',
    'blank\u3164\u115f\u1160\uffa0\u2800',
    'spaces\u00a0\u2009\u3000\u202f',
    'soft\u00adhyphen',
    'cr\r\nlf',
    '\ud800',
    '\udc00',
    '\udc00\ud800',
    'a\ud83dz',
    '\ud83d\udc4d',
    'x\u{e0041}',
    'x\\u{E0041}',
    'x\\\\u{E0041}',
    'x\\\u{e0041}',
    'x\\\\\u{e0041}',
    '\\u{1B}[2K',
    '\u001b[2K',
    '\\\u001b',
    '\\',
    '\\\\',
    '\\u',
    '\\u{',
    '\\u{}',
    'C:\\Users\\me',
    'C:\\users\\me',
    'regex \\d+\\s*',
    'a\\\u200bb',
    '\\u{200B}',
    '\u200b',
    'u{200B}',
    '\\ ',
    ' \\',
    'two words',
    'two\u00a0words',
    'tab\there',
    'tab\\there',
  ];
  const all = new Set(samples);
  for (const cp of CF) {
    const ch = String.fromCodePoint(cp);
    all.add(ch);
    all.add(`a${ch}b`);
    all.add(`\\${ch}`);
  }
  for (let cp = 0; cp < 0x20; cp++) all.add(`[${String.fromCodePoint(cp)}]`);
  for (let cp = 0x7f; cp <= 0x9f; cp++) all.add(`[${String.fromCodePoint(cp)}]`);
  for (const cp of [0xd800, 0xdbff, 0xdc00, 0xdfff]) all.add(`<${String.fromCharCode(cp)}>`);
  return [...all];
}

/** A fixed-seed generator: the fuzz inputs are the same on every run. */
function random(seed: number) {
  let state = seed >>> 0;
  return (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
}

describe('renderUntrusted', () => {
  it('escapes every format (Cf) character of the whole code space, in every mode', () => {
    expect(CF.length).toBeGreaterThan(150);
    for (const cp of CF)
      for (const mode of MODES) expect(isShownEscaped(cp, mode), cp.toString(16)).toBe(true);
  });

  it('escapes every code point of the hidden classes, and leaves letters, marks, symbols and digits alone', () => {
    for (let cp = 0; cp <= 0x10ffff; cp++) {
      const ch = String.fromCodePoint(cp);
      const hidden = FORBIDDEN.test(ch) && cp !== 0x0a && cp !== 0x09;
      if (isShownEscaped(cp, 'block') !== hidden) throw new Error(`U+${cp.toString(16)}: ${!hidden}`);
    }
    expect(isShownEscaped(0x0a, 'block')).toBe(false);
    expect(isShownEscaped(0x0a, 'line')).toBe(true);
    expect(isShownEscaped(0x09, 'line')).toBe(true);
    expect(isShownEscaped(0x20, 'line')).toBe(false);
    expect(isShownEscaped(0x20, 'name')).toBe(true);
  });

  it('shows escapes as \\u{HEX} and counts them', () => {
    expect(renderUntrusted('ok\u001b[8mhidden\u202e')).toEqual({
      text: 'ok\\u{1B}[8mhidden\\u{202E}',
      escaped: 2,
    });
    expect(renderUntrusted(`x${TAG('AB')}`)).toEqual({ text: 'x\\u{E0041}\\u{E0042}', escaped: 2 });
    expect(renderUntrusted('\ud800x')).toEqual({ text: '\\u{D800}x', escaped: 1 });
    expect(renderUntrusted('a\nb\tc')).toEqual({ text: 'a\nb\tc', escaped: 0 });
    expect(renderUntrusted('a\nb\tc', { mode: 'line' })).toEqual({ text: 'a\\u{A}b\\u{9}c', escaped: 2 });
    expect(renderUntrusted('a b', { mode: 'name' })).toEqual({ text: 'a\\u{20}b', escaped: 1 });
    expect(renderUntrusted('plain text').text).toBe('plain text');
  });

  it('doubles a backslash only where it could be read as an escape', () => {
    expect(renderUntrusted('C:\\Users\\me').text).toBe('C:\\Users\\me');
    expect(renderUntrusted('\\u{E0041}').text).toBe('\\\\u{E0041}');
    expect(renderUntrusted('\\\u{e0041}').text).toBe('\\\\\\u{E0041}');
    expect(renderUntrusted('\\\\u{41}').text).toBe('\\\\\\\\u{41}');
    expect(renderUntrusted('\\\n', { mode: 'line' }).text).toBe('\\\\\\u{A}');
    expect(renderUntrusted('\\\n').text).toBe('\\\n');
    // Already rendered or JSON: backslashes are escapes already.
    expect(renderUntrusted('\\u{41}\u200b', { keepBackslashes: true }).text).toBe('\\u{41}\\u{200B}');
  });

  it('over the corpus: no two inputs render the same, nothing hidden is left, and decoding gives the input back', () => {
    const inputs = corpus();
    expect(inputs.length).toBeGreaterThan(500);
    for (const mode of MODES) {
      const seen = new Map<string, string>();
      for (const input of inputs) {
        const { text, escaped } = renderUntrusted(input, { mode });
        const earlier = seen.get(text);
        if (earlier !== undefined)
          throw new Error(`${JSON.stringify(earlier)} and ${JSON.stringify(input)} render the same`);
        seen.set(text, input);
        expect(forbiddenIn(text, mode)).toEqual([]);
        expect(decode(text)).toBe(input);
        expect(escaped).toBe(Array.from(input).filter((c) => isShownEscaped(c.codePointAt(0)!, mode)).length);
      }
    }
  });

  it('fuzz: random strings of backslashes, braces, hex, hidden characters and halves decode back', () => {
    const alphabet = [
      '\\',
      '\\',
      'u',
      '{',
      '}',
      'E',
      '0',
      '4',
      '1',
      'a',
      ' ',
      '\n',
      '\u001b',
      '\u200b',
      '\u{e0041}',
      '\ud800',
      '\udc00',
      '\u202e',
      '\ufe0f',
      '\u00a0',
    ];
    const next = random(11);
    for (let n = 0; n < 20_000; n++) {
      let input = '';
      const length = next(12);
      for (let k = 0; k < length; k++) input += alphabet[next(alphabet.length)];
      for (const mode of MODES) {
        const { text } = renderUntrusted(input, { mode });
        if (decode(text) !== input || forbiddenIn(text, mode).length > 0)
          throw new Error(`${JSON.stringify(input)} (${mode}) → ${JSON.stringify(text)}`);
      }
    }
  });

  it('renders a long run of backslashes in linear time (no lookahead over the run)', () => {
    // 2 MB of backslashes then an escape: quadratic work here would take minutes, not a moment.
    const { text } = renderUntrusted(`${'\\'.repeat(2_000_000)}\u200b`);
    expect(text.length).toBe(4_000_000 + '\\u{200B}'.length);
  });
});

describe('JSON for people', () => {
  const values: unknown[] = [
    { q: `innocent${TAG('secret')}` },
    { q: 'innocent' },
    { q: '\\u{E0073}' },
    { q: '\u001b[2K' },
    { q: '\\u001b[2K' },
    { 'k\u200b': 1 },
    { k: 1 },
    ['\u2028', '\u2029'],
    ['\n'],
    { a: 'x\ufe0f', b: ['\u{e0100}'] },
  ];

  it('renderJsonText: distinct values render distinctly, nothing hidden is left, and the text parses back', () => {
    const seen = new Set<string>();
    for (const value of values) {
      const { text } = renderJsonText(canonicalize(value));
      expect(seen.has(text)).toBe(false);
      seen.add(text);
      expect(forbiddenIn(text, 'line')).toEqual([]);
      // JSON never writes `\u{`: read JSON's own escapes as pairs, and every `\u{…}` left is ours.
      const back = text.replace(/\\u\{([0-9A-F]+)\}|\\./g, (pair: string, hex?: string) =>
        hex === undefined ? pair : String.fromCodePoint(Number.parseInt(hex, 16)),
      );
      expect(JSON.parse(back)).toEqual(value);
    }
  });

  it('stringifyForTerminal: the same value back, no hidden character raw, indentation kept', () => {
    for (const value of values) {
      const text = stringifyForTerminal(value, 2);
      expect(JSON.parse(text)).toEqual(value);
      expect(forbiddenIn(text, 'block')).toEqual([]);
    }
    expect(stringifyForTerminal({ q: `a${TAG('A')}\u009b` })).toBe('{"q":"a\\udb40\\udc41\\u009b"}');
    expect(terminalSafeJson('{"a":"plain"}')).toBe('{"a":"plain"}');
  });
});

describe('counting and comparing', () => {
  it('escapedCharacterCount counts hidden characters in keys and values, not newlines or tabs', () => {
    expect(escapedCharacterCount({ a: 'x\ny\tz' })).toBe(0);
    expect(escapedCharacterCount({ a: `x${TAG('abc')}`, ['b\u200b']: ['\u202e', { c: '\r' }] })).toBe(6);
    const deep: unknown[] = [];
    let cursor = deep;
    for (let i = 0; i < 100_000; i++) {
      const next: unknown[] = [];
      cursor.push(next);
      cursor = next;
    }
    cursor.push('\u200b');
    expect(escapedCharacterCount(deep)).toBe(1);
  });

  it('escapedCharacterCount counts what isShownEscaped names, code point by code point, for every kind of text', () => {
    const reference = (text: string) =>
      [...text].filter((ch) => isShownEscaped(ch.codePointAt(0) as number, 'block')).length;
    const texts = [
      `${'plain ascii '.repeat(2000)}\r`,
      '\u007f',
      '\u0000 nul',
      `${'a'.repeat(10_000)}\u200b${'b'.repeat(10_000)}`,
      'lone \ud800 high, lone \udc00 low, pair \ud83d\ude00, tag \udb40\udc41',
      'é ü 中文 \u00a0 nbsp \u2028 \u2800 \ufeff',
      'tab\tnewline\n only',
      '',
    ];
    for (const text of texts) {
      expect(escapedCharacterCount({ [text]: text })).toBe(2 * reference(text));
    }
    expect(escapedCharacterCount('\r'.repeat(5000))).toBe(5000);
  });

  it('visiblePart drops what is shown escaped; clip never cuts a pair', () => {
    expect(visiblePart(`Search${TAG('x')} the\u200b docs.`)).toBe('Search the docs.');
    expect(clip('ab👍cd', 3)).toBe('ab👍… (5 characters)');
    expect(clip('abc', 3)).toBe('abc');
  });
});

/**
 * Random text a hostile server could choose, from a fixed seed (the same inputs on every run):
 * controls, line breaks of every kind, bidi and TAG characters, lone surrogates, backslashes,
 * literal `\u{…}` text and real escapes side by side, look-alike brackets and quotes, and plain
 * words. For property tests of what a person or a model reads.
 */
const PIECES = [
  'a',
  'Z',
  ' ',
  'word',
  '\\',
  '\\\\',
  '\\u{',
  '\\u{1B}',
  '\\u{41}',
  'u{',
  '}',
  '\\u{E0041}',
  '\u001b',
  '\u001b[2K',
  '\u001b]52;c;AAAA\u0007',
  '\r',
  '\n',
  '\r\n',
  '\t',
  '\u000b',
  '\u000c',
  '\u0085',
  '\u2028',
  '\u2029',
  '\u009b',
  '\u007f',
  '\u0000',
  '\u202e',
  '\u2066',
  '\u200b',
  '\ufeff',
  '\u00a0',
  '\u3000',
  '\u{e0041}',
  '\u{e0020}',
  '\ufe0f',
  '\ud800',
  '\udc00',
  '\ud83d\udc4d',
  '\u{10ffff}',
  '\ue000',
  '\u2800',
  '日本',
  'é',
  '［',
  '＂',
  '"',
  '[MCP server "github", via ringfence] ',
  'ringfence: ',
];

/** A generator of hostile strings: `next()` gives one of up to `maxPieces` pieces. */
export function hostileText(seed: number, maxPieces = 12) {
  let state = seed >>> 0;
  const below = (n: number) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % n;
  };
  return {
    next(): string {
      let text = '';
      for (let count = below(maxPieces + 1); count > 0; count--) text += PIECES[below(PIECES.length)];
      return text;
    },
  };
}

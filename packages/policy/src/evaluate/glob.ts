/**
 * Matches a whole string against a glob: `*` is any run of characters (including `/`), `?` is
 * one character, `\` escapes the next character. Nothing else is special, so a policy author
 * cannot write a regular expression by accident.
 *
 * The match is the classic two-pointer walk with one backtrack point (the last `*`), so it is
 * linear in practice and never exponential: the text is written by the model, and a glob must
 * not let it stall the gateway (a backtracking regex did, with a few stars and a long argument).
 */
export function globMatches(pattern: string, text: string): boolean {
  const tokens = tokenize(pattern);
  const chars = Array.from(text);
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < chars.length) {
    const token = tokens[p];
    if (token !== undefined && token.kind !== 'star' && (token.kind === 'any' || token.char === chars[t])) {
      p++;
      t++;
    } else if (token?.kind === 'star') {
      star = p++;
      resume = t;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (tokens[p]?.kind === 'star') p++;
  return p === tokens.length;
}

type Token = { kind: 'star' } | { kind: 'any' } | { kind: 'char'; char: string };

const cache = new Map<string, Token[]>();

function tokenize(pattern: string): Token[] {
  const cached = cache.get(pattern);
  if (cached) return cached;
  const tokens: Token[] = [];
  const chars = Array.from(pattern);
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!;
    if (c === '\\' && i + 1 < chars.length) tokens.push({ kind: 'char', char: chars[++i]! });
    else if (c === '*') {
      // Consecutive stars are one star.
      if (tokens.at(-1)?.kind !== 'star') tokens.push({ kind: 'star' });
    } else if (c === '?') tokens.push({ kind: 'any' });
    else tokens.push({ kind: 'char', char: c });
  }
  if (cache.size > 1000) cache.clear();
  cache.set(pattern, tokens);
  return tokens;
}

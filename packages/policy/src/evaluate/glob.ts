const cache = new Map<string, RegExp>();

/**
 * Matches a whole string against a glob: `*` is any run of characters (including `/`), `?` is
 * one character, `\` escapes the next character. Nothing else is special, so a policy author
 * cannot write a regular expression by accident.
 */
export function globMatches(pattern: string, text: string): boolean {
  let regex = cache.get(pattern);
  if (!regex) {
    let source = '';
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === '\\' && i + 1 < pattern.length) {
        source += escapeRegex(pattern[++i]!);
      } else if (c === '*') {
        source += '[\\s\\S]*';
      } else if (c === '?') {
        source += '[\\s\\S]';
      } else {
        source += escapeRegex(c);
      }
    }
    regex = new RegExp(`^${source}$`, 'u');
    if (cache.size > 1000) cache.clear();
    cache.set(pattern, regex);
  }
  return regex.test(text);
}

function escapeRegex(c: string): string {
  return c.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}

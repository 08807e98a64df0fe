import { describe, expect, it } from 'vitest';
import { loginCommand, loginNeededText } from './login-needed.js';
import { droppedNote, safeScopes, shellQuoted } from './scope-tokens.js';

/** Shell syntax a hostile server might put in a scope; none of it may reach a command people run. */
const HOSTILE = [
  '$(touch /tmp/pwned)',
  '`id`',
  'a;rm',
  'x|y',
  "it's",
  'a"b',
  'a\\b',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, on purpose
  '${HOME}',
  '*',
  'a&b',
  '~root',
  'a>b',
  'é',
  'a\u001b[2Jb',
  'x\u202ey',
];

describe('server-chosen scopes in the login command', () => {
  it('keeps RFC 6749 scope tokens of the shell-inert set, drops the rest', () => {
    const real =
      'repo read:org files.read https://www.googleapis.com/auth/drive api://app/.default offline_access a+b=c@d,e';
    expect(safeScopes(real).kept.join(' ')).toBe(real);
    for (const token of HOSTILE) {
      const { kept, dropped } = safeScopes(`read ${token}`);
      expect(kept, token).toEqual(['read']);
      expect(dropped.length, token).toBeGreaterThan(0);
    }
    expect(safeScopes('a'.repeat(129)).kept).toEqual([]);
    expect(safeScopes(Array.from({ length: 40 }, (_, i) => `s${i}`).join(' ')).kept).toHaveLength(32);
    expect(safeScopes('read read  write\tread').kept).toEqual(['read', 'write']);
  });

  it('quotes POSIX-style: a single quote cannot end the word', () => {
    expect(shellQuoted('read write')).toBe("'read write'");
    expect(shellQuoted("it's")).toBe("'it'\\''s'");
  });

  it('a hostile step-up scope never reaches the command or the words, and is mentioned escaped', () => {
    for (const token of HOSTILE) {
      const reason = { kind: 'insufficient-scope', scope: `read ${token}` } as const;
      const command = loginCommand('files', reason);
      expect(command, token).toBe("ringfence mcp auth login files --scope 'read'");
      const text = loginNeededText('files', reason);
      expect(text.endsWith(command), token).toBe(true);
      // Nothing of the token's syntax is echoed: every character outside the safe set is \u{…}.
      expect(text.includes(token), token).toBe(false);
      for (const c of '$`|"*&<>~\u001b\u202e') expect(text.includes(c), `${token} ${c}`).toBe(false);
      expect(text).toContain('does not pass to a command');
    }
    expect(droppedNote(["it's", 'a\\b'])).toContain('it\\u{27}s, a\\u{5C}b');
  });

  it('with no safe scope left, the command asks for none and says so', () => {
    const reason = { kind: 'insufficient-scope', scope: '$(id)' } as const;
    expect(loginCommand('files', reason)).toBe('ringfence mcp auth login files');
    expect(loginNeededText('files', reason)).toMatch(
      /\(a wider scope\)\..*Log in again asking for it with: ringfence mcp auth login files$/,
    );
  });
});

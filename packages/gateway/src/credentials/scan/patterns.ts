/**
 * Secret patterns an organisation's policy defines (`secret_patterns`), compiled with RE2
 * (re2js): matching is linear in the text whatever the pattern, so a policy pattern cannot be
 * made to backtrack by what a model or a server sends. A pattern RE2 does not accept (a
 * backreference, a lookaround) is reported when the policy is read, never run another way.
 */

import { RE2JS } from 're2js';
import { RingfenceError } from '../../errors.js';
import type { CredentialClass } from '../known.js';
import type { FormatHit } from './formats.js';

export interface PolicyPattern {
  readonly class: CredentialClass;
  readonly pattern: string;
}

export class SecretPatternError extends RingfenceError<'SECRET_PATTERN'> {}

export interface CompiledPattern {
  readonly class: CredentialClass;
  readonly regex: RE2JS;
}

/** Each pattern compiled, or an error naming the first that RE2 does not accept. */
export function compilePatterns(patterns: readonly PolicyPattern[]): CompiledPattern[] {
  return patterns.map((entry, index) => {
    try {
      return { class: entry.class, regex: RE2JS.compile(entry.pattern) };
    } catch (error) {
      throw new SecretPatternError(
        'SECRET_PATTERN',
        `the policy's secret_patterns[${index}] (class "${entry.class}") is not a pattern RE2 accepts (${(error as Error).message}); no call can be checked against it. Ask your policy admin to fix it.`,
      );
    }
  });
}

/** Every match of every pattern in `text` (an empty match is skipped: it names nothing). */
export function findPatterns(patterns: readonly CompiledPattern[], text: string): FormatHit[] {
  const out: FormatHit[] = [];
  for (const { class: cls, regex } of patterns) {
    const matcher = regex.matcher(text);
    let from = 0;
    while (from <= text.length && matcher.find(from)) {
      const start = matcher.start();
      const end = matcher.end();
      if (end > start) out.push({ start, end, class: cls });
      from = end > start ? end : start + 1;
    }
  }
  return out;
}

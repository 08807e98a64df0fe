/**
 * ajv's regular-expression engine replaced by RE2 (re2js): linear-time matching, so no
 * `pattern` can backtrack catastrophically. Patterns RE2 cannot express (backreferences,
 * lookaround) fail to compile, and the schema is refused rather than run on a backtracking engine.
 */
import { RE2JS } from 're2js';

/** Thrown inside the worker while ajv compiles; mapped to `SCHEMA_PATTERN`. */
export class PatternRefused extends Error {
  constructor(
    readonly pattern: string,
    reason: string,
  ) {
    super(reason);
  }
}

export interface Re2Like {
  test(input: string): boolean;
  toString(): string;
}

export function compileRe2(pattern: string): Re2Like {
  let compiled: RE2JS;
  try {
    // JSON Schema patterns are ECMA-262 syntax: translate the spellings RE2 writes differently
    // (named groups, \u escapes, \c), then compile with RE2's own grammar.
    compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new PatternRefused(pattern, why);
  }
  return {
    test: (input: string) => compiled.test(input),
    // ajv deduplicates compiled patterns by `toString()`: it must differ between patterns.
    toString: () => `re2:${pattern}`,
  };
}

/** The `code.regExp` option of ajv. `code` only matters for standalone code, which is not used. */
export const re2Engine = Object.assign((pattern: string, _flags: string) => compileRe2(pattern), {
  code: 'ringfenceRe2',
});

/**
 * ajv's regular-expression engine replaced by RE2 (re2js): linear-time matching, so no
 * `pattern` can backtrack catastrophically. The pattern keeps its ECMA-262 `u`-mode meaning
 * (what ajv's default `new RegExp(p, "u")` would match): ecma-regex.ts translates it into RE2
 * syntax with explicit code-point sets. Patterns that cannot keep that meaning (backreferences,
 * lookaround, anything the translator does not understand) fail the compile, and the schema is
 * refused rather than run on a backtracking engine or with a different meaning.
 */
import { RE2JS } from 're2js';
import { RingfenceError } from '../errors.js';
import { PatternProblem, translateEcmaPattern } from './ecma-regex.js';

/** Thrown inside the worker while ajv compiles; mapped to `SCHEMA_PATTERN`. */
export class PatternRefused extends RingfenceError<'SCHEMA_PATTERN'> {
  /** `reason` completes the sentence `pattern "…" <reason>`. */
  constructor(
    readonly pattern: string,
    readonly reason: string,
  ) {
    super('SCHEMA_PATTERN', reason);
  }
}

export interface Re2Like {
  test(input: string): boolean;
  toString(): string;
}

const LINEAR = 'which cannot be checked in linear time with ECMA-262 meaning';

/**
 * Compiled patterns of this thread by source. Schemas repeat patterns, and a `patternProperties`
 * key is compiled twice per schema (by ajv and by the unknown-argument rule). Refusals too.
 */
const compiledCache = new Map<string, Re2Like | PatternRefused>();
const COMPILED_CACHE = 256;

export function compileRe2(pattern: string): Re2Like {
  let entry = compiledCache.get(pattern);
  if (entry === undefined) {
    try {
      entry = compileUncached(pattern);
    } catch (error) {
      if (!(error instanceof PatternRefused)) throw error;
      entry = error;
    }
    if (compiledCache.size >= COMPILED_CACHE) {
      compiledCache.delete(compiledCache.keys().next().value as string);
    }
    compiledCache.set(pattern, entry);
  }
  if (entry instanceof PatternRefused) throw entry;
  return entry;
}

function compileUncached(pattern: string): Re2Like {
  let translated: string;
  try {
    translated = translateEcmaPattern(pattern);
  } catch (error) {
    if (!(error instanceof PatternProblem)) throw error;
    throw new PatternRefused(
      pattern,
      error.kind === 'unsupported'
        ? `uses ${error.detail}, ${LINEAR}`
        : `is not a valid ECMA-262 regular expression (u flag): ${error.detail}`,
    );
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(translated);
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new PatternRefused(pattern, `is more than RE2 can compile (${why}), ${LINEAR}`);
  }
  return {
    test: (input: string) => compiled.test(input),
    // ajv deduplicates compiled patterns by `toString()`: it must differ between patterns.
    toString: () => `re2:${pattern}`,
  };
}

/**
 * The `code.regExp` option of ajv, which calls it with the flags of `new RegExp(p, flags)`. The
 * translation is `u`-mode only; ajv passes "u" unless told otherwise, and anything else is refused.
 * `code` only matters for standalone code, which is not used.
 */
export const re2Engine = Object.assign(
  (pattern: string, flags: string) => {
    if (flags !== 'u') {
      throw new PatternRefused(pattern, `was requested with flags "${flags}"; only "u" is translated`);
    }
    return compileRe2(pattern);
  },
  { code: 'ringfenceRe2' },
);

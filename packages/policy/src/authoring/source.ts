import { parseDocument } from 'yaml';
import { canonicalize } from '../canonical/canonicalize.js';
import { RingfenceError } from '../errors.js';
import { parseStrictJson } from '../json/strict.js';
import type { Policy } from '../policy/types.js';
import { validatePolicy } from '../policy/validate.js';

/** Codes raised while reading a policy source for signing. */
export type SourceErrorCode = 'SOURCE_INVALID';

/** A policy source (YAML or JSON) that cannot be signed. */
export class SourceError extends RingfenceError<SourceErrorCode> {}

/**
 * Reads a policy source authored as JSON (`.json`) or YAML (anything else) and returns the
 * validated policy. YAML is read with the core schema (dates stay strings), duplicate keys and
 * aliases are refused, and the result must pass the same schema the verifier applies, so a
 * mistake is caught before anyone signs it.
 *
 * @throws {SourceError} `SOURCE_INVALID` with what is wrong and where.
 */
export function readPolicySource(text: string, filename: string): Policy {
  let value: unknown;
  try {
    value = filename.toLowerCase().endsWith('.json')
      ? parseStrictJson(text, { source: filename })
      : parseYaml(text, filename);
  } catch (error) {
    if (error instanceof SourceError) throw error;
    throw new SourceError('SOURCE_INVALID', `${filename}: ${(error as Error).message}`);
  }
  try {
    // Whatever the verifier's strict reader would refuse (a "__proto__" member inside an `equals`
    // value, say) is refused here, before a policy nobody can verify gets signed.
    parseStrictJson(canonicalize(value));
  } catch (error) {
    throw new SourceError('SOURCE_INVALID', `${filename}: ${(error as Error).message}`);
  }
  const unsafe = unsafeNumber(value);
  if (unsafe !== undefined) {
    throw new SourceError(
      'SOURCE_INVALID',
      `${filename}: the number ${unsafe} is beyond what JSON numbers hold exactly (±2^53); it would be signed rounded. Write it as a string.`,
    );
  }
  const validated = validatePolicy(value);
  if (!validated.ok) throw new SourceError('SOURCE_INVALID', `${filename}: ${validated.message}`);
  return validated.policy;
}

function parseYaml(text: string, filename: string): unknown {
  const doc = parseDocument(text, { schema: 'core', uniqueKeys: true, strict: true, prettyErrors: true });
  const problem = doc.errors[0] ?? doc.warnings[0];
  if (problem) throw new SourceError('SOURCE_INVALID', `${filename}: ${problem.message}`);
  // An alias would make one YAML node appear twice; refuse it rather than expand it silently.
  return doc.toJS({ maxAliasCount: 0 });
}

/** The first number outside the exactly representable integer range, if any. */
function unsafeNumber(value: unknown): number | undefined {
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const current = stack.pop();
    if (typeof current === 'number' && Number.isInteger(current) && !Number.isSafeInteger(current))
      return current;
    if (typeof current === 'object' && current !== null) stack.push(...Object.values(current));
  }
  return undefined;
}

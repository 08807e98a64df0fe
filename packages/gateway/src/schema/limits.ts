import { RingfenceError } from '@ringfence/policy';
import { DEFAULT_SCHEMA_LIMITS, type SchemaGuardLimits } from './types.js';

/** A guard configured with limits that cannot work (zero, negative, not a number). */
export class SchemaGuardError extends RingfenceError<'SCHEMA_LIMITS'> {}

export function resolveLimits(partial?: Partial<SchemaGuardLimits>): SchemaGuardLimits {
  const out = { ...DEFAULT_SCHEMA_LIMITS };
  for (const key of Object.keys(out) as (keyof SchemaGuardLimits)[]) {
    const value = partial?.[key];
    if (value === undefined) continue;
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0) {
      throw new SchemaGuardError(
        'SCHEMA_LIMITS',
        `schema guard limit ${key} must be a positive number, got ${String(value)}`,
      );
    }
    out[key] = value;
  }
  return out;
}

import type { ErrorObject, ValidateFunction } from 'ajv/dist/2020.js';
import Ajv2020Module from 'ajv/dist/2020.js';
import { isDateTime } from './datetime.js';

// ajv is CommonJS; under NodeNext its default export arrives as the module object, with the class
// on `.default`.
const Ajv2020 = Ajv2020Module.default;

/** One ajv instance for this package's schemas: strict mode, all errors off, own date-time. */
export function compileSchema<T>(schema: object): ValidateFunction<T> {
  const ajv = new Ajv2020({ strict: true, allErrors: false, validateFormats: true });
  ajv.addFormat('date-time', { type: 'string', validate: isDateTime });
  return ajv.compile<T>(schema);
}

/** A one-line description of the first schema error, with the JSON Pointer where it happened. */
export function describeSchemaError(errors: ErrorObject[] | null | undefined): string {
  const first = errors?.[0];
  if (!first) return 'does not match the schema';
  const at = first.instancePath === '' ? 'the top level' : first.instancePath;
  if (first.keyword === 'additionalProperties') {
    return `unknown field ${JSON.stringify((first.params as { additionalProperty: string }).additionalProperty)} at ${at}`;
  }
  if (first.keyword === 'const') {
    return `${at} must be ${JSON.stringify((first.params as { allowedValue: unknown }).allowedValue)}`;
  }
  if (first.keyword === 'enum') {
    return `${at} must be one of ${(first.params as { allowedValues: unknown[] }).allowedValues.map((v) => JSON.stringify(v)).join(', ')}`;
  }
  return `${at} ${first.message ?? 'is invalid'}`;
}

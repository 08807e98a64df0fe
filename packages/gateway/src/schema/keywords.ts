/**
 * Where subschemas sit in a schema object, by keyword: applied in place (same instance
 * location), applied to a child of the instance, data, or unknown. The walk and the reference
 * graph both rely on this table.
 */
import type { Dialect } from './types.js';

export type Kind = 'schema' | 'data' | 'maybe' | 'map' | 'list';

/** Keywords whose value is one subschema applied to the same instance (no progress). */
const IN_PLACE_ONE = new Set(['not', 'if', 'then', 'else']);
const IN_PLACE_MANY = new Set(['allOf', 'anyOf', 'oneOf']);
const IN_PLACE_MAP = new Set(['dependentSchemas', 'dependencies']);
/** Keywords whose subschemas apply to a child of the instance (progress), or nowhere. */
const CHILD_ONE = new Set([
  'items',
  'additionalItems',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
  'contentSchema',
]);
const CHILD_MANY = new Set(['prefixItems', 'items']);
const CHILD_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions']);
/** Keywords whose objects and arrays are data, never schemas. */
const DATA = new Set([
  'enum',
  'const',
  'default',
  'examples',
  'required',
  'type',
  'dependentRequired',
  '$vocabulary',
]);

export function keywordKind(
  key: string,
  child: unknown,
  dialect: Dialect,
): { kind: Kind; inPlace: boolean; patterns?: boolean } {
  if (typeof child !== 'object' || child === null) {
    // A boolean is a subschema where a subschema is expected; every other scalar is data.
    const schemaSlot = IN_PLACE_ONE.has(key) || CHILD_ONE.has(key);
    return {
      kind: schemaSlot && typeof child === 'boolean' ? 'schema' : 'data',
      inPlace: IN_PLACE_ONE.has(key),
    };
  }
  if (IN_PLACE_ONE.has(key)) return { kind: 'schema', inPlace: true };
  if (IN_PLACE_MANY.has(key)) return { kind: 'list', inPlace: true };
  if (IN_PLACE_MAP.has(key)) return { kind: 'map', inPlace: true };
  if (Array.isArray(child) && CHILD_MANY.has(key)) return { kind: 'list', inPlace: false };
  if (CHILD_ONE.has(key)) return { kind: 'schema', inPlace: false };
  if (CHILD_MAP.has(key)) return { kind: 'map', inPlace: false, patterns: key === 'patternProperties' };
  if (DATA.has(key) || key === '$comment') return { kind: 'data', inPlace: false };
  if (dialect === 'draft-07' && (key === '$dynamicRef' || key === '$dynamicAnchor'))
    return { kind: 'data', inPlace: false };
  // Unknown keywords are ignored by ajv, but a `$ref` can still point into them: treat their
  // objects as schemas so that the same locality rules reach them.
  return { kind: 'maybe', inPlace: false };
}

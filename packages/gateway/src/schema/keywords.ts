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

/**
 * Progress labels: `p:NAME` a named property, `P*` a patternProperties value (any matching name),
 * `A*` additionalProperties/unevaluatedProperties (names not in the same schema's `properties`),
 * `i:N` a tuple position, `I*:MIN` every array index from MIN on.
 */
function progressLabel(key: string, record: Record<string, unknown>): string {
  switch (key) {
    case 'items':
      return `I*:${Array.isArray(record.prefixItems) ? record.prefixItems.length : 0}`;
    case 'additionalItems':
      return `I*:${Array.isArray(record.items) ? record.items.length : 0}`;
    case 'contains':
    case 'unevaluatedItems':
      return 'I*:0';
    case 'additionalProperties':
    case 'unevaluatedProperties':
      return 'A*';
    default:
      // propertyNames applies to names (strings: nothing below), contentSchema is not applied.
      return '';
  }
}

export interface Slot {
  kind: Kind;
  inPlace: boolean;
  label: string;
}

export function keywordKind(
  key: string,
  child: unknown,
  dialect: Dialect,
  record: Record<string, unknown>,
): Slot {
  if (typeof child !== 'object' || child === null) {
    // A boolean is a subschema where a subschema is expected; every other scalar is data.
    const schemaSlot = IN_PLACE_ONE.has(key) || CHILD_ONE.has(key);
    const kind = schemaSlot && typeof child === 'boolean' ? 'schema' : 'data';
    return { kind, inPlace: IN_PLACE_ONE.has(key), label: '' };
  }
  if (IN_PLACE_ONE.has(key)) return { kind: 'schema', inPlace: true, label: '' };
  if (IN_PLACE_MANY.has(key)) return { kind: 'list', inPlace: true, label: '' };
  if (IN_PLACE_MAP.has(key)) return { kind: 'map', inPlace: true, label: '' };
  if (Array.isArray(child) && CHILD_MANY.has(key)) return { kind: 'list', inPlace: false, label: 'i' };
  if (CHILD_ONE.has(key)) return { kind: 'schema', inPlace: false, label: progressLabel(key, record) };
  if (key === 'properties') return { kind: 'map', inPlace: false, label: 'p' };
  if (key === 'patternProperties') return { kind: 'map', inPlace: false, label: 'P*' };
  if (CHILD_MAP.has(key)) return { kind: 'map', inPlace: false, label: '' };
  if (DATA.has(key) || key === '$comment') return { kind: 'data', inPlace: false, label: '' };
  if (dialect === 'draft-07' && (key === '$dynamicRef' || key === '$dynamicAnchor')) {
    return { kind: 'data', inPlace: false, label: '' };
  }
  // Unknown keywords are ignored by ajv, but a `$ref` can still point into them: treat their
  // objects as schemas so that the same locality rules reach them.
  return { kind: 'maybe', inPlace: false, label: '' };
}

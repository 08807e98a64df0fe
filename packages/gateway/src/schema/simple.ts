/**
 * Checks for the schemas most tools have — an object of named properties, each of a primitive
 * type or an enum of primitives — done in the gateway's thread instead of a worker. The worker
 * exists so that a slow compile or check can be cut off at its time budget; a schema of this
 * shape has no regex, no reference, no nesting, so one check is a walk over the top-level names
 * of an already size-capped value: linear, nothing to cut off, and no thread hop worth paying for.
 * Anything outside this shape (or any doubt) goes to the worker as before. The verdicts are the
 * worker's (same codes, same first-error text): a differential test holds the two to that.
 */
import { type ArgumentRule, clip, OK, refuse, type SchemaVerdict, unknownArguments } from './types.js';

type Primitive = 'string' | 'number' | 'integer' | 'boolean' | 'null';
const PRIMITIVES: ReadonlySet<string> = new Set(['string', 'number', 'integer', 'boolean', 'null']);
/** Keywords that only annotate (ajv ignores them when validating, as configured). */
const ANNOTATIONS: ReadonlySet<string> = new Set(['description', 'title', '$comment', 'examples', 'default']);
/** Enums longer than this go to the worker (its check is the reference). */
const MAX_ENUM = 64;
/** Schemas with more properties than this go to the worker. */
const MAX_PROPERTIES = 64;

interface Property {
  readonly name: string;
  readonly types?: readonly Primitive[];
  readonly enum?: readonly (string | number | boolean | null)[];
}

export interface SimpleSchema {
  readonly properties: readonly Property[];
  readonly required: readonly string[];
  readonly closed: boolean;
}

const isPlain = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function primitiveTypes(type: unknown): Primitive[] | undefined {
  const list = typeof type === 'string' ? [type] : Array.isArray(type) ? type : undefined;
  if (!list || list.length === 0 || !list.every((t) => typeof t === 'string' && PRIMITIVES.has(t)))
    return undefined;
  if (new Set(list).size !== list.length) return undefined;
  return list as Primitive[];
}

function property(name: string, schema: unknown): Property | undefined {
  if (!isPlain(schema)) return undefined;
  let types: Primitive[] | undefined;
  let values: (string | number | boolean | null)[] | undefined;
  for (const [key, value] of Object.entries(schema)) {
    if (ANNOTATIONS.has(key)) continue;
    if (key === 'type') {
      types = primitiveTypes(value);
      if (!types) return undefined;
    } else if (key === 'enum') {
      if (!Array.isArray(value) || value.length === 0 || value.length > MAX_ENUM) return undefined;
      if (!value.every((v) => v === null || ['string', 'number', 'boolean'].includes(typeof v)))
        return undefined;
      values = value as (string | number | boolean | null)[];
    } else return undefined;
  }
  return { name, ...(types ? { types } : {}), ...(values ? { enum: values } : {}) };
}

/** The schema in the simple shape, or undefined when the worker must check it. */
export function simpleSchema(compiled: unknown, rule: ArgumentRule): SimpleSchema | undefined {
  if (!isPlain(compiled) || compiled.type !== 'object' || rule.patterns.length > 0) return undefined;
  let properties: Property[] = [];
  let required: string[] = [];
  let closed = false;
  for (const [key, value] of Object.entries(compiled)) {
    if (ANNOTATIONS.has(key) || key === 'type') continue;
    if (key === 'properties') {
      if (!isPlain(value)) return undefined;
      const entries = Object.entries(value);
      if (entries.length > MAX_PROPERTIES) return undefined;
      const parsed = entries.map(([name, schema]) => property(name, schema));
      if (parsed.some((p) => p === undefined)) return undefined;
      properties = parsed as Property[];
    } else if (key === 'required') {
      if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) return undefined;
      if (new Set(value).size !== value.length) return undefined;
      required = value as string[];
    } else if (key === 'additionalProperties') {
      if (typeof value !== 'boolean') return undefined;
      closed = !value;
    } else return undefined;
  }
  return { properties, required, closed };
}

const hasOwn = (o: object, k: string) => Object.hasOwn(o, k);

function isType(value: unknown, type: Primitive): boolean {
  switch (type) {
    case 'null':
      return value === null;
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value);
    case 'number':
      return typeof value === 'number' && Number.isFinite(value);
    default:
      return typeof value === type;
  }
}

/** ajv's wording for the first error, as the worker's `describe` turns it into a sentence. */
function invalid(role: 'arguments' | 'result', path: string, message: string): SchemaVerdict {
  const subject = role === 'arguments' ? 'argument' : 'structuredContent';
  const where = path === '' ? (role === 'arguments' ? 'the arguments' : subject) : `${subject} ${path}`;
  return refuse(
    role === 'arguments' ? 'ARGUMENTS_INVALID' : 'RESULT_INVALID',
    clip(`${where}: ${message}`, 240),
  );
}

const pointer = (name: string) => `/${name.replaceAll('~', '~0').replaceAll('/', '~1')}`;

/** The check itself, in ajv's order: type, required, properties (in order), additional names. */
export function checkSimple(
  schema: SimpleSchema,
  rule: ArgumentRule,
  value: unknown,
  role: 'arguments' | 'result',
): SchemaVerdict {
  if (role === 'arguments') {
    const unknown = unknownArguments(rule, value, () => false);
    if (unknown) return unknown;
  }
  if (!isPlain(value)) return invalid(role, '', 'must be object');
  for (const name of schema.required) {
    if (!hasOwn(value, name)) return invalid(role, '', `must have required property '${name}'`);
  }
  if (schema.closed) {
    for (const name of Object.keys(value)) {
      if (!schema.properties.some((p) => p.name === name))
        return invalid(role, '', `must NOT have additional properties (${JSON.stringify(name)})`);
    }
  }
  for (const p of schema.properties) {
    if (!hasOwn(value, p.name)) continue;
    const v = value[p.name];
    if (p.types && !p.types.some((t) => isType(v, t)))
      return invalid(role, pointer(p.name), `must be ${p.types.join(',')}`);
    if (p.enum && !p.enum.some((allowed) => allowed === v))
      return invalid(role, pointer(p.name), 'must be equal to one of the allowed values');
  }
  return OK;
}

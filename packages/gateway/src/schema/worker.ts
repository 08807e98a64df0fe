/**
 * Validation worker: compiles vetted schemas with ajv (RE2 for patterns, no remote loading) and
 * checks values against them. Runs off the gateway's event loop so that a slow compile or check
 * can be cut off by terminating this thread.
 */
import { parentPort } from 'node:worker_threads';
import type { ErrorObject, ValidateFunction } from 'ajv';
import AjvModule from 'ajv';
import Ajv2020Module from 'ajv/dist/2020.js';
import { GatewayError } from '../errors.js';
import type { WorkerMessage, WorkerRequest } from './protocol.js';
import { compileRe2, PatternRefused, type Re2Like, re2Engine } from './regex.js';
import {
  type ArgumentRule,
  clip,
  type Dialect,
  OK,
  refuse,
  type SchemaVerdict,
  unknownArguments,
} from './types.js';

const CACHE_SIZE = 256;

const options = {
  strict: false,
  // Inlining would copy referenced subschemas into each user: a few refs become a large program.
  inlineRefs: false,
  // Formats are annotations in 2020-12; asserting them would need format code (and regexes)
  // that this guard does not vet.
  validateFormats: false,
  ownProperties: true,
  allErrors: false,
  logger: false as const,
  // ajv's code optimizer is superlinear: ~1.2 s instead of ~0.2 s for 2,000 properties.
  code: { regExp: re2Engine, optimize: false },
  // Never `loadSchema`: nothing is fetched; a reference ajv cannot resolve fails the compile.
} as const;

const engines: Partial<Record<Dialect, InstanceType<typeof Ajv2020Module.default>>> = {};

function engine(dialect: Dialect) {
  let ajv = engines[dialect];
  if (ajv === undefined) {
    ajv = dialect === '2020-12' ? new Ajv2020Module.default(options) : new AjvModule.default(options);
    engines[dialect] = ajv;
  }
  return ajv;
}

interface Entry {
  validate: ValidateFunction;
  schema: object | boolean;
  dialect: Dialect;
  rule: ArgumentRule;
  patterns: Re2Like[];
}

/** Least recently used last out: a Map keeps insertion order, re-inserting marks a use. */
const cache = new Map<string, Entry>();

function prepare(
  digest: string,
  dialect: Dialect,
  schema: unknown,
  rule: ArgumentRule,
): Entry | SchemaVerdict {
  const cached = cache.get(digest);
  if (cached !== undefined) {
    cache.delete(digest);
    cache.set(digest, cached);
    return cached;
  }
  const ajv = engine(dialect);
  let entry: Entry;
  try {
    const patterns = rule.patterns.map(compileRe2);
    const validate = ajv.compile(schema as object | boolean);
    entry = { validate, schema: schema as object | boolean, dialect, rule, patterns };
  } catch (error) {
    if (error instanceof PatternRefused) {
      return refuse(
        'SCHEMA_PATTERN',
        `pattern ${JSON.stringify(error.pattern.slice(0, 80))} ${error.reason}`,
      );
    }
    if (error instanceof RangeError)
      return refuse('SCHEMA_TOO_COMPLEX', `the schema cannot be compiled: ${error.message}`);
    const message = error instanceof Error ? error.message : String(error);
    return refuse('SCHEMA_INVALID', `the schema cannot be compiled: ${message}`);
  }
  cache.set(digest, entry);
  if (cache.size > CACHE_SIZE) {
    const [oldest, old] = cache.entries().next().value as [string, Entry];
    cache.delete(oldest);
    // ajv keeps every compiled schema otherwise; a long session would grow without bound.
    engines[old.dialect]?.removeSchema(old.schema as object);
  }
  return entry;
}

function describe(error: ErrorObject | undefined, role: 'arguments' | 'result'): string {
  if (error === undefined)
    return role === 'arguments' ? 'the arguments are invalid' : 'structuredContent is invalid';
  const subject = role === 'arguments' ? 'argument' : 'structuredContent';
  const where =
    error.instancePath === ''
      ? role === 'arguments'
        ? 'the arguments'
        : subject
      : `${subject} ${error.instancePath}`;
  let message = error.message ?? 'is invalid';
  const params = error.params as Record<string, unknown>;
  const extra = params.additionalProperty ?? params.unevaluatedProperty;
  if (typeof extra === 'string') message += ` (${JSON.stringify(extra)})`;
  return `${where}: ${message}`;
}

function handle(request: WorkerRequest): SchemaVerdict {
  const prepared = prepare(request.digest, request.dialect, request.schema, request.rule);
  if (!('validate' in prepared)) return prepared;
  if (request.op === 'compile') return OK;
  if (request.role === 'arguments') {
    const unknown = unknownArguments(prepared.rule, request.value, (name) =>
      prepared.patterns.some((p) => p.test(name)),
    );
    if (unknown) return unknown;
  }
  try {
    if (prepared.validate(request.value) === true) return OK;
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return refuse(
      request.role === 'arguments' ? 'ARGUMENTS_INVALID' : 'RESULT_INVALID',
      `cannot be checked: ${message}`,
    );
  }
  return refuse(
    request.role === 'arguments' ? 'ARGUMENTS_INVALID' : 'RESULT_INVALID',
    clip(describe(prepared.validate.errors?.[0], request.role), 240),
  );
}

const port = parentPort;
if (port === null)
  throw new GatewayError(
    'INVARIANT',
    'the schema worker must run in a worker thread (the guard starts it as one); this is a ringfence bug, please report it',
  );
port.on('message', (request: WorkerRequest) => {
  let verdict: SchemaVerdict;
  try {
    verdict = handle(request);
  } catch (error) {
    verdict = refuse(
      'SCHEMA_RESOURCES',
      `unexpected failure: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  port.postMessage({ type: 'verdict', id: request.id, verdict } satisfies WorkerMessage);
});
// Compiling a meta-schema once up front keeps the first real check inside its budget.
engine('2020-12').compile({ type: 'object' });
port.postMessage({ type: 'ready' } satisfies WorkerMessage);

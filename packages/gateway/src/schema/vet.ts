/**
 * Static vetting of an untrusted JSON Schema, before anything compiles it: dialect, size, depth,
 * subschema count, pattern length, reference locality, reference cycles without progress and
 * in-place expansion, exponential recursion. One iterative pass over the value plus bounded
 * graph work; no compiling.
 */

import { escapePointerToken } from '@ringfence/policy';
import { checkAmbiguity } from './ambiguity.js';
import { buildArgumentRule, checkGraph, resolveRefs, type SchemaGraph } from './graph.js';
import { type Kind, keywordKind } from './keywords.js';
import { resolveLimits } from './limits.js';
import { containerProblem, scalarBytes, scalarProblem, stringBytes, wellFormed } from './measure.js';
import {
  ANCHOR,
  type ArgumentRule,
  type Dialect,
  EXPANSION_FACTOR,
  OK,
  refuse,
  type SchemaGuardLimits,
  type SchemaVerdict,
} from './types.js';

export interface SchemaAnalysis {
  dialect: Dialect;
  /** What the worker compiles: the root without `$schema` and `$id` (both already acted on). */
  compiled: unknown;
  argumentRule: ArgumentRule;
}

export type Analyzed =
  | { verdict: SchemaVerdict & { ok: false } }
  | { verdict: typeof OK; analysis: SchemaAnalysis };

/** Steps the ambiguity check may take (a few ms); past that the time budget is the only guard. */
const AMBIGUITY_WORK = 250_000;

const DIALECTS: Record<string, Dialect> = {
  'https://json-schema.org/draft/2020-12/schema': '2020-12',
  'https://json-schema.org/draft/2020-12/schema#': '2020-12',
  'http://json-schema.org/draft-07/schema': 'draft-07',
  'http://json-schema.org/draft-07/schema#': 'draft-07',
};

interface Frame {
  value: unknown;
  depth: number;
  pointer: string;
  kind: Kind;
  /** Node whose keyword led here, and whether that keyword applies in place. */
  parent: number;
  inPlace: boolean;
  /** Whether properties found through this in-place link count as declared (not under `not`). */
  decl: boolean;
  /**
   * How this subschema moves into the instance (see keywords.ts: `p:name`, `P*`, `A*`, `i:n`,
   * `I*:min`), or '' when it applies in place or not at all. On maps and lists: the prefix
   * (`p`, `P*`, `i`) their members complete.
   */
  label: string;
}

/** One constructor, one object shape: the walk stays monomorphic and fast. */
function frameOf(
  value: unknown,
  depth: number,
  pointer: string,
  kind: Kind,
  parent: number,
  inPlace: boolean,
  decl: boolean,
  label: string,
): Frame {
  return { value, depth, pointer, kind, parent, inPlace, decl, label };
}

/** Vets an untrusted schema without compiling it. Pure, synchronous, bounded by the limits. */
export function vetSchema(schema: unknown, limits?: Partial<SchemaGuardLimits>): SchemaVerdict {
  return analyzeSchema(schema, resolveLimits(limits)).verdict;
}

export function analyzeSchema(schema: unknown, limits: SchemaGuardLimits): Analyzed {
  let dialect: Dialect = '2020-12';
  if (
    typeof schema === 'object' &&
    schema !== null &&
    !Array.isArray(schema) &&
    Object.hasOwn(schema, '$schema')
  ) {
    const declared = (schema as Record<string, unknown>).$schema;
    const known = typeof declared === 'string' ? DIALECTS[declared] : undefined;
    if (known === undefined) {
      const shown = typeof declared === 'string' ? JSON.stringify(declared.slice(0, 100)) : typeof declared;
      return {
        verdict: refuse(
          'SCHEMA_DIALECT',
          `$schema ${shown} is not supported; use JSON Schema 2020-12 (no $schema) or draft-07`,
        ),
      };
    }
    dialect = known;
  } else if (
    typeof schema !== 'boolean' &&
    (typeof schema !== 'object' || schema === null || Array.isArray(schema))
  ) {
    return { verdict: refuse('SCHEMA_INVALID', 'a schema must be an object or a boolean') };
  }

  const graph: SchemaGraph = {
    nodes: [],
    pointers: [],
    edges: [],
    declEdges: [],
    progress: [],
    refs: [],
    anchors: new Map(),
    ids: new Map(),
  };
  const walked = walk(schema, dialect, limits, graph);
  if (walked !== undefined) return { verdict: walked };
  const resolved = resolveRefs(schema, graph);
  if (resolved !== undefined) return { verdict: resolved };
  const cyclic = checkGraph(graph, limits.maxSubschemas * EXPANSION_FACTOR);
  if (cyclic !== undefined) return { verdict: cyclic };
  const ambiguous = checkAmbiguity(graph, AMBIGUITY_WORK);
  if (ambiguous !== undefined) return { verdict: ambiguous };

  let compiled: unknown = schema;
  if (typeof schema === 'object' && schema !== null) {
    const { $schema: _s, $id: _i, ...rest } = schema as Record<string, unknown>;
    compiled = rest;
  }
  return { verdict: OK, analysis: { dialect, compiled, argumentRule: buildArgumentRule(graph) } };
}

function walk(
  schema: unknown,
  dialect: Dialect,
  limits: SchemaGuardLimits,
  graph: SchemaGraph,
): (SchemaVerdict & { ok: false }) | undefined {
  let bytes = 0;
  let subschemas = 0;
  const stack: Frame[] = [frameOf(schema, 0, '', 'schema', -1, false, true, '')];
  const at = (pointer: string) => (pointer === '' ? 'the root' : pointer);
  while (stack.length > 0) {
    const frame = stack.pop() as Frame;
    const { value, depth, pointer } = frame;
    let kind = frame.kind;
    if (kind === 'maybe')
      kind = typeof value === 'object' && value !== null && !Array.isArray(value) ? 'schema' : 'data';
    if (kind === 'schema') {
      subschemas += 1;
      if (subschemas > limits.maxSubschemas) {
        return refuse('SCHEMA_TOO_MANY_SUBSCHEMAS', `more than ${limits.maxSubschemas} subschemas`);
      }
      if (
        typeof value !== 'boolean' &&
        (typeof value !== 'object' || value === null || Array.isArray(value))
      ) {
        return refuse('SCHEMA_INVALID', `the subschema at ${at(pointer)} must be an object or a boolean`);
      }
    }
    if (typeof value !== 'object' || value === null) {
      const what = scalarProblem(value);
      if (what !== undefined) return refuse('SCHEMA_INVALID', `${what} at ${at(pointer)} is not JSON`);
      bytes += scalarBytes(value, limits.maxSchemaBytes - bytes + 1);
      if (bytes > limits.maxSchemaBytes) return tooLarge(limits);
      continue;
    }
    if (depth >= limits.maxDepth) {
      return refuse(
        'SCHEMA_TOO_DEEP',
        `nested deeper than ${limits.maxDepth} levels (at ${at(pointer).slice(0, 120)})`,
      );
    }
    const what = containerProblem(value);
    if (what !== undefined) return refuse('SCHEMA_INVALID', `${what} at ${at(pointer)} is not JSON`);
    const record = value as Record<string, unknown>;
    const keys = Array.isArray(value) ? [] : Object.keys(record);
    const length = Array.isArray(value) ? value.length : keys.length;
    bytes += 2 + Math.max(0, length - 1);
    if (bytes > limits.maxSchemaBytes) return tooLarge(limits);

    if (Array.isArray(value)) {
      const childKind: Kind = kind === 'list' ? 'schema' : 'data';
      for (let i = value.length - 1; i >= 0; i--) {
        if (!(i in value)) return refuse('SCHEMA_INVALID', `an array hole at ${pointer}/${i} is not JSON`);
        const childPointer = `${pointer}/${i}`;
        stack.push(
          frameOf(
            value[i],
            depth + 1,
            childPointer,
            childKind,
            frame.parent,
            frame.inPlace,
            frame.decl,
            frame.label === 'i' ? `i:${i}` : '',
          ),
        );
      }
      continue;
    }

    let node = -1;
    if (kind === 'schema') {
      node = graph.ids.get(value) ?? -1;
      if (node < 0) {
        node = graph.nodes.length;
        graph.ids.set(value, node);
        graph.nodes.push(value);
        graph.pointers.push(pointer);
        graph.edges.push([]);
        graph.declEdges.push([]);
        graph.progress.push([]);
      }
      if (frame.parent >= 0 && frame.inPlace) {
        graph.edges[frame.parent]?.push(node);
        if (frame.decl) graph.declEdges[frame.parent]?.push(node);
      } else if (frame.parent >= 0 && frame.label !== '') {
        graph.progress[frame.parent]?.push({ to: node, label: frame.label });
      }
      const problem = vetKeywords(record, node, depth, pointer, dialect, limits, graph);
      if (problem !== undefined) return problem;
    }

    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i] as string;
      if (!wellFormed(key))
        return refuse('SCHEMA_INVALID', `a key with a lone surrogate at ${at(pointer)} is not JSON`);
      bytes += stringBytes(key, limits.maxSchemaBytes - bytes + 1) + 1;
      if (bytes > limits.maxSchemaBytes) return tooLarge(limits);
      const child = record[key];
      const childPointer = `${pointer}/${escapePointerToken(key)}`;
      if (kind === 'map') {
        if (frame.label === 'P*' && key.length > limits.maxPatternLength) {
          return refuse(
            'SCHEMA_PATTERN',
            `a patternProperties pattern at ${at(pointer)} is longer than ${limits.maxPatternLength}`,
          );
        }
        // dependencies (draft-07) maps a name to a schema or to a list of names.
        const valueKind: Kind = Array.isArray(child) ? 'data' : 'schema';
        const label = frame.label === 'p' ? `p:${key}` : frame.label;
        stack.push(
          frameOf(child, depth + 1, childPointer, valueKind, frame.parent, frame.inPlace, frame.decl, label),
        );
      } else if (kind === 'schema') {
        const slot = keywordKind(key, child, dialect, record);
        stack.push(
          frameOf(child, depth + 1, childPointer, slot.kind, node, slot.inPlace, key !== 'not', slot.label),
        );
      } else {
        stack.push(frameOf(child, depth + 1, childPointer, 'data', -1, false, false, ''));
      }
    }
  }
  return undefined;
}

function vetKeywords(
  record: Record<string, unknown>,
  node: number,
  depth: number,
  pointer: string,
  dialect: Dialect,
  limits: SchemaGuardLimits,
  graph: SchemaGraph,
): (SchemaVerdict & { ok: false }) | undefined {
  const where = pointer === '' ? 'the root' : pointer;
  if (depth > 0 && Object.hasOwn(record, '$schema')) {
    return refuse('SCHEMA_DIALECT', `$schema at ${where} is only allowed at the root`);
  }
  if (Object.hasOwn(record, '$id')) {
    const id = record.$id;
    if (typeof id !== 'string') return refuse('SCHEMA_INVALID', `$id at ${where} must be a string`);
    if (depth > 0) {
      // draft-07 declared plain-name anchors as `$id: "#name"`; any other embedded $id would
      // start a new base URI, and with it references that resolve somewhere else.
      if (dialect === 'draft-07' && id.startsWith('#') && ANCHOR.test(id.slice(1))) {
        const clash = addAnchor(graph, id.slice(1), node, where);
        if (clash !== undefined) return clash;
      } else {
        return refuse(
          'SCHEMA_REMOTE_REF',
          `an embedded $id at ${where} would change where references resolve`,
        );
      }
    }
  }
  for (const keyword of dialect === '2020-12' ? ['$anchor', '$dynamicAnchor'] : []) {
    if (!Object.hasOwn(record, keyword)) continue;
    const name = record[keyword];
    if (typeof name !== 'string' || !ANCHOR.test(name)) {
      return refuse('SCHEMA_INVALID', `${keyword} at ${where} must be a plain name`);
    }
    const clash = addAnchor(graph, name, node, where);
    if (clash !== undefined) return clash;
  }
  for (const keyword of dialect === '2020-12' ? ['$ref', '$dynamicRef'] : ['$ref']) {
    if (!Object.hasOwn(record, keyword)) continue;
    const ref = record[keyword];
    if (typeof ref !== 'string') return refuse('SCHEMA_INVALID', `${keyword} at ${where} must be a string`);
    if (!ref.startsWith('#')) {
      return refuse(
        'SCHEMA_REMOTE_REF',
        `${keyword} ${JSON.stringify(ref.slice(0, 100))} at ${where} is not local; only "#…" references within the schema are allowed`,
      );
    }
    graph.refs.push({ from: node, ref, where: `${keyword} at ${where}` });
  }
  if (Object.hasOwn(record, '$recursiveRef')) {
    return refuse(
      'SCHEMA_DIALECT',
      `$recursiveRef at ${where} belongs to draft 2019-09, which is not supported`,
    );
  }
  const pattern = record.pattern;
  if (typeof pattern === 'string' && pattern.length > limits.maxPatternLength) {
    return refuse('SCHEMA_PATTERN', `the pattern at ${where} is longer than ${limits.maxPatternLength}`);
  }
  return undefined;
}

function addAnchor(
  graph: SchemaGraph,
  name: string,
  node: number,
  where: string,
): (SchemaVerdict & { ok: false }) | undefined {
  const existing = graph.anchors.get(name);
  if (existing !== undefined && existing !== node) {
    return refuse('SCHEMA_INVALID', `anchor "${name}" at ${where} is declared twice`);
  }
  graph.anchors.set(name, node);
  return undefined;
}

function tooLarge(limits: SchemaGuardLimits): SchemaVerdict & { ok: false } {
  return refuse('SCHEMA_TOO_LARGE', `the schema is larger than ${limits.maxSchemaBytes} bytes serialized`);
}

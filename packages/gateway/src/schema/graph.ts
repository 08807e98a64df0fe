/**
 * The in-place application graph of a schema: which subschemas apply to the same instance
 * location (allOf/anyOf/oneOf/not/if/then/else/dependentSchemas/$ref/$dynamicRef). A cycle in it
 * is a reference loop that makes no progress through the instance (ajv would recurse forever);
 * the number of paths through it is how many subschemas one instance location meets.
 */
import { MISSING, resolvePointer } from '@ringfence/policy';
import { ANCHOR, type ArgumentRule, refuse, type SchemaVerdict } from './types.js';

export interface SchemaGraph {
  /** Schema objects by node id; id 0 is the root when the root is an object. */
  nodes: object[];
  pointers: string[];
  /** In-place edges, for cycles and expansion. */
  edges: number[][];
  /** Edges into a child of the instance, with how they move (keywords.ts, progressLabel). */
  progress: { to: number; label: string }[][];
  /** In-place edges that declare argument names (everything but `not`). */
  declEdges: number[][];
  refs: { from: number; ref: string; where: string }[];
  anchors: Map<string, number>;
  ids: Map<object, number>;
}

type Refusal = SchemaVerdict & { ok: false };

/** Turns every local `$ref` into an edge, refusing those that point at nothing or at data. */
export function resolveRefs(root: unknown, graph: SchemaGraph): Refusal | undefined {
  for (const { from, ref, where } of graph.refs) {
    const target = resolveFragment(root, ref.slice(1), graph);
    if (target === 'missing') {
      return refuse(
        'SCHEMA_INVALID',
        `${where}: ${JSON.stringify(ref.slice(0, 100))} does not point at a subschema`,
      );
    }
    if (target === 'boolean') continue;
    graph.edges[from]?.push(target);
    graph.declEdges[from]?.push(target);
  }
  return undefined;
}

function resolveFragment(
  root: unknown,
  fragment: string,
  graph: SchemaGraph,
): number | 'boolean' | 'missing' {
  if (fragment !== '' && !fragment.startsWith('/')) {
    if (!ANCHOR.test(fragment)) return 'missing';
    return graph.anchors.get(fragment) ?? 'missing';
  }
  const current = resolvePointer(root, fragment, { uriFragment: true });
  if (current === MISSING) return 'missing';
  if (typeof current === 'boolean') return 'boolean';
  if (typeof current !== 'object' || current === null) return 'missing';
  return graph.ids.get(current) ?? 'missing';
}

/**
 * Refuses in-place cycles and in-place expansion above `maxExpansion`, with an iterative
 * depth-first search (post-order) so that long chains cannot exhaust the call stack.
 */
export function checkGraph(graph: SchemaGraph, maxExpansion: number): Refusal | undefined {
  const count = graph.nodes.length;
  const state = new Uint8Array(count); // 0 unseen, 1 on the current path, 2 finished
  const cost = new Float64Array(count);
  const nodeStack: number[] = [];
  const edgeStack: number[] = [];
  for (let start = 0; start < count; start++) {
    if (state[start] !== 0) continue;
    nodeStack.push(start);
    edgeStack.push(0);
    state[start] = 1;
    while (nodeStack.length > 0) {
      const top = nodeStack.length - 1;
      const node = nodeStack[top] as number;
      const edges = graph.edges[node] ?? [];
      const next = edgeStack[top] as number;
      if (next < edges.length) {
        edgeStack[top] = next + 1;
        const child = edges[next] as number;
        if (state[child] === 1) {
          return refuse(
            'SCHEMA_REF_CYCLE',
            `the subschema at ${graph.pointers[child] || 'the root'} applies itself again without consuming any input (reference cycle)`,
          );
        }
        if (state[child] === 0) {
          state[child] = 1;
          nodeStack.push(child);
          edgeStack.push(0);
        }
        continue;
      }
      let total = 1;
      for (const child of edges) total += cost[child] as number;
      cost[node] = total;
      if (total > maxExpansion) {
        return refuse(
          'SCHEMA_TOO_COMPLEX',
          `the subschema at ${graph.pointers[node] || 'the root'} expands to more than ${maxExpansion} in-place subschemas`,
        );
      }
      state[node] = 2;
      nodeStack.pop();
      edgeStack.pop();
    }
  }
  return undefined;
}

/**
 * The top-level argument rule: names from `properties` and `patternProperties` of the root and
 * of everything applied to the root in place (except under `not`); open when any of those says
 * `additionalProperties` or `unevaluatedProperties` with anything but `false`.
 */
export function buildArgumentRule(graph: SchemaGraph): ArgumentRule {
  const known = new Set<string>();
  const patterns = new Set<string>();
  let open = false;
  if (graph.nodes.length === 0 || graph.pointers[0] !== '') return { known: [], patterns: [], open };
  const seen = new Uint8Array(graph.nodes.length);
  const queue = [0];
  seen[0] = 1;
  while (queue.length > 0) {
    const id = queue.pop() as number;
    const node = graph.nodes[id] as Record<string, unknown>;
    for (const [keyword, into] of [
      ['properties', known],
      ['patternProperties', patterns],
    ] as const) {
      const map = node[keyword];
      if (Object.hasOwn(node, keyword) && typeof map === 'object' && map !== null && !Array.isArray(map)) {
        for (const name of Object.keys(map)) into.add(name);
      }
    }
    for (const keyword of ['additionalProperties', 'unevaluatedProperties']) {
      if (Object.hasOwn(node, keyword) && node[keyword] !== false) open = true;
    }
    for (const child of graph.declEdges[id] ?? []) {
      if (seen[child] === 0) {
        seen[child] = 1;
        queue.push(child);
      }
    }
  }
  return { known: [...known], patterns: [...patterns], open };
}

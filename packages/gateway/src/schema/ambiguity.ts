/**
 * Exponential re-application through recursion. A schema is an automaton over instance paths:
 * progress edges (properties, items, …) read one step of the path, in-place edges (allOf, $ref,
 * …) read nothing. When some subschema can reach itself along two different routes that read
 * the same steps, every level of nesting doubles the work: `allOf` of two `properties: {a: {$ref:
 * n}}` costs 2^depth on `{a:{a:…}}` although it is tiny and acyclic in place. That is the
 * "exponentially ambiguous" automaton of Weber and Seidl, decided here on the pair graph of each
 * recursive component. The check is bounded by `maxWork`; past that it gives up and leaves the
 * time budget as the only guard.
 */
import type { SchemaGraph } from './graph.js';
import { refuse, type SchemaVerdict } from './types.js';

interface Transition {
  to: number;
  label: string;
  /** The node whose keyword made the step (for `A*`: which `properties` it excludes). */
  owner: number;
}

export function checkAmbiguity(
  graph: SchemaGraph,
  maxWork: number,
): (SchemaVerdict & { ok: false }) | undefined {
  const component = components(graph);
  let work = 0;
  const spend = (amount: number) => {
    work += amount;
    return work > maxWork;
  };
  const transitions = new Map<number, Transition[]>();
  for (let q = 0; q < graph.nodes.length; q++) {
    const c = component[q] as number;
    const out: Transition[] = [];
    // Every in-place path from q (the in-place graph is acyclic by now) counts: two paths to the
    // same node are two applications.
    const stack = [q];
    while (stack.length > 0) {
      if (spend(1)) return undefined;
      const r = stack.pop() as number;
      for (const edge of graph.progress[r] ?? []) {
        if (component[edge.to] === c) out.push({ to: edge.to, label: edge.label, owner: r });
      }
      for (const next of graph.edges[r] ?? []) if (component[next] === c) stack.push(next);
    }
    if (out.length > 0) transitions.set(q, out);
  }

  const seen = new Set<number>();
  const pairs: number[] = [];
  const n = graph.nodes.length;
  const found = (node: number) =>
    refuse(
      'SCHEMA_TOO_COMPLEX',
      `the subschema at ${graph.pointers[node] || 'the root'} is applied more than once per level of nesting (validation cost exponential in the depth of the input)`,
    );
  const visit = (a: number, b: number): boolean => {
    if (a === b) return true;
    const key = a < b ? a * n + b : b * n + a;
    if (!seen.has(key)) {
      seen.add(key);
      pairs.push(a, b);
    }
    return false;
  };
  // Two different steps out of one node that can read the same instance step: a fork.
  for (const [q, out] of transitions) {
    for (let i = 0; i < out.length; i++) {
      for (let j = i + 1; j < out.length; j++) {
        if (spend(1)) return undefined;
        const t1 = out[i] as Transition;
        const t2 = out[j] as Transition;
        if (compatible(graph, t1, t2) && visit(t1.to, t2.to)) return found(q);
      }
    }
  }
  // A fork whose two branches meet again (same node, same steps read) closes a second route.
  while (pairs.length > 0) {
    const b = pairs.pop() as number;
    const a = pairs.pop() as number;
    for (const t1 of transitions.get(a) ?? []) {
      for (const t2 of transitions.get(b) ?? []) {
        if (spend(1)) return undefined;
        if (compatible(graph, t1, t2) && visit(t1.to, t2.to)) return found(t1.to);
      }
    }
  }
  return undefined;
}

/** Whether one instance step can be read by both transitions. */
function compatible(graph: SchemaGraph, t1: Transition, t2: Transition): boolean {
  const a = t1.label;
  const b = t2.label;
  const aIndex = a.startsWith('i:') || a.startsWith('I*:');
  const bIndex = b.startsWith('i:') || b.startsWith('I*:');
  if (aIndex !== bIndex) return false;
  if (aIndex) {
    const position = (label: string) => Number(label.slice(label.indexOf(':') + 1));
    if (a.startsWith('i:') && b.startsWith('i:')) return a === b;
    if (a.startsWith('i:')) return position(a) >= position(b);
    if (b.startsWith('i:')) return position(b) >= position(a);
    return true;
  }
  if (a.startsWith('p:') && b.startsWith('p:')) return a === b;
  if (a.startsWith('p:')) return b === 'P*' || !declares(graph, t2.owner, a.slice(2));
  if (b.startsWith('p:')) return a === 'P*' || !declares(graph, t1.owner, b.slice(2));
  return true;
}

function declares(graph: SchemaGraph, node: number, name: string): boolean {
  const properties = (graph.nodes[node] as Record<string, unknown>).properties;
  return typeof properties === 'object' && properties !== null && Object.hasOwn(properties, name);
}

/** Strongly connected components over in-place and progress edges (iterative Tarjan). */
function components(graph: SchemaGraph): Int32Array {
  const n = graph.nodes.length;
  const index = new Int32Array(n).fill(-1);
  const low = new Int32Array(n);
  const component = new Int32Array(n).fill(-1);
  const onStack = new Uint8Array(n);
  const stack: number[] = [];
  const successors = (v: number) => [
    ...(graph.edges[v] ?? []),
    ...(graph.progress[v] ?? []).map((e) => e.to),
  ];
  let counter = 0;
  let next = 0;
  for (let root = 0; root < n; root++) {
    if (index[root] !== -1) continue;
    const work: { v: number; succ: number[]; i: number }[] = [{ v: root, succ: successors(root), i: 0 }];
    index[root] = low[root] = counter++;
    stack.push(root);
    onStack[root] = 1;
    while (work.length > 0) {
      const frame = work[work.length - 1] as { v: number; succ: number[]; i: number };
      const { v } = frame;
      if (frame.i < frame.succ.length) {
        const w = frame.succ[frame.i++] as number;
        if (index[w] === -1) {
          index[w] = low[w] = counter++;
          stack.push(w);
          onStack[w] = 1;
          work.push({ v: w, succ: successors(w), i: 0 });
        } else if (onStack[w] === 1) {
          low[v] = Math.min(low[v] as number, index[w] as number);
        }
        continue;
      }
      if (low[v] === index[v]) {
        let w: number;
        do {
          w = stack.pop() as number;
          onStack[w] = 0;
          component[w] = next;
        } while (w !== v);
        next++;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) low[parent.v] = Math.min(low[parent.v] as number, low[v] as number);
    }
  }
  return component;
}

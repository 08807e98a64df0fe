/**
 * The writer's fast way from an input to its line: the middle of the line (every field between
 * `ts` and `prev`) checked and serialised in one walk of the entry tables, in their order, straight
 * from what the caller handed in: no cleaned copy, no probe entry, no reordered copy. It accepts
 * only what the generic path (`clean`, `checkEntryShape`, `serializeEntry` in format.ts) accepts,
 * and gives the same bytes; anything it is not sure of (a failed check, an object that is not a
 * plain one) it leaves to that path, which then refuses with its own message or writes it.
 */
import { clip } from './clip.js';
import { crossFieldProblem, entrySpec, type Field, type FieldsAcross, fieldsOf, type Spec } from './spec.js';
import type { AuditType } from './types.js';

interface Slot {
  readonly key: string;
  /** `"key":`, led by a comma after the first field written. */
  readonly name: string;
  readonly optional: boolean;
  readonly check: ((value: unknown) => boolean) | undefined;
  readonly nested: Compiled | undefined;
}

interface Compiled {
  readonly spec: Spec;
  readonly slots: readonly Slot[];
}

const compiledSpecs = new WeakMap<Spec, Compiled>();

function compile(spec: Spec, skip: readonly string[] = []): Compiled {
  const slots: Slot[] = [];
  for (const [key, field] of fieldsOf(spec) as readonly (readonly [string, Field])[]) {
    if (skip.includes(key)) continue;
    const nested = typeof field.check === 'function' ? undefined : compiledOf(field.check);
    slots.push({
      key,
      name: `${JSON.stringify(key)}:`,
      optional: field.optional === true,
      check: typeof field.check === 'function' ? field.check : undefined,
      nested,
    });
  }
  return { spec, slots };
}

function compiledOf(spec: Spec): Compiled {
  let compiled = compiledSpecs.get(spec);
  if (!compiled) {
    compiled = compile(spec);
    compiledSpecs.set(spec, compiled);
  }
  return compiled;
}

/** Per type: the envelope without seq, ts and prev (the writer's), and its refs. */
const MIDDLES = new Map<string, { readonly top: Compiled; readonly refs: Compiled }>();
function middleOf(type: string): { readonly top: Compiled; readonly refs: Compiled } | undefined {
  let middle = MIDDLES.get(type);
  if (middle) return middle;
  const spec = entrySpec(type);
  const refs = spec?.refs?.check;
  if (!spec || !refs || typeof refs === 'function') return undefined;
  middle = { top: compile(spec, ['seq', 'ts', 'prev', 'refs']), refs: compiledOf(refs) };
  MIDDLES.set(type, middle);
  return middle;
}

/** What `clean` copies and the shape check walks: an own-enumerable plain object. */
function isPlain(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * `value`'s fields in the table's order, each checked, as the inside of a JSON object; undefined
 * when anything fails (unknown or missing field, a failed check). `replace` stands in for the
 * value of one key (a digest in place of the raw content).
 */
function fieldsText(
  value: Record<string, unknown>,
  compiled: Compiled,
  replaceKey: string | undefined,
  replacement: unknown,
): string | undefined {
  // Unknown fields: `clean` keeps every own enumerable member that is not undefined.
  for (const key of Object.keys(value)) {
    if (value[key] !== undefined && !Object.hasOwn(compiled.spec, key)) return undefined;
  }
  let text = '';
  for (const slot of compiled.slots) {
    let v = slot.key === replaceKey ? replacement : value[slot.key];
    if (v === undefined) {
      if (slot.optional) continue;
      return undefined;
    }
    let written: string | undefined;
    if (slot.nested) {
      if (!isPlain(v)) return undefined;
      const inner = fieldsText(v, slot.nested, undefined, undefined);
      if (inner === undefined) return undefined;
      written = `{${inner}}`;
    } else {
      if (typeof v === 'string') v = clip(v);
      if (!(slot.check as (value: unknown) => boolean)(v)) return undefined;
      written = JSON.stringify(v);
    }
    text += text === '' ? `${slot.name}${written}` : `,${slot.name}${written}`;
  }
  return text;
}

/** The top-level fields of an entry as `prepareEntry` builds them (refs apart). */
export interface MiddleTop {
  readonly type: AuditType;
  readonly session: unknown;
  readonly agent: unknown;
  readonly scope: unknown;
  readonly sandbox: unknown;
  readonly parent_seq?: unknown;
}

/**
 * The middle of the line (`"type":…,"refs":{…}`) for these fields, checked as the probe of
 * `prepareEntry` is (cross-field rules against a seq above any parent_seq); undefined to leave
 * the entry to the generic path.
 */
export function middleText(
  top: MiddleTop,
  refs: unknown,
  replaceKey: string | undefined,
  replacement: unknown,
  probeSeq: number,
): string | undefined {
  const middle = middleOf(top.type);
  if (!middle || !isPlain(refs)) return undefined;
  const head = fieldsText(top as unknown as Record<string, unknown>, middle.top, undefined, undefined);
  if (head === undefined) return undefined;
  const inner = fieldsText(refs, middle.refs, replaceKey, replacement);
  if (inner === undefined) return undefined;
  // The rules between fields look only at enumerations, presence and parent_seq, which clipping
  // cannot change: every value here already passed its own check.
  const across: FieldsAcross = {
    type: top.type,
    seq: probeSeq,
    parent_seq: top.parent_seq as number | undefined,
    refs: {
      phase: refs.phase,
      arguments: replaceKey === 'arguments' ? replacement : refs.arguments,
      kind: refs.kind,
      method: refs.method,
      task: refs.task,
    },
  };
  if (crossFieldProblem(across) !== undefined) return undefined;
  return `${head},"refs":{${inner}}`;
}

import { describe, expect, it } from 'vitest';
import { serializeEntry } from './format.js';
import type { ChainFacts } from './interrupted.js';
import { scanLine } from './scan.js';
import { AUDIT_GENESIS, AUDIT_TYPES, type AuditEntry } from './types.js';
import { parseLine, parseLineByReference } from './verify-lines.js';

// The scanner is security code: it may only ever accept what the reference path (JSON.parse, the
// shape check, the JSON.stringify comparison) accepts, with the same facts. These tests compare the
// two on generated entries of every type and on mutations of their lines.

/** A small seeded generator, so a failure names a case that can be run again. */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  const pick = <T>(items: readonly T[]): T => items[int(items.length)] as T;
  const chance = (p: number) => next() < p;
  return { int, pick, chance };
}
type Random = ReturnType<typeof random>;

const ODD_CHARS = [
  '"',
  '\\',
  '/',
  '\n',
  '\t',
  '\b',
  '\f',
  '\r',
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  'é',
  '€',
  '😀',
  '\u2028',
  '\u2029',
  '\ud800',
  '\udfff',
  '\ufeff',
  ' ',
];
function text(r: Random): string {
  const edge = [
    '',
    'x'.repeat(1024),
    'x'.repeat(1025),
    `${'x'.repeat(1022)}😀`,
    `${'x'.repeat(1023)}😀`,
    'é'.repeat(1024),
  ];
  if (r.chance(0.05)) return r.pick(edge);
  let out = '';
  for (let n = r.int(12); n > 0; n--)
    out += r.chance(0.15) ? r.pick(ODD_CHARS) : r.pick(['a', 'b', 'Z', '0', '-', '_', '.']);
  return out;
}
const name = (r: Random) => (r.chance(0.7) ? r.pick(['docs', 'search', 'gh', 'create_issue', 'a']) : text(r));
const hex = (r: Random) => Array.from({ length: 64 }, () => '0123456789abcdef'[r.int(16)]).join('');
const digest = (r: Random) => (r.chance(0.03) ? `sha256:${hex(r).toUpperCase()}` : `sha256:${hex(r)}`);
const int = (r: Random, valid: readonly number[]) =>
  r.chance(0.9) ? r.pick(valid) : r.pick([0, -1, 1.5, 2 ** 53, 1e21, 65536, 99, 600]);
const maybe = <T>(r: Random, value: () => T): T | undefined => (r.chance(0.5) ? value() : undefined);
function timestamp(r: Random): string {
  if (r.chance(0.05))
    return r.pick(['2026-02-31T24:00:00.000Z', '2026-13-01T00:00:00.000Z', '2026-01-01T00:00:00Z', '']);
  return new Date(r.int(4e12)).toISOString();
}

function refsOf(r: Random, type: string): Record<string, unknown> {
  const policy = () => ({ name: name(r), digest: digest(r), signer: name(r) });
  const kind = () => r.pick(['prompt', 'resource', 'template', 'tool']);
  const digestOrNull = () => (r.chance(0.2) ? null : digest(r));
  switch (type) {
    case 'gateway.start':
      return { pid: int(r, [1, 4242, 2 ** 31]), version: maybe(r, () => name(r)), policy: maybe(r, policy) };
    case 'mcp.decision': {
      const phase = r.chance(0.02) ? 'other' : r.pick(['call', 'expose']);
      const call = phase === 'call' ? !r.chance(0.02) : r.chance(0.02);
      return {
        phase,
        server: name(r),
        tool: name(r),
        kind: maybe(r, kind),
        allowed: r.chance(0.95) ? r.chance(0.7) : 'yes',
        rule: name(r),
        reason: maybe(r, () => text(r)),
        policy: maybe(r, policy),
        arguments: call ? digestOrNull() : undefined,
        digest: phase === 'expose' ? maybe(r, () => digest(r)) : undefined,
      };
    }
    case 'mcp.result':
      return {
        server: name(r),
        tool: name(r),
        kind: maybe(r, kind),
        is_error: r.chance(0.5),
        result: digestOrNull(),
        reason: maybe(r, () => text(r)),
        dropped: maybe(r, () => int(r, [1, 3, 1000])),
        cancelled: maybe(r, () => r.pick(['client', 'timeout', 'server'])),
      };
    case 'mcp.egress':
      return {
        server: name(r),
        host: text(r),
        port: int(r, [0, 443, 65535]),
        allowed: r.chance(0.5),
        status: maybe(r, () => int(r, [100, 403, 599])),
        reason: text(r),
        count: maybe(r, () => int(r, [1, 7])),
      };
    case 'mcp.server_request':
      return {
        server: name(r),
        method: name(r),
        allowed: r.chance(0.5),
        rule: name(r),
        reason: maybe(r, () => text(r)),
        request: digestOrNull(),
        policy: maybe(r, policy),
      };
    default:
      return {
        server: name(r),
        method: name(r),
        is_error: r.chance(0.5),
        answer: digestOrNull(),
        reason: maybe(r, () => text(r)),
      };
  }
}

/** A line as the writer would write it, of any type, with fields that are sometimes invalid. */
function line(r: Random): string {
  const type = r.chance(0.01) ? 'mcp.future' : r.pick(AUDIT_TYPES);
  const seq = int(r, [1, 2, 41, 1_000_000, 999_999_999_999_999, 2 ** 53 - 1]);
  const parent = type === 'mcp.result' || type === 'mcp.server_answer';
  const entry = {
    seq,
    ts: timestamp(r),
    type,
    session: name(r),
    agent: maybe(r, () => name(r)),
    scope: maybe(r, () => name(r)),
    parent_seq: parent ? (r.chance(0.9) ? Math.max(1, seq - 1 - r.int(3)) : seq) : undefined,
    refs: refsOf(r, type),
    prev: r.chance(0.1) ? AUDIT_GENESIS : digest(r),
  };
  if (type === 'mcp.future') return JSON.stringify(entry);
  return serializeEntry(entry as unknown as AuditEntry);
}

const BASE = {
  seq: 7,
  ts: '2026-11-30T12:00:00.000Z',
  type: 'mcp.result',
  session: 's',
  parent_seq: 6,
  refs: { server: 'docs', tool: 'search', is_error: false, result: null },
  prev: AUDIT_GENESIS,
} as const;

/** Edits a careless tool or a forger could make, each keeping the line JSON or nearly so. */
const EDITS: readonly ((text: string, r: Random) => string)[] = [
  (t, r) => insertAt(t, r, r.pick([' ', '\t', '\n', '\r'])),
  (t) => t.replace(/"(\w+)":("[^"]*"|\w+),"(\w+)":("[^"]*"|\w+)/, '"$3":$4,"$1":$2'),
  (t) => t.replace('{"seq":', '{"seq":5,"seq":'),
  (t) => t.replace(/,"prev":/, ',"prev":"x","prev":'),
  (t) => t.replace('}', ',"server":"docs"}'),
  (t, r) =>
    t.replace(
      /"seq":\d+/,
      `"seq":${r.pick(['1.0', '1e0', '-0', '01', '+1', '1E2', '12345678901234567890', '0x1'])}`,
    ),
  (t, r) =>
    t.replace(
      /"(pid|port|status|dropped|count|parent_seq)":\d+/,
      `"$1":${r.pick(['-0', '1.0', '2e1', '00'])}`,
    ),
  (t, r) =>
    t.replace(/[a-z]/, (c) =>
      r.pick([`\\u00${c.charCodeAt(0).toString(16)}`, `\\u00${c.charCodeAt(0).toString(16).toUpperCase()}`]),
    ),
  (t) => t.replace('\\n', '\\u000a').replace('\\"', '\\u0022'),
  (t) => t.replace(/\\u00([0-9a-f]{2})/, (_, h: string) => `\\u00${h.toUpperCase()}`),
  (t) => t.replace('/', '\\/'),
  (t, r) =>
    t.replace(
      /"(server|tool|session|rule|host|reason)":"/,
      `"$1":"${r.pick(['\\ud83d\\ude00', '\\ud800', '\\udc00', '\\ud800\\udc00', '\\uD800', '\u0001', '\t'])}`,
    ),
  (t) => t.replace('true', '1').replace('null', '"null"'),
  (t, r) => t.replace(/sha256:[0-9a-f]/, `sha256:${r.pick(['A', 'g', ' '])}`),
  (t, r) =>
    t.replace(
      /"ts":"[^"]*"/,
      `"ts":"${r.pick(['2026-02-30T23:59:59.999Z', '2026-01-01T24:00:00.001Z', '2026-01-01T23:60:00.000Z', '2026-1-01T00:00:00.000Z', '2026-01-01 00:00:00.000Z'])}"`,
    ),
  (t, r) => t + r.pick([' ', '\r', 'x', ',', '}', '\u0000']),
  (t, r) => t.slice(0, r.int(t.length)),
  (t) => `\ufeff${t}`,
  (t, r) => insertAt(t, r, r.pick(['{', '}', '"', ',', ':', '[]', '\\'])),
  (t, r) => {
    const at = r.int(t.length);
    return t.slice(0, at) + t.slice(at + 1);
  },
  (t) => t.replace(/"refs":\{/, '"refs":{"refs":{},').replace(/,"agent":"[^"]*"/, ''),
  (t, r) => {
    // One member dropped, the last of its object included (a required field missing at the end).
    const members = [...t.matchAll(/,"\w+":("[^"\\]*"|\w+)(?=[,}])/g)];
    const m = members.length > 0 ? r.pick(members) : undefined;
    return m ? t.slice(0, m.index) + t.slice((m.index as number) + m[0].length) : t;
  },
  (t) =>
    t
      .replace(/"phase":"call"/, '"phase":"expose"')
      .replace(/"phase":"expose"(.*),"digest":"[^"]*"/, '"phase":"call"$1'),
];
function insertAt(t: string, r: Random, what: string): string {
  const at = r.int(t.length + 1);
  return t.slice(0, at) + what + t.slice(at);
}
function byteEdit(bytes: Buffer, r: Random): Buffer {
  const out = Buffer.from(bytes);
  const at = r.int(out.length);
  const choice = r.int(4);
  if (choice === 0) out[at] = r.int(256);
  if (choice === 1)
    return Buffer.concat([
      out.subarray(0, at),
      Buffer.from(r.pick([[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80], [0xe2, 0x82]])),
      out.subarray(at),
    ]);
  if (choice === 2) out[at] = (out[at] as number) ^ (1 << r.int(8));
  if (choice === 3) return Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), out]);
  return out;
}

const show = (bytes: Buffer) => JSON.stringify(bytes.toString('latin1'));
const sameFacts = (a: ChainFacts, b: ChainFacts) =>
  a.seq === b.seq && a.prev === b.prev && a.opensCall === b.opensCall && a.closes === b.closes;

/** Both paths on one line. Plain checks, not `expect`, on the hot path: these run 100,000 times. */
function compare(bytes: Buffer, tally: { scanned: number; accepted: number }): void {
  const reference = parseLineByReference(bytes);
  const facts = scanLine(bytes);
  if (reference.ok) tally.accepted += 1;
  if (facts !== undefined) {
    tally.scanned += 1;
    if (!reference.ok)
      expect.fail(`the scanner accepted a line the reference refuses (${reference.message}): ${show(bytes)}`);
    if (!sameFacts(facts, reference.facts)) expect.fail(`the scanner read other facts from ${show(bytes)}`);
  } else if (reference.ok && !bytes.includes('\\ud')) {
    // Short of a lone surrogate the scanner must decide, or the fast path would quietly stop paying.
    expect.fail(`the scanner left a canonical line to the reference: ${show(bytes)}`);
  }
  // What the verifier uses: the same verdict, and the same code and message, as the reference.
  const parsed = parseLine(bytes);
  const same = parsed.ok
    ? reference.ok && parsed.hash === reference.hash && sameFacts(parsed.facts, reference.facts)
    : !reference.ok && parsed.code === reference.code && parsed.message === reference.message;
  if (!same) expect.fail(`parseLine and the reference disagree on ${show(bytes)}`);
}

describe('scanLine against the reference checks', () => {
  it('decides written lines of every type as the reference does, with the same facts', () => {
    const r = random(1);
    const tally = { scanned: 0, accepted: 0 };
    for (let i = 0; i < 20_000; i++) compare(Buffer.from(line(r)), tally);
    // Most generated lines are valid, and the scanner decided nearly all of those itself.
    expect(tally.accepted).toBeGreaterThan(5_000);
    expect(tally.scanned).toBeGreaterThan(3_000);
  });

  it('never accepts an edited line the reference refuses: order, spacing, escapes, numbers, duplicates, trailing bytes, truncation, BOM, CRLF', () => {
    const r = random(2);
    const tally = { scanned: 0, accepted: 0 };
    for (let i = 0; i < 25_000; i++) {
      let text = line(r);
      for (let edits = 1 + r.int(2); edits > 0; edits--) text = r.pick(EDITS)(text, r);
      compare(Buffer.from(text), tally);
    }
    expect(tally.scanned).toBeGreaterThan(1_000);
  });

  it('never accepts a line with bytes edited: invalid UTF-8, overlong forms, encoded surrogates, flipped bits', () => {
    const r = random(3);
    const tally = { scanned: 0, accepted: 0 };
    for (let i = 0; i < 20_000; i++) compare(byteEdit(Buffer.from(line(r)), r), tally);
    expect(tally.scanned).toBeGreaterThan(100);
  });

  it('judges every month, day, hour, minute and second as Date.parse does', () => {
    const tally = { scanned: 0, accepted: 0 };
    const two = (n: number) => String(n).padStart(2, '0');
    const at = (ts: string) => compare(Buffer.from(serializeEntry({ ...BASE, ts } as AuditEntry)), tally);
    for (let a = 0; a < 100; a++) {
      for (let b = 0; b < 100; b++) {
        at(`2024-${two(a)}-${two(b)}T12:00:00.000Z`);
        at(`2024-02-29T${two(a)}:${two(b)}:00.000Z`);
        at(`2024-02-29T${two(a)}:00:${two(b)}.000Z`);
        at(`2024-02-29T24:${two(a)}:${two(b)}.000Z`);
      }
      at(`2024-02-29T24:00:00.${String(a).padStart(3, '0')}Z`);
    }
    expect(tally.accepted).toBeGreaterThan(3_000);
    expect(tally.scanned).toBe(tally.accepted);
  });

  it('counts string lengths in UTF-16 code units at the 1,024 cap, as the reference does', () => {
    const tally = { scanned: 0, accepted: 0 };
    // Escapes are one unit each however many bytes they take: \" is 2, \u0001 is 6.
    for (const unit of ['x', 'é', '€', '😀', '"', '\\', '\n', '\u0001', '\u001f']) {
      for (let n = 1015; n <= 1026; n++) {
        const session = unit.repeat(Math.floor(n / unit.length)) + 'y'.repeat(n % unit.length);
        compare(Buffer.from(serializeEntry({ ...BASE, session } as AuditEntry)), tally);
      }
    }
    expect(tally.accepted).toBeGreaterThan(0);
    expect(tally.scanned).toBe(tally.accepted);
  });
});

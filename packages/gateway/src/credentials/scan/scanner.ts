/**
 * The credential scanner: arguments are egress, results are ingress (issue 27).
 *
 * - {@link SecretScanner.egress} finds what in a request's arguments may not go to the server
 *   called: a stored credential not bound to it, a known format or a policy pattern (never bound:
 *   no store says where such a key may go), unless it is a stored credential bound to that server;
 *   for a server with no network, every hit (a bound one too: it has nowhere legitimate to go).
 * - {@link SecretScanner.redact} replaces every hit in a result by a marker naming its class.
 *
 * The scanner never returns or logs a value: a hit is its class, where it is, and (for a stored
 * credential) its id.
 */

import type { KnownCredential, KnownCredentials } from '../known.js';
import { Detectors } from './detect.js';
import { type CompiledPattern, compilePatterns, type PolicyPattern } from './patterns.js';
import type { Reach } from './reach.js';
import { type Located, walk } from './walk.js';

export type { Reach } from './reach.js';

/** One hit that may not go to the server called: its class and where, never its value. */
export interface EgressHit {
  readonly class: string;
  readonly path: string;
  readonly split: boolean;
  /** A stored credential's id; absent for a format or a policy pattern. */
  readonly credential?: string;
  /** Why it may not go. */
  readonly why: 'not-bound' | 'no-network' | 'unstored';
}

/** How many of each class a redaction removed. */
export type Removed = ReadonlyMap<string, number>;

/** A class as a marker and a message may show it: our own names, or `generic` for anything else. */
export function shownClass(cls: string): string {
  return /^[a-z0-9][a-z0-9-]{0,31}$/.test(cls) ? cls : 'generic';
}

/** The marker a result holds where a secret was. */
export function marker(cls: string): string {
  const shown = shownClass(cls);
  const what = shown === 'jwt' ? 'JWT' : shown === 'private-key' ? 'private key' : `${shown} key`;
  return `[ringfence: ${what} removed]`;
}

const sameRange = (a: { start: number; end: number }, b: { start: number; end: number }) =>
  b.start <= a.start && a.end <= b.end;

export class SecretScanner {
  private cached: { credentials: readonly KnownCredential[]; detectors: Detectors } | undefined;
  private readonly patterns: readonly CompiledPattern[];
  /**
   * Why arguments cannot be checked (a policy pattern RE2 does not accept): every call is then
   * refused, never let through unchecked. Results are still redacted with the rest.
   */
  readonly problem: string | undefined;

  constructor(
    private readonly known: KnownCredentials,
    patterns: readonly PolicyPattern[] = [],
  ) {
    let compiled: CompiledPattern[] = [];
    try {
      compiled = compilePatterns(patterns);
    } catch (error) {
      this.problem = (error as Error).message;
    }
    this.patterns = compiled;
  }

  /** The detectors for the credentials stored now (rebuilt only when the store's answer changes). */
  private async detectors(): Promise<Detectors> {
    const credentials = await this.known.all();
    const cached = this.cached;
    if (
      cached &&
      cached.credentials.length === credentials.length &&
      cached.credentials.every(
        (c, i) =>
          c.value === credentials[i]!.value &&
          c.class === credentials[i]!.class &&
          c.id === credentials[i]!.id,
      )
    ) {
      // Bindings may change without the values: the detectors keep their needles, the hits
      // are judged against the current bindings below.
      this.cached = { credentials, detectors: cached.detectors };
      return cached.detectors;
    }
    const detectors = new Detectors(credentials, this.patterns);
    this.cached = { credentials, detectors };
    return detectors;
  }

  /** The bindings now: by id (the matcher's needles hold the credential as it was compiled). */
  private boundTo(id: string): readonly string[] {
    return this.cached?.credentials.find((c) => c.id === id)?.boundTo ?? [];
  }

  /** What in `args` may not be sent to `server` (with what it can `reach`): empty when all may go. */
  async egress(args: unknown, server: string, reach: Reach | undefined): Promise<EgressHit[]> {
    const found = walk(await this.detectors(), args);
    if (found.length === 0) return [];
    const bound = (hit: Located) =>
      hit.source === 'stored' && hit.credential && this.boundTo(hit.credential.id).includes(server);
    // A format or pattern hit lying within a stored value's hit is that value, not another key:
    // the stored credential's binding decides it.
    const isStoredValue = (hit: Located) =>
      hit.source !== 'stored' &&
      found.some(
        (other) =>
          other.source === 'stored' &&
          other.path === hit.path &&
          other.split === hit.split &&
          sameRange(hit, other),
      );
    const hits: EgressHit[] = [];
    const seen = new Set<string>();
    for (const hit of found) {
      let why: EgressHit['why'];
      if (isStoredValue(hit)) continue;
      if (reach?.kind === 'none') why = 'no-network';
      else if (bound(hit)) continue;
      else why = hit.source === 'stored' ? 'not-bound' : 'unstored';
      const key = `${hit.class}\u0000${hit.path}\u0000${hit.split}\u0000${hit.credential?.id ?? ''}`;
      if (seen.has(key)) continue;
      seen.add(key);
      hits.push({
        class: shownClass(hit.class),
        path: hit.path,
        split: hit.split,
        ...(hit.credential ? { credential: hit.credential.id } : {}),
        why,
      });
    }
    return hits;
  }

  /**
   * `value` with every hit replaced by its class's marker, and how many of each class were
   * removed. `value` itself is never changed: a copy is made only when something was found.
   * A blob (base64 of binary data) that holds a stored value is replaced whole by a text marker.
   */
  async redact<T>(value: T): Promise<{ value: T; removed: Removed }> {
    const detectors = await this.detectors();
    const found = walk(detectors, value, { blobs: true });
    const removed = new Map<string, number>();
    if (found.length === 0) return { value, removed };
    for (const hit of found) {
      const cls = shownClass(hit.class);
      removed.set(cls, (removed.get(cls) ?? 0) + 1);
    }
    const copy = structuredClone(value);
    if (typeof copy === 'string') return { value: replaceRanges(copy, found) as T, removed };
    walk(detectors, copy, { blobs: true, visit: rewrite });
    return { value: copy, removed };
  }
}

/** `text` with each range (merged where they overlap) replaced by the marker of its first class. */
export function replaceRanges(
  text: string,
  hits: readonly { start: number; end: number; class: string }[],
): string {
  if (hits.length === 0) return text;
  const sorted = [...hits].sort((a, b) => a.start - b.start || b.end - a.end);
  let out = '';
  let at = 0;
  for (let i = 0; i < sorted.length; ) {
    const first = sorted[i]!;
    let end = first.end;
    let j = i + 1;
    while (j < sorted.length && sorted[j]!.start < end) end = Math.max(end, sorted[j++]!.end);
    out += text.slice(at, first.start) + marker(first.class);
    at = end;
    i = j;
  }
  return out + text.slice(at);
}

/** The visitor that rewrites one container of the copy: its values, its keys, its blobs. */
function rewrite(
  container: Record<string, unknown> | unknown[],
  pieces: readonly {
    text: string;
    key: string | number;
    isKey: boolean;
    hits: readonly { start: number; end: number; class: string }[];
  }[],
  isBlob: (key: string | number) => boolean,
): void {
  const record = container as Record<string | number, unknown>;
  let keysChanged = false;
  for (const piece of pieces) {
    if (piece.hits.length === 0) continue;
    if (piece.isKey) {
      keysChanged = true;
      continue;
    }
    if (isBlob(piece.key)) {
      replaceBlob(record as Record<string, unknown>, piece.hits[0]!.class);
      continue;
    }
    record[piece.key] = replaceRanges(piece.text, piece.hits);
  }
  if (!keysChanged || Array.isArray(container)) return;
  // Keys with a secret are renamed in place, the object's order kept; a clash gets a number.
  const renamed = new Map(
    pieces
      .filter((p) => p.isKey && p.hits.length > 0)
      .map((p) => [p.key as string, replaceRanges(p.text, p.hits)]),
  );
  const entries = Object.entries(container);
  for (const [key] of entries) delete record[key];
  for (const [key, child] of entries) {
    let name = renamed.get(key) ?? key;
    for (let n = 2; Object.hasOwn(record, name); n++) name = `${renamed.get(key) ?? key} #${n}`;
    record[name] = child;
  }
}

/** A blob holding a stored value: an image or audio item becomes a text item; a resource's contents text. */
function replaceBlob(record: Record<string, unknown>, cls: string): void {
  const text = marker(cls);
  if (typeof record.blob === 'string') {
    delete record.blob;
    record.mimeType = 'text/plain';
    record.text = text;
    return;
  }
  for (const key of Object.keys(record)) if (key !== 'annotations') delete record[key];
  record.type = 'text';
  record.text = text;
}

/**
 * Every string of a JSON value, nested objects and arrays and object keys included, run through
 * the detectors ({@link detect}), with the JSON Pointer of where each hit is. Iterative (an
 * explicit stack): a value nested as deep as the engine can parse costs no recursion here.
 *
 * Split values. The string values of one object (in their order) and the string items of one
 * array are also read as one text, their concatenation with nothing between them, and so are the
 * keys of one object: a value cut into consecutive siblings (`{"a":"AKIAIOSF","b":"ODNN7EXAMPLE"}`,
 * `["sk-ant-", "api03…"]`) is found, and each piece is marked. A value cut across levels, reordered
 * or interleaved with other strings is not (docs/credentials.md, "What is not detected").
 *
 * A key that holds (part of) a hit is never written into a path: its segment is `~secret`, which
 * no JSON Pointer holds (`~` is only ever followed by 0 or 1 there).
 */

import { type Detection, type Detectors, hasAwsKeyId } from './detect.js';
import { findAwsSecrets } from './formats.js';

export const SECRET_SEGMENT = '~secret';

/** One hit, located: the pointer of its string (of the container, for a split one). */
export interface Located extends Detection {
  readonly path: string;
  /** Found only in the concatenation of sibling strings. */
  readonly split: boolean;
  /** Found in an object key (its path names the object). */
  readonly inKey: boolean;
}

/** A string of one container: a key or a value, and what was found in it (local ranges). */
interface Piece {
  readonly text: string;
  readonly key: string | number;
  readonly isKey: boolean;
  readonly hits: Detection[];
}

const segment = (key: string | number): string =>
  typeof key === 'number' ? String(key) : key.replace(/~/g, '~0').replace(/\//g, '~1');

/** The detections of a group of sibling strings, split hits included (each piece gets its part). */
function detectGroup(
  detectors: Detectors,
  pieces: Piece[],
  path: string,
  found: Located[],
  name: (key: string | number) => string,
): void {
  for (const piece of pieces) piece.hits.push(...detectors.detect(piece.text, false));
  const joined = pieces.length > 1 ? detectSplit(detectors, pieces) : [];
  // AWS secret keys are looked for only beside an access key id: in a sibling, or the same string.
  if (pieces.some((p) => hasAwsKeyId(p.hits)) || joined.some((j) => j.hit.class === 'aws')) {
    for (const piece of pieces)
      for (const hit of findAwsSecrets(piece.text)) piece.hits.push({ ...hit, source: 'format' });
  }
  for (const piece of pieces) {
    const at = piece.isKey ? path : `${path}/${name(piece.key)}`;
    for (const hit of piece.hits) found.push({ ...hit, path: at, split: false, inKey: piece.isKey });
  }
  for (const { hit, parts } of joined) {
    for (const { piece, from, to } of parts) piece.hits.push({ ...hit, start: from, end: to });
    found.push({ ...hit, path, split: true, inKey: pieces[0]!.isKey });
  }
}

/** A slice `[from, to)` of one piece, placed in a run of sibling text. */
interface Part {
  readonly piece: Piece;
  readonly from: number;
  readonly to: number;
}

/**
 * The hits that span two or more consecutive pieces, each with the part of every piece it covers.
 * A hit spanning a boundary lies within `window` characters of it (no needle is longer, and a
 * format longer than that is found by its start alone), so a piece longer than twice the window
 * adds only its head and tail: the siblings are read about once more, not the whole text again.
 */
function detectSplit(detectors: Detectors, pieces: readonly Piece[]): { hit: Detection; parts: Part[] }[] {
  const window = detectors.window;
  const runs: Part[][] = [[]];
  for (const piece of pieces) {
    const length = piece.text.length;
    if (length <= 2 * window) runs[runs.length - 1]!.push({ piece, from: 0, to: length });
    else {
      runs[runs.length - 1]!.push({ piece, from: 0, to: window });
      runs.push([{ piece, from: length - window, to: length }]);
    }
  }
  const out: { hit: Detection; parts: Part[] }[] = [];
  for (const run of runs) {
    if (run.length < 2) continue;
    const starts: number[] = [];
    let text = '';
    for (const part of run) {
      starts.push(text.length);
      text += part.piece.text.slice(part.from, part.to);
    }
    for (const hit of detectors.detect(text, false)) {
      const first = lastStartAtOrBefore(starts, hit.start);
      const last = lastStartAtOrBefore(starts, hit.end - 1);
      if (first === last) continue; // within one piece: found there already
      const parts: Part[] = [];
      for (let k = first; k <= last; k++) {
        const part = run[k]!;
        const start = part.from + Math.max(hit.start - starts[k]!, 0);
        const end = part.from + Math.min(hit.end - starts[k]!, part.to - part.from);
        if (end > start) parts.push({ piece: part.piece, from: start, to: end });
      }
      out.push({ hit, parts });
    }
  }
  return out;
}

function lastStartAtOrBefore(starts: readonly number[], at: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/** What a visitor may do with each container's pieces once their hits are known. */
export type Visit = (
  container: Record<string, unknown> | unknown[],
  pieces: readonly Piece[],
  isBlob: (key: string | number) => boolean,
) => void;

/**
 * Walks `value`: every container's string values and keys are detected (split hits included)
 * and handed to `visit`; every hit is returned, located. `blobs` names the members that hold
 * base64 of binary data (an image's `data`, a resource's `blob`): only stored values (their
 * base64) are looked for in those, since a format read out of random base64 names nothing.
 */
export function walk(
  detectors: Detectors,
  value: unknown,
  options: { blobs?: boolean; visit?: Visit } = {},
): Located[] {
  const found: Located[] = [];
  if (typeof value === 'string') {
    for (const hit of detectors.detect(value, true))
      found.push({ ...hit, path: '', split: false, inKey: false });
    return found;
  }
  const stack: { node: unknown; path: string }[] = [{ node: value, path: '' }];
  while (stack.length > 0) {
    const { node, path } = stack.pop()!;
    if (typeof node !== 'object' || node === null) continue;
    const isArray = Array.isArray(node);
    const record = node as Record<string, unknown>;
    const blobKey = options.blobs ? blobMember(record, isArray) : undefined;
    const values: Piece[] = [];
    const keys: Piece[] = [];
    const entries: [string | number, unknown][] = isArray
      ? (node as unknown[]).map((item, index) => [index, item])
      : Object.entries(record);
    for (const [key, child] of entries) {
      if (!isArray) keys.push({ text: key as string, key, isKey: true, hits: [] });
      if (typeof child === 'string') {
        if (key === blobKey) {
          const hits = detectors.detectStored(child);
          for (const hit of hits)
            found.push({ ...hit, path: `${path}/${segment(key)}`, split: false, inKey: false });
          values.push({ text: '', key, isKey: false, hits });
        } else values.push({ text: child, key, isKey: false, hits: [] });
      }
    }
    // Keys first: a value's path names its key, so whether that key holds (part of) a secret must
    // be known before the value's hits are placed, or the secret would be written into their path.
    if (keys.length > 0) detectGroup(detectors, keys, path, found, segment);
    const secretKeys = new Set(keys.filter((k) => k.hits.length > 0).map((k) => k.key));
    const name = (key: string | number): string => (secretKeys.has(key) ? SECRET_SEGMENT : segment(key));
    detectGroup(
      detectors,
      values.filter((p) => p.text !== '' || p.hits.length === 0),
      path,
      found,
      name,
    );
    options.visit?.(
      node as Record<string, unknown> | unknown[],
      [...keys, ...values],
      (key) => key === blobKey,
    );
    // Children are pushed in reverse so they are visited in order (paths come out in document order).
    for (let i = entries.length - 1; i >= 0; i--) {
      const [key, child] = entries[i]!;
      if (typeof child !== 'object' || child === null) continue;
      stack.push({ node: child, path: `${path}/${name(key)}` });
    }
  }
  return found;
}

/** The member of `record` that holds a blob's base64, if it is a blob (MCP's image, audio and blob resource contents). */
function blobMember(record: Record<string, unknown>, isArray: boolean): string | undefined {
  if (isArray) return undefined;
  if (typeof record.blob === 'string') return 'blob';
  if ((record.type === 'image' || record.type === 'audio') && typeof record.data === 'string') return 'data';
  return undefined;
}

/**
 * Stored credential values, and the simple derivations of each, found as literals in linear time:
 * one Aho-Corasick automaton over every needle (the known formats' prefixes included, detect.ts),
 * so a text is read once whatever the number of credentials, and a hostile text (a value's prefix
 * repeated a million times) costs what any text of its length does. Memory is bounded by the
 * needles' total length (a node per character), not by the text. Documented in docs/credentials.md ("What is detected").
 */

import type { KnownCredential } from '../known.js';

/** How a value was written where it was found. */
export type Derivation = 'literal' | 'json-escaped' | 'base64' | 'base64url' | 'percent-encoded' | 'hex';

/** A stored value as it may be written: the credential and how. */
export interface Stored {
  readonly credential: KnownCredential;
  readonly derivation: Derivation;
}

/**
 * The shortest stored value looked for: a shorter one (a PIN, `true`) would match ordinary text
 * everywhere. Shorter values are still held by the store, only not looked for (documented).
 */
export const MIN_VALUE_LENGTH = 8;
/** The shortest derived needle: a base64 core shorter than this matches too much. */
const MIN_NEEDLE_LENGTH = 8;

/**
 * The part of base64 text that depends only on `bytes`, wherever they sit in a longer stream:
 * `offset` (0, 1 or 2) bytes come before them in their first group of three, so the characters
 * mixed with those bytes or with whatever follows are left out. The same core appears whether the
 * stream is padded or not, so padded and unpadded encodings are both found.
 */
function base64Core(bytes: Buffer, offset: 0 | 1 | 2): string {
  const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
  const skip = [0, 2, 3][offset]!;
  const stable = Math.floor(((offset + bytes.length) * 8) / 6);
  return encoded.slice(skip, stable);
}

const percentEveryByte = (bytes: Buffer): string =>
  Array.from(bytes, (b) => `%${b.toString(16).toUpperCase().padStart(2, '0')}`).join('');

/**
 * The needles one value is looked for as: itself; as it reads inside a JSON string; its base64
 * (standard and URL-safe, padded or not, at each of the three alignments in a longer stream); its
 * percent-encoding (as `encodeURIComponent` writes it, with lower-case hex, and every byte
 * encoded); its hex (lower and upper case). Each of the value's UTF-8 bytes.
 */
export function derivationsOf(credential: KnownCredential): Keyed<Stored>[] {
  const { value } = credential;
  if (value.length < MIN_VALUE_LENGTH) return [];
  const bytes = Buffer.from(value, 'utf8');
  const found = new Map<string, Derivation>();
  const add = (text: string, derivation: Derivation) => {
    if (text.length >= MIN_NEEDLE_LENGTH && !found.has(text)) found.set(text, derivation);
  };
  add(value, 'literal');
  add(JSON.stringify(value).slice(1, -1), 'json-escaped');
  for (const offset of [0, 1, 2] as const) {
    const core = base64Core(bytes, offset);
    add(core, 'base64');
    add(core.replace(/\+/g, '-').replace(/\//g, '_'), 'base64url');
  }
  const uri = encodeURIComponent(value);
  add(uri, 'percent-encoded');
  add(
    uri.replace(/%[0-9A-F]{2}/g, (code) => code.toLowerCase()),
    'percent-encoded',
  );
  add(percentEveryByte(bytes), 'percent-encoded');
  add(percentEveryByte(bytes).toLowerCase(), 'percent-encoded');
  const hex = bytes.toString('hex');
  add(hex, 'hex');
  add(hex.toUpperCase(), 'hex');
  return [...found].map(([text, derivation]) => ({ text, key: { credential, derivation } }));
}

/** A needle of an {@link Automaton}: its text, and what it stands for. */
export interface Keyed<T> {
  readonly text: string;
  readonly key: T;
}

/** Where a needle was found: `[start, end)`. */
export interface Occurrence<T> {
  readonly start: number;
  readonly end: number;
  readonly key: T;
}

/**
 * An Aho-Corasick automaton over UTF-16 code units: every needle found in one pass over a text,
 * in time linear in the text (plus the occurrences). Built as a full transition table over the
 * needles' own alphabet (every other character leads back to the root), so each character read
 * costs two array lookups. Memory: 4 bytes × nodes × alphabet (a node per needle character).
 */
export class Automaton<T> {
  /** The alphabet index of each code unit; 0 for one no needle holds. */
  private readonly alphabet = new Uint16Array(65536);
  private readonly width: number;
  private readonly next: Int32Array;
  /** The needles ending at each node, its failure chain's included. */
  private readonly outputs: (readonly Keyed<T>[])[];

  constructor(readonly needles: readonly Keyed<T>[]) {
    let width = 1;
    for (const needle of needles)
      for (let i = 0; i < needle.text.length; i++) {
        const c = needle.text.charCodeAt(i);
        if (this.alphabet[c] === 0) this.alphabet[c] = width++;
      }
    this.width = width;
    // The trie first (children by alphabet index), then the failure links breadth first.
    const children: Map<number, number>[] = [new Map()];
    const outputs: Keyed<T>[][] = [[]];
    for (const needle of needles) {
      let node = 0;
      for (let i = 0; i < needle.text.length; i++) {
        const a = this.alphabet[needle.text.charCodeAt(i)]!;
        let child = children[node]!.get(a);
        if (child === undefined) {
          child = children.length;
          children.push(new Map());
          outputs.push([]);
          children[node]!.set(a, child);
        }
        node = child;
      }
      outputs[node]!.push(needle);
    }
    const next = new Int32Array(children.length * width);
    const fail = new Int32Array(children.length);
    const queue: number[] = [0];
    for (let q = 0; q < queue.length; q++) {
      const node = queue[q]!;
      if (node !== 0) outputs[node]!.push(...outputs[fail[node]!]!);
      for (let a = 1; a < width; a++) {
        const child = children[node]!.get(a);
        const viaFail = node === 0 ? 0 : next[fail[node]! * width + a]!;
        if (child === undefined) next[node * width + a] = viaFail;
        else {
          next[node * width + a] = child;
          fail[child] = viaFail;
          queue.push(child);
        }
      }
    }
    this.next = next;
    this.outputs = outputs;
  }

  /** Each occurrence of each needle in `text` (overlapping ones included), told in order of where it ends. */
  scan(text: string, found: (start: number, end: number, key: T) => void): void {
    if (this.needles.length === 0) return;
    const { alphabet, width, next, outputs } = this;
    let node = 0;
    for (let i = 0; i < text.length; i++) {
      node = next[node * width + alphabet[text.charCodeAt(i)]!]!;
      if (node === 0) continue;
      const out = outputs[node]!;
      for (let k = 0; k < out.length; k++) {
        const needle = out[k]!;
        found(i + 1 - needle.text.length, i + 1, needle.key);
      }
    }
  }
}

/**
 * Every detector over one text, in one pass: the known formats' prefixes and the stored values'
 * needles are one automaton, then each format is read from its prefixes (formats.ts); the
 * policy's patterns run apart (RE2). One function, so the egress scan of arguments and the
 * ingress redaction of results find exactly the same things.
 */

import type { KnownCredential } from '../known.js';
import { FormatReader, findAwsSecrets, SHAPE_PREFIXES, type Shape } from './formats.js';
import { Automaton, type Derivation, derivationsOf, type Keyed, type Stored } from './literals.js';
import { type CompiledPattern, findPatterns } from './patterns.js';

/** One thing found in one text: where, its class, and the stored credential it is (if one). */
export interface Detection {
  readonly start: number;
  readonly end: number;
  readonly class: string;
  readonly source: 'format' | 'pattern' | 'stored';
  readonly credential?: KnownCredential;
  readonly derivation?: Derivation;
}

type Needle = { readonly shape: Shape } | { readonly stored: Stored };

/** The detectors for one set of stored credentials and policy patterns. */
export class Detectors {
  private readonly automaton: Automaton<Needle>;
  /**
   * How far from a boundary between siblings a split hit can reach: the longest needle, and at
   * least 4 KiB for the formats (walk.ts).
   */
  readonly window: number;

  constructor(
    credentials: readonly KnownCredential[],
    readonly patterns: readonly CompiledPattern[],
  ) {
    const needles: Keyed<Needle>[] = SHAPE_PREFIXES.map(({ text, key }) => ({ text, key: { shape: key } }));
    for (const credential of credentials)
      for (const { text, key } of derivationsOf(credential)) needles.push({ text, key: { stored: key } });
    this.automaton = new Automaton(needles);
    this.window = needles.reduce((most, n) => Math.max(most, n.text.length), 4096);
  }

  /** Everything in one text; `awsSecrets` also looks for 40-character AWS secret keys in it. */
  detect(text: string, awsSecrets: boolean): Detection[] {
    const found: Detection[] = [];
    const formats = new FormatReader(text);
    this.automaton.scan(text, (start, end, key) => {
      if ('shape' in key) formats.prefix(start, end, key.shape);
      else {
        const { credential, derivation } = key.stored;
        found.push({ start, end, class: credential.class, source: 'stored', credential, derivation });
      }
    });
    for (const hit of formats.hits) found.push({ ...hit, source: 'format' });
    if (awsSecrets) for (const hit of findAwsSecrets(text)) found.push({ ...hit, source: 'format' });
    if (this.patterns.length > 0)
      for (const hit of findPatterns(this.patterns, text)) found.push({ ...hit, source: 'pattern' });
    return found;
  }

  /** Only the stored values (and their derivations) in `text`: what a blob's base64 is searched for. */
  detectStored(text: string): Detection[] {
    return this.detect(text, false).filter((d) => d.source === 'stored');
  }
}

/** Whether an AWS access key id is among `found` (its secret key may then be beside it). */
export const hasAwsKeyId = (found: readonly Detection[]): boolean =>
  found.some((d) => d.class === 'aws' && d.source === 'format');

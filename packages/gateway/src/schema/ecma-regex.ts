/**
 * JSON Schema's `pattern` is an ECMA-262 regular expression, compiled the way ajv does by default
 * (`new RegExp(p, "u")`). RE2 runs in linear time but means other things by `\s`, `.`, `$` and
 * `\p{…}`. This module parses the ECMA-262 `u`-mode grammar itself and writes RE2 syntax that
 * leaves RE2 nothing to interpret: every character and class becomes explicit code-point ranges,
 * `^`/`$` become `\A`/`\z`, groups become non-capturing. Whatever it cannot translate with the
 * same meaning (backreferences, lookaround, a construct it does not know) is refused, never
 * passed through: the parser accepts only what it understands.
 */

import { RingfenceError } from '../errors.js';
import {
  type CharSet,
  complement,
  DIGIT,
  DOT,
  propertySet,
  re2Char,
  re2Class,
  SPACE,
  union,
  WORD,
} from './charset.js';

/**
 * Why a pattern is refused. `unsupported`: valid ECMA-262 that cannot be checked in linear time
 * with the same meaning. `syntax`: not a valid ECMA-262 `u`-mode pattern (JavaScript would throw).
 */
export class PatternProblem extends RingfenceError<'PATTERN_UNSUPPORTED' | 'PATTERN_SYNTAX'> {
  constructor(
    readonly kind: 'unsupported' | 'syntax',
    readonly detail: string,
  ) {
    super(kind === 'syntax' ? 'PATTERN_SYNTAX' : 'PATTERN_UNSUPPORTED', detail);
  }
}

/** RE2 refuses larger counts; ECMA-262 has no limit, so larger ones are refused, not rewritten. */
export const MAX_REPEAT = 1_000;
/** Group nesting kept well inside RE2's own nesting limit and this parser's call stack. */
export const MAX_GROUP_DEPTH = 64;

const SYNTAX_CHARACTERS = new Set('^$\\.*+?()[]{}|');
const CONTROL_ESCAPES: Record<string, number> = { f: 0x0c, n: 0x0a, r: 0x0d, t: 0x09, v: 0x0b };
const GROUP_NAME = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const PROPERTY_EXPRESSION = /^[A-Za-z_]+(?:=[A-Za-z0-9_]+)?$|^[A-Za-z0-9_]+$/;
const HEX = /^[0-9A-Fa-f]$/;
const CLASS_ESCAPES: Record<string, CharSet> = {
  d: DIGIT,
  s: SPACE,
  w: WORD,
  D: complement(DIGIT),
  S: complement(SPACE),
  W: complement(WORD),
};

const unsupported = (what: string) => new PatternProblem('unsupported', what);
const syntax = (what: string) => new PatternProblem('syntax', what);

/** Sets of character classes by their text (between `[` and `]`), shared by every pattern in this thread. */
const classCache = new Map<string, CharSet>();
const CLASS_CACHE = 512;

/** A class atom: one code point (may start or end a range) or a class escape (may not). */
type ClassAtom = { single: number } | { set: CharSet };

/** Translates an ECMA-262 `u`-mode pattern to RE2 syntax with the same matches, or throws PatternProblem. */
export function translateEcmaPattern(pattern: string): string {
  return new Translator(pattern).translate();
}

class Translator {
  /** Code points: in `u` mode a surrogate pair in the source is one pattern character. */
  private readonly chars: string[];
  private pos = 0;
  private readonly names = new Set<string>();

  constructor(pattern: string) {
    this.chars = Array.from(pattern);
  }

  translate(): string {
    const body = this.disjunction(0);
    if (this.pos < this.chars.length) throw syntax('an unmatched ")"');
    return `(?:${body})`;
  }

  private peek(offset = 0): string | undefined {
    return this.chars[this.pos + offset];
  }

  private next(): string {
    const c = this.chars[this.pos];
    if (c === undefined) throw syntax('the pattern ends too early');
    this.pos += 1;
    return c;
  }

  /** `text` is ASCII here, so its UTF-16 units are its code points. */
  private eat(text: string): boolean {
    for (let i = 0; i < text.length; i++) if (this.chars[this.pos + i] !== text[i]) return false;
    this.pos += text.length;
    return true;
  }

  private disjunction(depth: number): string {
    const alternatives = [this.alternative(depth)];
    while (this.eat('|')) alternatives.push(this.alternative(depth));
    return alternatives.join('|');
  }

  private alternative(depth: number): string {
    let out = '';
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') return out;
      const term = this.term(depth);
      out += term.quantifiable ? this.quantified(term.re2) : term.re2;
    }
  }

  /** One term; assertions are not quantifiable in `u` mode (a quantifier after one is a syntax error). */
  private term(depth: number): { re2: string; quantifiable: boolean } {
    const c = this.next();
    switch (c) {
      case '^':
        return { re2: '\\A', quantifiable: false };
      case '$':
        return { re2: '\\z', quantifiable: false };
      case '.':
        return { re2: re2Class(DOT), quantifiable: true };
      case '[':
        return { re2: re2Class(this.characterClass()), quantifiable: true };
      case '(':
        return { re2: this.group(depth), quantifiable: true };
      case '\\': {
        if (this.eat('b')) return { re2: '\\b', quantifiable: false };
        if (this.eat('B')) return { re2: '\\B', quantifiable: false };
        return { re2: this.atomEscape(), quantifiable: true };
      }
      case '*':
      case '+':
      case '?':
      case '{':
        throw syntax(`nothing to repeat before "${c}"`);
      case ')':
      case ']':
      case '}':
        throw syntax(`a lone "${c}"`);
      default:
        return { re2: re2Char(cp(c)), quantifiable: true };
    }
  }

  private quantified(atom: string): string {
    let min: number;
    let max: number | undefined;
    if (this.eat('*')) [min, max] = [0, undefined];
    else if (this.eat('+')) [min, max] = [1, undefined];
    else if (this.eat('?')) [min, max] = [0, 1];
    else if (this.peek() === '{') {
      this.next();
      min = this.decimal();
      max = min;
      if (this.eat(',')) max = this.peek() === '}' ? undefined : this.decimal();
      if (!this.eat('}')) throw syntax('an incomplete quantifier "{…}"');
      if (max !== undefined && max < min) throw syntax(`a quantifier {${min},${max}} out of order`);
      if (min > MAX_REPEAT || (max ?? 0) > MAX_REPEAT) {
        throw unsupported(`a repetition count over ${MAX_REPEAT}, more than RE2 accepts`);
      }
    } else return atom;
    // Laziness changes which match is found, never whether one exists: `test` only asks the latter.
    this.eat('?');
    const body = `(?:${atom})`;
    if (max === undefined) return min === 0 ? `${body}*` : min === 1 ? `${body}+` : `${body}{${min},}`;
    return min === 0 && max === 1 ? `${body}?` : `${body}{${min},${max}}`;
  }

  private decimal(): number {
    let digits = '';
    while (/^[0-9]$/.test(this.peek() ?? '')) digits += this.next();
    if (digits === '') throw syntax('an incomplete quantifier "{…}"');
    // Past 2^53 the value is approximate, but anything that large is refused anyway.
    return Number(digits);
  }

  private group(depth: number): string {
    if (depth + 1 > MAX_GROUP_DEPTH) throw unsupported(`groups nested deeper than ${MAX_GROUP_DEPTH}`);
    if (this.eat('?')) {
      if (this.eat('=')) throw unsupported('a lookahead "(?=…)"');
      if (this.eat('!')) throw unsupported('a negative lookahead "(?!…)"');
      if (this.eat('<=')) throw unsupported('a lookbehind "(?<=…)"');
      if (this.eat('<!')) throw unsupported('a negative lookbehind "(?<!…)"');
      if (this.eat('<')) this.groupName();
      else if (this.modifiers()) throw unsupported('a modifier group "(?flags:…)"');
      else if (!this.eat(':')) throw syntax(`an unknown group "(?${this.peek() ?? ''}"`);
    }
    const body = this.disjunction(depth + 1);
    if (!this.eat(')')) throw syntax('an unterminated group "("');
    return `(?:${body})`;
  }

  /**
   * `(?i:…)`, `(?-s:…)`: ECMAScript 2025 modifiers, a syntax error for Node 20 and a change of
   * meaning (case folding, dotAll) where supported. Refused either way, as one construct.
   */
  private modifiers(): boolean {
    let i = 0;
    while (/^[a-z-]$/.test(this.peek(i) ?? '')) i += 1;
    return i > 0 && this.peek(i) === ':';
  }

  /** Group names only matter for backreferences, which are refused; they must still be valid. */
  private groupName(): void {
    let name = '';
    while (this.peek() !== undefined && this.peek() !== '>') name += this.next();
    if (!this.eat('>')) throw syntax('an unterminated group name "(?<…"');
    if (!GROUP_NAME.test(name)) {
      // Plain ASCII that is no identifier is invalid; `\u` escapes and non-ASCII names may be valid.
      if (/^[ -[\]-~]*$/.test(name)) throw syntax(`an invalid group name ${JSON.stringify(name)}`);
      throw unsupported(`a group name ${JSON.stringify(name)} outside ASCII letters, digits, "_" and "$"`);
    }
    if (this.names.has(name)) throw syntax(`the group name "${name}" used twice`);
    this.names.add(name);
  }

  /** After `\` outside a class: a class escape, a character escape, or a refused backreference. */
  private atomEscape(): string {
    const c = this.peek();
    if (c !== undefined && /^[1-9]$/.test(c)) throw unsupported(`a backreference "\\${c}"`);
    if (c === 'k') throw unsupported('a named backreference "\\k<…>"');
    const set = this.classEscape();
    if (set !== undefined) return re2Class(set);
    return re2Char(this.characterEscape(false));
  }

  /** `\d \D \s \S \w \W \p{…} \P{…}`, or undefined (nothing consumed) for any other escape. */
  private classEscape(): CharSet | undefined {
    const c = this.peek() ?? '';
    const known = Object.hasOwn(CLASS_ESCAPES, c) ? CLASS_ESCAPES[c] : undefined;
    if (known !== undefined) {
      this.next();
      return known;
    }
    if (c === 'p' || c === 'P') {
      this.next();
      if (!this.eat('{')) throw syntax(`"\\${c}" without "{…}"`);
      let expression = '';
      while (this.peek() !== undefined && this.peek() !== '}') expression += this.next();
      if (!this.eat('}')) throw syntax(`an unterminated "\\${c}{…"`);
      const set = PROPERTY_EXPRESSION.test(expression) ? propertySet(expression) : undefined;
      if (set === undefined) throw syntax(`an unknown Unicode property "\\${c}{${expression}}"`);
      return c === 'p' ? set : complement(set);
    }
    return undefined;
  }

  /** A CharacterEscape of the `u`-mode grammar; consumes what follows `\`. */
  private characterEscape(inClass: boolean): number {
    const c = this.next();
    const control = CONTROL_ESCAPES[c];
    if (control !== undefined) return control;
    if (c === 'c') {
      const letter = this.peek() ?? '';
      if (!/^[A-Za-z]$/.test(letter)) throw syntax('"\\c" not followed by an ASCII letter');
      this.next();
      return cp(letter) % 32;
    }
    if (c === '0') {
      if (/^[0-9]$/.test(this.peek() ?? '')) throw syntax('an octal escape "\\0…"');
      return 0;
    }
    if (c === 'x') return this.hexDigits(2, '"\\x" not followed by two hex digits');
    if (c === 'u') return this.unicodeEscape();
    if (SYNTAX_CHARACTERS.has(c) || c === '/' || (inClass && c === '-')) return cp(c);
    throw syntax(`an invalid escape "\\${c}"`);
  }

  private hexDigits(count: number, problem: string): number {
    let digits = '';
    for (let i = 0; i < count; i++) {
      const d = this.peek();
      if (d === undefined || !HEX.test(d)) throw syntax(problem);
      digits += this.next();
    }
    return Number.parseInt(digits, 16);
  }

  /** `\uXXXX`, `\u{X…}`, and a `\uLEAD\uTRAIL` pair, which is one code point in `u` mode. */
  private unicodeEscape(): number {
    const problem = '"\\u" not followed by four hex digits or "{…}"';
    if (this.eat('{')) {
      let digits = '';
      while (this.peek() !== undefined && HEX.test(this.peek() as string)) digits += this.next();
      if (digits === '' || !this.eat('}')) throw syntax(problem);
      const value = Number.parseInt(digits, 16);
      if (!(value <= 0x10ffff)) throw syntax(`"\\u{${digits}}" is beyond U+10FFFF`);
      return value;
    }
    const unit = this.hexDigits(4, problem);
    if (unit >= 0xd800 && unit <= 0xdbff && this.peek() === '\\' && this.peek(1) === 'u') {
      const tail = this.chars.slice(this.pos + 2, this.pos + 6);
      if (tail.length === 4 && tail.every((d) => HEX.test(d))) {
        const trail = Number.parseInt(tail.join(''), 16);
        if (trail >= 0xdc00 && trail <= 0xdfff) {
          this.pos += 6;
          return 0x10000 + ((unit - 0xd800) << 10) + (trail - 0xdc00);
        }
      }
    }
    return unit;
  }

  /**
   * After `[`: the set a `u`-mode CharacterClass matches (negation over all code points). The
   * same class text always means the same set, so sets are remembered by their text: schemas
   * repeat their classes, and a shared set is also written for RE2 only once (re2Class).
   */
  private characterClass(): CharSet {
    const start = this.pos;
    let end = start;
    while (end < this.chars.length && this.chars[end] !== ']') end += this.chars[end] === '\\' ? 2 : 1;
    const source = end < this.chars.length ? this.chars.slice(start, end).join('') : undefined;
    const known = source === undefined ? undefined : classCache.get(source);
    if (known !== undefined) {
      this.pos = end + 1;
      return known;
    }
    const set = this.classContents();
    if (source !== undefined && this.pos === end + 1) {
      if (classCache.size >= CLASS_CACHE) classCache.delete(classCache.keys().next().value as string);
      classCache.set(source, set);
    }
    return set;
  }

  private classContents(): CharSet {
    const negated = this.eat('^');
    const parts: CharSet[] = [];
    for (;;) {
      if (this.peek() === undefined) throw syntax('an unterminated character class "["');
      if (this.eat(']')) break;
      const from = this.classAtom();
      if (this.peek() === '-' && this.peek(1) !== undefined && this.peek(1) !== ']') {
        this.next();
        const to = this.classAtom();
        if (!('single' in from) || !('single' in to)) {
          throw syntax('a class escape such as "\\d" used as a range bound');
        }
        if (from.single > to.single) throw syntax('a character range out of order');
        parts.push([from.single, to.single]);
      } else {
        parts.push('single' in from ? [from.single, from.single] : from.set);
      }
    }
    // A lone escape (`[\\s]`, `[\\p{L}]`) keeps the shared set, whose RE2 text is already written.
    const set = parts.length === 1 ? (parts[0] as CharSet) : union(...parts);
    return negated ? complement(set) : set;
  }

  private classAtom(): ClassAtom {
    const c = this.next();
    if (c !== '\\') return { single: cp(c) };
    if (this.eat('b')) return { single: 0x08 };
    const set = this.classEscape();
    if (set !== undefined) return { set };
    return { single: this.characterEscape(true) };
  }
}

function cp(c: string): number {
  return c.codePointAt(0) as number;
}

import { RingfenceError } from '../errors.js';

/** Codes raised by {@link parseStrictJson}. */
export type JsonErrorCode = 'JSON_SYNTAX' | 'JSON_DUPLICATE_KEY' | 'JSON_FORBIDDEN_KEY' | 'JSON_TOO_DEEP';

/** A file that is not the strict JSON this package accepts. */
export class JsonError extends RingfenceError<JsonErrorCode> {}

/** Options for {@link parseStrictJson}. */
export interface StrictJsonOptions {
  /** Nesting limit, so a hostile file cannot exhaust the stack. Default 256. */
  maxDepth?: number;
  /** Names the file in error messages. */
  source?: string;
}

/**
 * Parses RFC 8259 JSON, refusing what `JSON.parse` silently accepts.
 *
 * - Duplicate member names are refused: with `JSON.parse` the last one wins, so a signer and a
 *   reader could see different values in the same bytes.
 * - The member name `__proto__` is refused: it turns into a prototype when the result is spread
 *   or merged elsewhere.
 * - Lone surrogates in strings (including `\uD800` escapes) are refused: they have no canonical
 *   form, so a document containing them could never be re-hashed consistently.
 * - A byte-order mark, trailing commas, comments, and nesting beyond `maxDepth` are refused.
 *
 * Objects come back with `Object.prototype`, as from `JSON.parse`.
 *
 * @throws {JsonError} with the line and column of the first problem.
 */
export function parseStrictJson(text: string, options: StrictJsonOptions = {}): unknown {
  return new Parser(text, options.maxDepth ?? 256, options.source).parseDocument();
}

const LONE_SURROGATE = /\p{Cs}/u;
const NUMBER = /-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?/y;
const ESCAPED_STRING = /^"(?:[^"\\]|\\["\\/bfnrt]|\\u[0-9a-fA-F]{4})*"$/s;

class Parser {
  private pos = 0;

  constructor(
    private readonly text: string,
    private readonly maxDepth: number,
    private readonly source: string | undefined,
  ) {}

  parseDocument(): unknown {
    this.skipWhitespace();
    const value = this.parseValue(0);
    this.skipWhitespace();
    if (this.pos < this.text.length) this.fail('JSON_SYNTAX', 'unexpected text after the JSON value');
    return value;
  }

  private fail(code: JsonErrorCode, what: string, at = this.pos): never {
    let line = 1;
    let column = 1;
    for (let i = 0; i < at && i < this.text.length; i++) {
      if (this.text.charCodeAt(i) === 10) {
        line++;
        column = 1;
      } else {
        column++;
      }
    }
    const where = `${this.source ? `${this.source}:` : 'line '}${line}:${column}`;
    throw new JsonError(
      code,
      `Invalid JSON at ${where}: ${what}. Fix the file (or re-export it) and try again.`,
    );
  }

  private skipWhitespace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) this.pos++;
      else break;
    }
  }

  private parseValue(depth: number): unknown {
    const c = this.text.charCodeAt(this.pos);
    if (c === 0x7b) return this.parseObject(depth + 1);
    if (c === 0x5b) return this.parseArray(depth + 1);
    if (c === 0x22) return this.parseString();
    if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
    if (this.text.startsWith('true', this.pos)) {
      this.pos += 4;
      return true;
    }
    if (this.text.startsWith('false', this.pos)) {
      this.pos += 5;
      return false;
    }
    if (this.text.startsWith('null', this.pos)) {
      this.pos += 4;
      return null;
    }
    if (this.pos >= this.text.length) this.fail('JSON_SYNTAX', 'unexpected end of input');
    this.fail('JSON_SYNTAX', `unexpected character ${JSON.stringify(this.text[this.pos])}`);
  }

  private parseObject(depth: number): Record<string, unknown> {
    if (depth > this.maxDepth) this.fail('JSON_TOO_DEEP', `nesting deeper than ${this.maxDepth}`);
    this.pos++;
    const result: Record<string, unknown> = {};
    const seen = new Set<string>();
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return result;
    }
    for (;;) {
      this.skipWhitespace();
      const keyAt = this.pos;
      if (this.text.charCodeAt(this.pos) !== 0x22)
        this.fail('JSON_SYNTAX', 'expected a member name in quotes');
      const key = this.parseString();
      if (key === '__proto__')
        this.fail('JSON_FORBIDDEN_KEY', 'the member name "__proto__" is not allowed', keyAt);
      if (seen.has(key))
        this.fail('JSON_DUPLICATE_KEY', `duplicate member name ${JSON.stringify(key)}`, keyAt);
      seen.add(key);
      this.skipWhitespace();
      if (this.text.charCodeAt(this.pos) !== 0x3a) this.fail('JSON_SYNTAX', 'expected ":"');
      this.pos++;
      this.skipWhitespace();
      result[key] = this.parseValue(depth);
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x7d) return result;
      if (c !== 0x2c) this.fail('JSON_SYNTAX', 'expected "," or "}"', this.pos - 1);
    }
  }

  private parseArray(depth: number): unknown[] {
    if (depth > this.maxDepth) this.fail('JSON_TOO_DEEP', `nesting deeper than ${this.maxDepth}`);
    this.pos++;
    const result: unknown[] = [];
    this.skipWhitespace();
    if (this.text.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return result;
    }
    for (;;) {
      this.skipWhitespace();
      result.push(this.parseValue(depth));
      this.skipWhitespace();
      const c = this.text.charCodeAt(this.pos);
      this.pos++;
      if (c === 0x5d) return result;
      if (c !== 0x2c) this.fail('JSON_SYNTAX', 'expected "," or "]"', this.pos - 1);
    }
  }

  private parseString(): string {
    const start = this.pos;
    const t = this.text;
    let i = start + 1;
    let hasEscape = false;
    for (;;) {
      if (i >= t.length) this.fail('JSON_SYNTAX', 'unterminated string', start);
      const c = t.charCodeAt(i);
      if (c === 0x22) break;
      if (c < 0x20) this.fail('JSON_SYNTAX', 'control character in a string', i);
      if (c === 0x5c) {
        hasEscape = true;
        i += 2;
      } else {
        i++;
      }
    }
    const raw = t.slice(start, i + 1);
    this.pos = i + 1;
    let value: string;
    if (!hasEscape) {
      value = raw.slice(1, -1);
    } else {
      if (!ESCAPED_STRING.test(raw)) {
        this.fail('JSON_SYNTAX', 'invalid escape in a string', start);
      }
      value = JSON.parse(raw) as string;
    }
    if (LONE_SURROGATE.test(value)) this.fail('JSON_SYNTAX', 'a string contains a lone surrogate', start);
    return value;
  }

  private parseNumber(): number {
    NUMBER.lastIndex = this.pos;
    const found = NUMBER.exec(this.text);
    if (!found) this.fail('JSON_SYNTAX', 'invalid number');
    const value = Number(found[0]);
    if (!Number.isFinite(value)) this.fail('JSON_SYNTAX', `the number ${found[0]} is out of range`);
    this.pos += found[0].length;
    return value;
  }
}

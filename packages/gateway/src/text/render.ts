/**
 * The one rendering of text a server (or anyone but the person reading) chose, before a person
 * reads it: at a terminal, in a log line, in an approval question. See docs/untrusted-text.md.
 *
 * A character that a person cannot see, that looks like another, or that a terminal obeys is
 * shown as `\u{HEX}` (upper-case hex, no padding): every control character (ESC, CR, the C1
 * controls, and newline and tab where the text must stay on one line), every format character
 * (bidirectional controls, zero-width characters, Unicode TAG characters, the BOM, soft hyphen),
 * every default-ignorable code point (variation selectors, Hangul fillers, …), line and paragraph
 * separators, every space other than U+0020, private-use, unassigned and lone surrogate code
 * points, and U+2800 (a braille cell with no dots, drawn blank).
 *
 * Rendering is one-to-one: two different strings never render the same. A backslash is doubled
 * exactly when, left alone, it could be read as the start of an escape: when the run of
 * backslashes it belongs to is followed by `u{` or by a character shown escaped. So `\u{41}` typed
 * by a server renders as `\\u{41}`, and a backslash before an escape as `\\\u{…}`.
 */

/** Code points that are never shown raw (besides the controls, which the fast path handles). */
const HIDDEN =
  /^[\p{Cc}\p{Cf}\p{Cs}\p{Co}\p{Cn}\p{Zl}\p{Zp}\p{Zs}\p{Default_Ignorable_Code_Point}\p{Variation_Selector}\u2800]$/u;

export type RenderMode =
  /** Multi-line text (a description, a server's stderr): newline and tab are kept. */
  | 'block'
  /** A field that must stay on one line (a log line, a reason): newline and tab are escaped too. */
  | 'line'
  /** A name (tool, field, server): as `line`, and a space is escaped too, so a name cannot look like two. */
  | 'name';

export interface RenderOptions {
  readonly mode?: RenderMode;
  /**
   * The text is JSON (from JSON.stringify or canonicalize) or already rendered: each backslash in
   * it already belongs to an escape, so backslashes are left as they are.
   */
  readonly keepBackslashes?: boolean;
}

export interface Rendered {
  readonly text: string;
  /** How many characters are shown as `\u{…}`. */
  readonly escaped: number;
}

/** Whether the code point `cp` is shown as `\u{HEX}` in `mode`. */
export function isShownEscaped(cp: number, mode: RenderMode = 'block'): boolean {
  if (cp === 0x20) return mode === 'name';
  if (cp > 0x20 && cp < 0x7f) return false;
  if (cp === 0x0a || cp === 0x09) return mode !== 'block';
  if (cp < 0x20 || cp === 0x7f) return true;
  return HIDDEN.test(String.fromCodePoint(cp));
}

/** The escape a person sees for one code point. */
export const escapeOf = (cp: number): string => `\\u{${cp.toString(16).toUpperCase()}}`;

/** The code point at `i` (a lone surrogate counts as one), or -1 past the end. */
function codePointAt(text: string, i: number): number {
  return i < text.length ? text.codePointAt(i)! : -1;
}

export function renderUntrusted(text: string, options: RenderOptions = {}): Rendered {
  const mode = options.mode ?? 'block';
  const doubleBackslashes = options.keepBackslashes !== true;
  let out = '';
  let escaped = 0;
  // Unchanged runs are copied as slices: most text has nothing to escape.
  let copyFrom = 0;
  let i = 0;
  while (i < text.length) {
    const cp = text.codePointAt(i)!;
    if (cp === 0x5c && doubleBackslashes) {
      let end = i;
      while (text.charCodeAt(end) === 0x5c) end += 1;
      const next = codePointAt(text, end);
      if (text.startsWith('u{', end) || (next >= 0 && isShownEscaped(next, mode))) {
        out += text.slice(copyFrom, i) + '\\'.repeat(2 * (end - i));
        copyFrom = end;
      }
      i = end;
      continue;
    }
    const width = cp > 0xffff ? 2 : 1;
    if (isShownEscaped(cp, mode)) {
      out += text.slice(copyFrom, i) + escapeOf(cp);
      escaped += 1;
      copyFrom = i + width;
    }
    i += width;
  }
  return { text: copyFrom === 0 ? text : out + text.slice(copyFrom), escaped };
}

/** Shorthand: the rendered text alone. */
export const rendered = (text: string, mode: RenderMode = 'block'): string =>
  renderUntrusted(text, { mode }).text;

/**
 * The last guard on a line ringfence composed, whose server fields were rendered where it was
 * built: it changes nothing already rendered (backslashes there already belong to escapes) and
 * escapes any control, newline or invisible character a builder missed, so the line stays one line.
 */
export const guardedLine = (line: string): string =>
  renderUntrusted(line, { mode: 'line', keepBackslashes: true }).text;

/** JSON text (JSON.stringify, canonicalize) rendered for a person: its backslashes are JSON's. */
export const renderJsonText = (json: string): Rendered => renderUntrusted(json, { keepBackslashes: true });

// What a block shows raw in any case: printable ASCII, tab and newline.
const SHOWN_RAW_IN_BLOCK = /^[\t\n\x20-\x7e]*$/;

/**
 * How many characters of a JSON value's strings (object keys included) a person would see
 * escaped in a block of text: what `ask` counts and `refuse_invisible` refuses. Newline and tab
 * are not counted; everything else `isShownEscaped` names is.
 */
export function escapedCharacterCount(value: unknown): number {
  let count = 0;
  const countIn = (text: string) => {
    // Most argument text is only what a block shows raw (one regex pass, no string per
    // character): a large argument is scanned for every call.
    if (SHOWN_RAW_IN_BLOCK.test(text)) return;
    for (let i = 0; i < text.length; ) {
      const cp = text.codePointAt(i)!;
      if (isShownEscaped(cp, 'block')) count += 1;
      // A pair is one code point; a lone surrogate is one character, as the string iterator has it.
      i += cp > 0xffff ? 2 : 1;
    }
  };
  // Iterative: arguments may nest deeper than the call stack.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === 'string') countIn(item);
    else if (Array.isArray(item)) for (const child of item) stack.push(child);
    else if (typeof item === 'object' && item !== null) {
      for (const [key, child] of Object.entries(item)) {
        countIn(key);
        stack.push(child);
      }
    }
  }
  return count;
}

/**
 * The text with every character shown escaped left out: what a person would believe they see.
 * Two texts equal here but different differ only in characters shown escaped.
 */
export function visiblePart(text: string): string {
  let out = '';
  for (const ch of text) if (!isShownEscaped(ch.codePointAt(0)!, 'block')) out += ch;
  return out;
}

/** Cut to at most `max` code points (never half a pair), saying how long the whole was. */
export function clip(text: string, max: number): string {
  const points = Array.from(text);
  return points.length > max ? `${points.slice(0, max).join('')}… (${points.length} characters)` : text;
}

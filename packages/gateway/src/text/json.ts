import { isShownEscaped } from './render.js';

const hex4 = (unit: number) => `\\u${unit.toString(16).padStart(4, '0')}`;

/**
 * JSON text whose strings may hold characters a terminal hides or obeys, with each of those
 * characters written as a JSON `\uXXXX` escape instead (a pair for one above U+FFFF). The result
 * parses to exactly the same value, and two different values never print the same. Only valid
 * JSON text should be given: outside strings, JSON has nothing but ASCII (and the newlines,
 * tabs and spaces of indentation, which are kept).
 */
export function terminalSafeJson(json: string): string {
  return json.replace(/[^\x20-\x7e\n]/gu, (ch) => {
    if (!isShownEscaped(ch.codePointAt(0)!, 'block')) return ch;
    let out = '';
    for (let i = 0; i < ch.length; i++) out += hex4(ch.charCodeAt(i));
    return out;
  });
}

/** JSON.stringify for output a person may read at a terminal (`--json`): see terminalSafeJson. */
export function stringifyForTerminal(value: unknown, space?: number): string {
  return terminalSafeJson(JSON.stringify(value, null, space) ?? 'null');
}

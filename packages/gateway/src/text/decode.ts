import { RingfenceError } from '../errors.js';

/**
 * The reading rule of docs/untrusted-text.md as code, for tests and for anyone checking a line by
 * hand: what text a rendered line stands for. A run of backslashes followed by `u{` stands for
 * half as many backslashes, and an odd one out starts an escape `\u{HEX}`; every other backslash
 * is itself. `decodeRendered(renderUntrusted(x, …).text)` is `x` in every mode, which is why no two
 * texts render the same. The gateway itself never decodes: it renders.
 */
export class NotRenderedText extends RingfenceError<'NOT_RENDERED_TEXT'> {
  constructor(message: string) {
    super('NOT_RENDERED_TEXT', message);
  }
}

export function decodeRendered(shown: string): string {
  let result = '';
  let i = 0;
  while (i < shown.length) {
    if (shown[i] !== '\\') {
      result += shown[i];
      i += 1;
      continue;
    }
    let end = i;
    while (shown[end] === '\\') end += 1;
    if (!shown.startsWith('u{', end)) {
      result += shown.slice(i, end);
      i = end;
      continue;
    }
    const run = end - i;
    result += '\\'.repeat(Math.floor(run / 2));
    if (run % 2 === 0) {
      i = end;
      continue;
    }
    const close = shown.indexOf('}', end);
    const hex = close < 0 ? '' : shown.slice(end + 2, close);
    if (!/^(?:[1-9A-F][0-9A-F]{0,5}|0)$/.test(hex) || Number.parseInt(hex, 16) > 0x10ffff)
      throw new NotRenderedText(`not an escape at ${i}: ${shown.slice(i, i + 16)}`);
    result += String.fromCodePoint(Number.parseInt(hex, 16));
    i = close + 1;
  }
  return result;
}

export { decodeRendered, NotRenderedText } from './decode.js';
export { stringifyForTerminal, terminalSafeJson } from './json.js';
export { printable } from './printable.js';
export {
  clip,
  escapedCharacterCount,
  escapeOf,
  guardedLine,
  isShownEscaped,
  type Rendered,
  type RenderMode,
  type RenderOptions,
  rendered,
  renderJsonText,
  renderUntrusted,
  visiblePart,
} from './render.js';

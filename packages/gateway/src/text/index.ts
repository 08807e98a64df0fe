export { stringifyForTerminal, terminalSafeJson } from './json.js';
export { printable } from './printable.js';
export {
  clip,
  escapedCharacterCount,
  escapeOf,
  isShownEscaped,
  type RenderMode,
  type RenderOptions,
  type Rendered,
  renderJsonText,
  rendered,
  renderUntrusted,
  visiblePart,
} from './render.js';

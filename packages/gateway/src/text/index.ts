export { decodeRendered, NotRenderedText } from './decode.js';
export { stringifyForTerminal, terminalSafeJson } from './json.js';
export { printable } from './printable.js';
export {
  REDACTED,
  redactArgs,
  redactImage,
  redactJson,
  redactJsonLine,
  redactText,
  redactUrl,
  redactValue,
} from './redact.js';
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
export { isCredentialName, looksLikeSecretWord } from './secret-shapes.js';

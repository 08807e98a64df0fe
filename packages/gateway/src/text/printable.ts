import { renderUntrusted } from './render.js';

/**
 * Server-controlled text made safe to show: `renderUntrusted` in block mode, the text alone.
 * Kept under this name for its callers; new code calls `renderUntrusted` (or `rendered`).
 */
export function printable(text: string): string {
  return renderUntrusted(text).text;
}

import { AUDIT_STRING_MAX } from './types.js';

/** A string cut to what an entry holds (AUDIT_STRING_MAX), marked with `…` when it was cut. */
export function clip(text: string): string {
  if (text.length <= AUDIT_STRING_MAX) return text;
  let head = text.slice(0, AUDIT_STRING_MAX - 1);
  // Never leave half of a surrogate pair behind: it would make the line non-canonical elsewhere.
  if (/[\ud800-\udbff]$/.test(head)) head = head.slice(0, -1);
  return `${head}…`;
}

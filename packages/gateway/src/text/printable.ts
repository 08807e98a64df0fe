/**
 * Text a server controls (descriptions, names, its stderr) is shown to a person at a terminal.
 * Control characters (ANSI/OSC escapes that hide text, move the cursor or set the clipboard) and
 * bidirectional overrides (that reorder what is read) are shown as \u escapes instead.
 */
export function printable(text: string): string {
  return text.replace(
    /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

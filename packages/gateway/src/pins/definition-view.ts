/**
 * One definition shown whole, for the review that counts: `pins show SERVER` (first sight above
 * all: what was pinned then is what pinning protects from then on) and approval. Nothing is cut:
 * the description line by line, every other member (schemas, annotations, title, icons, a
 * prompt's arguments, a resource's URI and MIME type, and any member a future spec or the server
 * adds) as canonical JSON, and the count of characters shown escaped. A summary of one line says
 * how much it leaves out and where to see the rest.
 */
import { canonicalize } from '@ringfence/policy';
import { clip, escapedCharacterCount, rendered, renderJsonText } from '../text/render.js';
import { type DefinitionKind, definitionLabel, KIND_ID, textMember } from './kinds.js';

type Definition = Readonly<Record<string, unknown>>;

/**
 * Every line of a description starts with this gutter, so no line the server wrote can pass for
 * a line of the review (a fake `inputSchema:` heading, a fake end of the definition).
 */
export const DESCRIPTION_GUTTER = '| ';

/**
 * `value` as indented JSON in RFC 8785 order (members sorted by UTF-16 code units, numbers and
 * strings as canonicalize writes them): the order and spelling the fingerprint is taken over,
 * whatever order the server sent. JSON.stringify would put integer-like keys first instead.
 */
export function canonicalPretty(value: unknown, indent = ''): string {
  if (Array.isArray(value)) {
    if (value.length === 0) return '[]';
    const inner = `${indent}  `;
    return `[\n${value.map((item) => `${inner}${canonicalPretty(item, inner)}`).join(',\n')}\n${indent}]`;
  }
  if (typeof value === 'object' && value !== null) {
    const keys = Object.keys(value).sort();
    if (keys.length === 0) return '{}';
    const inner = `${indent}  `;
    const members = keys.map(
      (key) =>
        `${inner}${canonicalize(key)}: ${canonicalPretty((value as Record<string, unknown>)[key], inner)}`,
    );
    return `{\n${members.join(',\n')}\n${indent}}`;
  }
  return canonicalize(value);
}

const indented = (text: string, prefix: string) =>
  text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');

/**
 * The body of one definition, each line starting with `prefix`: its description (every line,
 * rendered as a block, behind the gutter), then every other member but the one that names it,
 * then how many characters are shown escaped in all of it.
 */
export function wholeDefinitionLines(kind: DefinitionKind, definition: Definition, prefix = '  '): string[] {
  const lines: string[] = [];
  // A description, or a server's instructions: the prose a model reads, shown line by line.
  const member = textMember(kind);
  const description = definition[member];
  if (typeof description === 'string') {
    const lineCount = description.split('\n').length;
    lines.push(
      `${prefix}${member} (${lineCount} line(s), ${Array.from(description).length} characters, all shown):`,
    );
    lines.push(indented(rendered(description, 'block'), `${prefix}  ${DESCRIPTION_GUTTER}`));
  } else {
    lines.push(`${prefix}${member}: ${description === undefined ? '(none)' : '(not a string; below)'}`);
  }
  const id = kind === 'instructions' ? undefined : KIND_ID[kind];
  const members = Object.keys(definition)
    .filter((key) => key !== id && !(key === member && typeof description === 'string'))
    .sort();
  for (const key of members) {
    // Quoted as JSON, as the keys inside are: a member's name is the server's text too.
    const field = renderJsonText(canonicalize(key)).text;
    lines.push(`${prefix}${field}: ${renderJsonText(canonicalPretty(definition[key], prefix)).text}`);
  }
  // Said outright, so a reviewer need not wonder whether a part was left out.
  if (!members.includes('inputSchema') && kind === 'tool') lines.push(`${prefix}inputSchema: (absent)`);
  if (!members.includes('outputSchema') && kind === 'tool') lines.push(`${prefix}outputSchema: (absent)`);
  if (!members.includes('annotations') && kind !== 'instructions') lines.push(`${prefix}annotations: (none)`);
  const escaped = escapedCharacterCount(definition);
  lines.push(
    escaped > 0
      ? `${prefix}${escaped} invisible or control character(s) in this definition are shown escaped as \\u{HEX} (docs/untrusted-text.md): read them as part of the text`
      : `${prefix}no invisible or control characters in this definition`,
  );
  return lines;
}

/** A header line, then the whole definition (see `wholeDefinitionLines`), then a blank line. */
export function formatWholeDefinition(
  server: string,
  kind: DefinitionKind,
  name: string,
  definition: Definition,
  status: readonly string[],
): string {
  const label = definitionLabel(rendered(server, 'name'), kind, rendered(name, 'name'));
  return [
    `${label}  (${kind})`,
    ...status.map((line) => `  ${line}`),
    ...wholeDefinitionLines(kind, definition),
    '',
  ].join('\n');
}

/**
 * The first line of a description for a one-line listing, cut at `max` characters and rendered on
 * one line, saying what it leaves out: a reviewer must never take a first line for the whole.
 */
export function descriptionSummary(description: string, max: number): string {
  const [first = '', ...rest] = description.split('\n');
  const more =
    rest.length > 0 ? ` [+${rest.length} more line(s), ${Array.from(description).length} characters]` : '';
  return `${rendered(clip(first, max), 'line')}${more}`;
}

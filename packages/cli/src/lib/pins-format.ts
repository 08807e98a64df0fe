import { type DefinitionDiff, printable } from '@ringfence/gateway';

const indent = (text: string, prefix: string) =>
  text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');

const clip = (text: string, max = 200) =>
  text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;

/** The value at a JSON Pointer, or undefined. */
function valueAt(document: unknown, pointer: string): unknown {
  let current: unknown = document;
  for (const raw of pointer.split('/').slice(1)) {
    const key = raw.replaceAll('~1', '/').replaceAll('~0', '~');
    if (typeof current !== 'object' || current === null || !Object.hasOwn(current, key)) return undefined;
    current = (current as Record<string, unknown>)[key];
  }
  return current;
}

const shown = (value: unknown) => (value === undefined ? '(absent)' : printable(clip(JSON.stringify(value))));

/**
 * A reviewer's view of one pending definition: old and new description, every other part that
 * moved with its value before and after, and — with `full` — the whole pending definition, which
 * is exactly what approving accepts. Everything the server wrote is made printable first.
 */
export function formatDiff(
  server: string,
  diff: DefinitionDiff,
  options: { full?: boolean; before?: unknown } = {},
): string {
  const lines = [`${server}/${printable(diff.tool)}  (${diff.kind === 'new' ? 'new tool' : 'changed'})`];
  if (diff.oldDigest) lines.push(`  pinned:  ${diff.oldDigest}`);
  lines.push(`  pending: ${diff.newDigest}`);
  if (diff.kind === 'changed' && diff.oldDescription !== diff.newDescription) {
    lines.push('  description before:', indent(printable(diff.oldDescription ?? '(none)'), '  - '));
    lines.push('  description after:', indent(printable(diff.newDescription ?? '(none)'), '  + '));
  } else if (diff.kind === 'new') {
    lines.push('  description:', indent(printable(diff.newDescription ?? '(none)'), '  + '));
  } else {
    lines.push('  description: unchanged');
  }
  if (diff.kind === 'changed') {
    lines.push(
      diff.movedFields.length > 0 ? `  also moved: ${diff.movedFields.join(', ')}` : '  nothing else moved',
    );
    for (const path of diff.movedPaths) {
      lines.push(
        `    ${printable(path)}: ${shown(valueAt(options.before, path))} → ${shown(valueAt(diff.pendingDefinition, path))}`,
      );
    }
    if (diff.morePaths > 0)
      lines.push(
        `    … and ${diff.morePaths} more (see the whole definition: ringfence mcp pins diff ${server} --full)`,
      );
  }
  if (options.full || diff.kind === 'new') {
    lines.push('  the whole pending definition (what approving accepts):');
    lines.push(indent(printable(JSON.stringify(diff.pendingDefinition, null, 2)), '    '));
  }
  return lines.join('\n');
}

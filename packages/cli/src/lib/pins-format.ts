import type { DefinitionDiff } from '@ringfence/gateway';

const indent = (text: string, prefix: string) =>
  text
    .split('\n')
    .map((line) => `${prefix}${line}`)
    .join('\n');

/** A reviewer's view of one pending definition: old and new description, and what else moved. */
export function formatDiff(server: string, diff: DefinitionDiff): string {
  const lines = [`${server}/${diff.tool}  (${diff.kind === 'new' ? 'new tool' : 'changed'})`];
  if (diff.oldDigest) lines.push(`  pinned:  ${diff.oldDigest}`);
  lines.push(`  pending: ${diff.newDigest}`);
  if (diff.kind === 'changed' && diff.oldDescription !== diff.newDescription) {
    lines.push('  description before:', indent(diff.oldDescription ?? '(none)', '  - '));
    lines.push('  description after:', indent(diff.newDescription ?? '(none)', '  + '));
  } else {
    lines.push(
      diff.kind === 'new' ? '  description:' : '  description: unchanged',
      ...(diff.kind === 'new' ? [indent(diff.newDescription ?? '(none)', '  + ')] : []),
    );
  }
  if (diff.kind === 'changed') {
    lines.push(
      diff.movedFields.length > 0 ? `  also moved: ${diff.movedFields.join(', ')}` : '  nothing else moved',
    );
    for (const path of diff.movedPaths) lines.push(`    ${path}`);
  }
  return lines.join('\n');
}

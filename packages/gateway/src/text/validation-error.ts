/**
 * A validation failure (zod's, as the MCP SDK throws it on an answer that is not valid MCP) as one
 * readable sentence instead of its JSON dump of issues: the first issue's place and message, and
 * how many more there were. Accepts the error itself (`issues`) or a message that is that dump,
 * possibly after a prefix such as "MCP error -32603: ". Undefined for anything else.
 */
export function validationSentence(error: unknown): string | undefined {
  const issues = issuesOf(error);
  if (!issues || issues.length === 0) return undefined;
  const first = issues[0]!;
  const where = first.path.length > 0 ? `at ${first.path.join('.')}` : 'at the top level';
  const more =
    issues.length > 1 ? `, and ${issues.length - 1} more problem${issues.length > 2 ? 's' : ''}` : '';
  return `the server's answer is not valid MCP (${where}: ${first.message}${more})`;
}

interface Issue {
  readonly path: readonly (string | number)[];
  readonly message: string;
}

function isIssue(value: unknown): value is Issue {
  const v = value as Partial<Issue> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.message === 'string' &&
    Array.isArray(v.path) &&
    v.path.every((p) => typeof p === 'string' || typeof p === 'number')
  );
}

function issuesOf(error: unknown): Issue[] | undefined {
  const direct = (error as { issues?: unknown } | null)?.issues;
  if (Array.isArray(direct) && direct.every(isIssue)) return direct;
  const message = (error as { message?: unknown } | null)?.message;
  if (typeof message !== 'string') return undefined;
  const start = message.indexOf('[');
  if (start < 0 || !message.trimEnd().endsWith(']')) return undefined;
  try {
    const parsed = JSON.parse(message.slice(start)) as unknown;
    return Array.isArray(parsed) && parsed.every(isIssue) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A line diff (longest common subsequence) for the Reviews view: which lines of the pinned and
 * pending text are the same and which moved. Past a size it gives up and marks nothing, rather
 * than make a hostile definition freeze the page.
 */
export type Mark = 'same' | 'del' | 'add';

const MAX_CELLS = 4_000_000;

export function diffLines(
  before: readonly string[],
  after: readonly string[],
): { before: Mark[]; after: Mark[] } {
  const n = before.length;
  const m = after.length;
  if (n * m > MAX_CELLS) return { before: before.map(() => 'same'), after: after.map(() => 'same') };
  // lcs[i][j]: length of the longest common subsequence of before[i..] and after[j..].
  const lcs = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i]![j] =
        before[i] === after[j] ? lcs[i + 1]![j + 1]! + 1 : Math.max(lcs[i + 1]![j]!, lcs[i]![j + 1]!);
  const marksBefore: Mark[] = before.map(() => 'del');
  const marksAfter: Mark[] = after.map(() => 'add');
  let i = 0;
  let j = 0;
  while (i < n && j < m) {
    if (before[i] === after[j]) {
      marksBefore[i] = 'same';
      marksAfter[j] = 'same';
      i += 1;
      j += 1;
    } else if (lcs[i + 1]![j]! >= lcs[i]![j + 1]!) i += 1;
    else j += 1;
  }
  return { before: marksBefore, after: marksAfter };
}

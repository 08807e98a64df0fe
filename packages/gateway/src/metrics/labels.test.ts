import { expect, it } from 'vitest';
import { LabelLevel, labelValue, MAX_LABEL_CHARS, OTHER } from './labels.js';

it('escapes what would break a label value, and shows what a person cannot see', () => {
  expect(labelValue('plain_tool.name-1')).toBe('plain_tool.name-1');
  expect(labelValue('a"b')).toBe('a\\"b');
  expect(labelValue('a\\b')).toBe('a\\\\b');
  const newline = labelValue('evil"} 1\nringfence_calls_total{x="y');
  expect(newline).not.toContain('\n');
  expect(newline).not.toMatch(/(^|[^\\])"/);
  expect(labelValue('zero\u200bwidth')).toBe('zero\\\\u{200B}width');
  expect(labelValue('a b')).toBe('a\\\\u{20}b');
});

it('cuts a long value to its cap', () => {
  const shown = labelValue('x'.repeat(10_000));
  expect(Array.from(shown)).toHaveLength(MAX_LABEL_CHARS);
  expect(shown.endsWith('~')).toBe(true);
});

it('admits up to the cap, then folds every new value into _other', () => {
  const budget = { left: 1000, folded: 0 };
  const level = new LabelLevel(3, budget, () => ({ n: 0 }));
  for (const name of ['a', 'b', 'c', 'd', 'e', 'a']) level.get(name).n += 1;
  expect([...level.children.keys()]).toEqual(['a', 'b', 'c', OTHER]);
  expect(budget.folded).toBe(2);
  expect(level.get('a').n).toBe(2);
  expect(level.get(OTHER).n).toBe(2);
});

it('keys by the shown value: two names that show alike share one series', () => {
  const level = new LabelLevel(10, { left: 1000, folded: 0 }, () => ({ n: 0 }));
  const long = 'y'.repeat(MAX_LABEL_CHARS + 5);
  level.get(`${long}1`).n += 1;
  level.get(`${long}2`).n += 1;
  expect(level.children.size).toBe(1);
  // A server's own "_other" lands with the folded ones rather than beside them.
  level.get(OTHER).n += 1;
  expect(level.children.size).toBe(2);
});

it('stops at the metric budget, whatever the per-label cap', () => {
  const budget = { left: 2, folded: 0 };
  const level = new LabelLevel(100, budget, () => ({}));
  for (let i = 0; i < 50; i += 1) level.get(`t${i}`);
  expect(level.children.size).toBe(3);
  expect(budget.folded).toBe(48);
});

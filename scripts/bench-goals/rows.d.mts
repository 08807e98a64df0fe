// Types for rows.mjs (a plain script the goals bench runs with node; the test imports it).
export interface GoalRow {
  id: string;
  figure: string;
  ringfence: string;
  anchor: string;
  ratio: string;
  goal: string;
  verdict: 'met' | 'NOT met' | 'n/a' | 'info';
  note?: string;
  value: number | undefined;
  measure: number | undefined;
  limit: number | undefined;
}
export const CONTAINED_P50_SLACK_MS: number;
export const GOALS: Record<string, number>;
export function num(obj: unknown, ...path: string[]): number | undefined;
export function fiveDockerRunReady(readyMs: unknown): { key: string; ms: number } | undefined;
export function parseStartup(text: string): { version_ms: number | undefined; node_ms: number | undefined };
export function goalRows(inputs: Record<string, unknown>): GoalRow[];
export function formatTable(rows: GoalRow[]): string;

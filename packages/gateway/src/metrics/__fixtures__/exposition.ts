/**
 * A strict reading of the Prometheus text format (0.0.4), for tests: every line a comment of
 * ours or one sample, label values escaped as the format requires, no series twice.
 */
const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const LABEL = `[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\\\\n]|\\\\[\\\\"n])*"`;
const SAMPLE = new RegExp(`^(${NAME})(\\{${LABEL}(?:,${LABEL})*\\})? (-?[0-9.e+-]+|\\+Inf|-Inf|NaN)$`);
const COMMENT = new RegExp(`^# (HELP ${NAME} .*|TYPE ${NAME} (counter|gauge|histogram))$`);

export interface Sample {
  readonly name: string;
  readonly labels: string;
  readonly value: number;
}

export function parseExposition(text: string): Sample[] {
  if (!text.endsWith('\n')) throw new Error('the exposition must end with a newline');
  const seen = new Set<string>();
  const samples: Sample[] = [];
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.startsWith('#')) {
      if (!COMMENT.test(line)) throw new Error(`not a HELP or TYPE line: ${JSON.stringify(line)}`);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const key = `${match[1]}${match[2] ?? ''}`;
    if (seen.has(key)) throw new Error(`series twice: ${key}`);
    seen.add(key);
    samples.push({ name: match[1]!, labels: match[2] ?? '', value: Number(match[3]) });
  }
  return samples;
}

/** The series of one metric (a histogram's by its `_count`). */
export const seriesOf = (samples: readonly Sample[], name: string): Sample[] =>
  samples.filter((s) => s.name === name);

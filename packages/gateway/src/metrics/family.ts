/**
 * Counters, histograms and gauges in the Prometheus text format (version 0.0.4), written here
 * rather than taken from a library: every label a server can reach must be bounded
 * (`labels.ts`), and a counted call must cost a few map lookups (docs/performance.md).
 */
import { LabelLevel, type SeriesBudget } from './labels.js';

export interface FamilyShape {
  /** A metric name of ours (`ringfence_…`). */
  readonly name: string;
  readonly help: string;
  /** Label names, outermost first, each with its cap of distinct values under one parent. */
  readonly labels: readonly (readonly [name: string, cap: number])[];
  /** Label values the metric may create in all (its series are bounded by about this, per label). */
  readonly budget?: number;
}

type Node<S> = LabelLevel<Node<S>> | S;

const DEFAULT_BUDGET = 2000;

/** One metric: its series, found by label values through one capped level per label. */
abstract class Family<S extends object> {
  readonly budget: SeriesBudget;
  /** Made on first use: a subclass's fields (a histogram's bounds) are set only after this constructor. */
  private rootNode: Node<S> | undefined;

  constructor(
    readonly shape: FamilyShape,
    private readonly type: 'counter' | 'histogram' | 'gauge',
  ) {
    this.budget = { left: shape.budget ?? DEFAULT_BUDGET, folded: 0 };
  }

  private get root(): Node<S> {
    this.rootNode ??= this.level(0);
    return this.rootNode;
  }

  private level(depth: number): Node<S> {
    const label = this.shape.labels[depth];
    if (!label) return this.create();
    return new LabelLevel<Node<S>>(label[1], this.budget, () => this.level(depth + 1));
  }

  protected abstract create(): S;
  /** The sample lines of one series, `labels` already formatted as `a="x",b="y"` (or empty). */
  protected abstract samples(series: S, labels: string): string[];

  /** The series of these label values (one per label, in order), created on first use. */
  protected find(values: readonly string[]): S {
    let node = this.root;
    for (let i = 0; i < values.length; i += 1) node = (node as LabelLevel<Node<S>>).get(values[i]!);
    return node as S;
  }

  /** The metric in the exposition format: HELP, TYPE, then every series. */
  render(): string {
    const lines = [`# HELP ${this.shape.name} ${this.shape.help}`, `# TYPE ${this.shape.name} ${this.type}`];
    const walk = (node: Node<S>, depth: number, prefix: string) => {
      const label = this.shape.labels[depth];
      if (!label) {
        lines.push(...this.samples(node as S, prefix));
        return;
      }
      for (const [shown, child] of (node as LabelLevel<Node<S>>).children)
        walk(child, depth + 1, `${prefix}${prefix ? ',' : ''}${label[0]}="${shown}"`);
    };
    walk(this.root, 0, '');
    return `${lines.join('\n')}\n`;
  }
}

const braced = (labels: string) => (labels ? `{${labels}}` : '');

/** A number as the format writes it. */
export function sampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

export class Counter extends Family<{ value: number }> {
  constructor(shape: FamilyShape) {
    super(shape, 'counter');
  }
  protected create() {
    return { value: 0 };
  }
  protected samples(series: { value: number }, labels: string): string[] {
    return [`${this.shape.name}${braced(labels)} ${sampleValue(series.value)}`];
  }
  inc(values: readonly string[], by = 1): void {
    this.find(values).value += by;
  }
}

interface HistogramSeries {
  /** Per bucket (not cumulative; the last is +Inf), summed up when rendered. */
  readonly counts: Float64Array;
  sum: number;
  count: number;
}

/** Seconds, from 0.5 ms (an fdatasync on fast storage) to 60 s (a slow tool). */
export const SECONDS_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60,
] as const;

export class Histogram extends Family<HistogramSeries> {
  constructor(
    shape: FamilyShape,
    private readonly bounds: readonly number[] = SECONDS_BUCKETS,
  ) {
    super(shape, 'histogram');
  }
  protected create(): HistogramSeries {
    return { counts: new Float64Array(this.bounds.length + 1), sum: 0, count: 0 };
  }
  protected samples(series: HistogramSeries, labels: string): string[] {
    const sep = labels ? ',' : '';
    const out: string[] = [];
    let cumulative = 0;
    for (let i = 0; i <= this.bounds.length; i += 1) {
      cumulative += series.counts[i]!;
      const le = i < this.bounds.length ? sampleValue(this.bounds[i]!) : '+Inf';
      out.push(`${this.shape.name}_bucket{${labels}${sep}le="${le}"} ${sampleValue(cumulative)}`);
    }
    out.push(`${this.shape.name}_sum${braced(labels)} ${sampleValue(series.sum)}`);
    out.push(`${this.shape.name}_count${braced(labels)} ${sampleValue(series.count)}`);
    return out;
  }
  observe(values: readonly string[], value: number): void {
    const series = this.find(values);
    let i = 0;
    while (i < this.bounds.length && value > this.bounds[i]!) i += 1;
    series.counts[i]! += 1;
    series.sum += value;
    series.count += 1;
  }
}

/**
 * A gauge read when scraped: `read` gives its current values, which go through the same capped
 * labels as any series (a fresh set each scrape, so what went away is gone from the next one).
 */
export class Gauge {
  constructor(
    private readonly shape: FamilyShape,
    private readonly read: () => Iterable<{ labels: readonly string[]; value: number }>,
  ) {}
  render(): string {
    const now = new SummedGauge(this.shape);
    for (const { labels, value } of this.read()) now.add(labels, value);
    return now.render();
  }
}

class SummedGauge extends Family<{ value: number }> {
  constructor(shape: FamilyShape) {
    super(shape, 'gauge');
  }
  protected create() {
    return { value: 0 };
  }
  protected samples(series: { value: number }, labels: string): string[] {
    return [`${this.shape.name}${braced(labels)} ${sampleValue(series.value)}`];
  }
  /** Values whose labels fold together (past a cap) are summed. */
  add(values: readonly string[], value: number): void {
    this.find(values).value += value;
  }
}

/**
 * Label values in the Prometheus text format, from text a server chose (a tool name, a URI) as
 * much as from our own words: rendered, escaped, cut, and bounded in number, so that no server can
 * break a scrape or grow the series without end.
 */
import { rendered } from '../text/render.js';

/** The longest label value shown, in code points; longer ones are cut and marked. */
export const MAX_LABEL_CHARS = 128;

/** The value a label takes once its cap of distinct values is reached. */
export const OTHER = '_other';

/**
 * A value as it appears between the quotes of `label="…"`: every character a person cannot see
 * shown as `\u{HEX}` (newlines and controls included, `text/render.ts`), cut to
 * MAX_LABEL_CHARS, then `\` and `"` escaped as the exposition format requires (newline never
 * remains to escape). Two values may come out the same (after a cut): callers key series by the
 * result, so they share one series rather than print the same series twice.
 */
export function labelValue(raw: string): string {
  let shown = rendered(raw, 'name');
  const points = Array.from(shown);
  if (points.length > MAX_LABEL_CHARS) shown = `${points.slice(0, MAX_LABEL_CHARS - 1).join('')}~`;
  return shown.replace(/[\\"\n]/g, (ch) => (ch === '\n' ? '\\n' : `\\${ch}`));
}

/**
 * What one metric may still create: label values admitted (at any label) draw on `left`; once it
 * is spent every new value folds into `OTHER`. `folded` counts the values folded so.
 */
export interface SeriesBudget {
  left: number;
  folded: number;
}

/**
 * One label's values under one parent (a metric, or one value of the label before it), capped:
 * the first `cap` distinct shown values (while the metric's budget lasts) each get their child;
 * every later one shares `OTHER`'s. Raw values are remembered (so a known one costs one map
 * lookup) up to twice the cap; once the level is full, any value not remembered goes to `OTHER`.
 */
export class LabelLevel<C> {
  private readonly byRaw = new Map<string, C>();
  /** Shown value → child, in first-seen order (the exposition's order). */
  readonly children = new Map<string, C>();

  constructor(
    private readonly cap: number,
    private readonly budget: SeriesBudget,
    private readonly make: () => C,
  ) {}

  get(raw: string): C {
    const known = this.byRaw.get(raw);
    if (known !== undefined) return known;
    return this.admit(raw);
  }

  private admit(raw: string): C {
    // Full: whatever it is, it folds (not even rendered: a flood of new names costs no more than a known one).
    let child = this.full() ? undefined : this.shown(labelValue(raw));
    if (child === undefined) {
      this.budget.folded += 1;
      child = this.children.get(OTHER) ?? this.create(OTHER);
    }
    if (this.byRaw.size < 2 * this.cap) this.byRaw.set(raw, child);
    return child;
  }

  private full(): boolean {
    return this.children.size >= this.cap || this.budget.left <= 0;
  }

  /** The child of a shown value: found, or created while there is room. */
  private shown(value: string): C {
    const known = this.children.get(value);
    if (known !== undefined) return known;
    if (value !== OTHER) this.budget.left -= 1;
    return this.create(value);
  }

  private create(shown: string): C {
    const child = this.make();
    this.children.set(shown, child);
    return child;
  }
}

/** The Decisions view (the audit timeline, filtered) and the Egress view (attempts per host, and a chart). */
import type { ShownEntry } from '../../src/console/api.js';
import { h, replace, svg } from './dom.js';

/** Rows drawn at once: the newest matches; the rest are counted. */
const MAX_ROWS = 500;

interface Filters {
  server: string;
  tool: string;
  agent: string;
  outcome: string;
  rule: string;
  type: string;
  from: string;
  to: string;
}

const FILTERS: (keyof Filters)[] = ['type', 'server', 'tool', 'agent', 'outcome', 'rule', 'from', 'to'];

export class DecisionsView {
  private readonly filters: Filters = {
    server: '',
    tool: '',
    agent: '',
    outcome: '',
    rule: '',
    type: '',
    from: '',
    to: '',
  };
  private readonly table = h('tbody');
  private readonly count = h('p', { class: 'muted' });
  private readonly detail = h('pre', { class: 'detail', hidden: '' });
  private readonly selects = new Map<keyof Filters, HTMLSelectElement>();
  private selected?: number;

  constructor(
    root: HTMLElement,
    private readonly entries: () => readonly ShownEntry[],
  ) {
    const controls = FILTERS.map((key) => {
      const label =
        key === 'outcome'
          ? 'decision'
          : key === 'tool'
            ? 'tool contains'
            : key === 'from' || key === 'to'
              ? `time ${key} (UTC)`
              : key;
      let input: HTMLInputElement | HTMLSelectElement;
      if (key === 'tool') input = h('input', { type: 'search', name: key, placeholder: 'any' });
      else if (key === 'from' || key === 'to')
        input = h('input', { type: 'text', name: key, placeholder: '2026-11-30T16:00' });
      else {
        input = h('select', { name: key }, h('option', { value: '' }, 'any'));
        this.selects.set(key, input);
      }
      input.addEventListener('input', () => {
        this.filters[key] = input.value;
        this.draw();
      });
      return h('label', {}, label, input);
    });
    root.replaceChildren(
      h('div', { class: 'filters' }, ...controls),
      this.count,
      h(
        'table',
        { class: 'decisions' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            ...['seq', 'time (UTC)', 'type', 'server', 'tool', 'decision', 'rule', 'reason', 'agent'].map(
              (c) => h('th', {}, c),
            ),
          ),
        ),
        this.table,
      ),
      this.detail,
    );
  }

  private matches(e: ShownEntry): boolean {
    const f = this.filters;
    if (f.type && e.type !== f.type) return false;
    if (f.server && e.server !== f.server) return false;
    if (f.tool && !(e.subject ?? '').toLowerCase().includes(f.tool.toLowerCase())) return false;
    if (f.agent && (e.agent ?? '(none)') !== f.agent) return false;
    if (f.outcome && e.outcome !== f.outcome) return false;
    if (f.rule && e.rule !== f.rule) return false;
    if (f.from && (e.ts ?? '') < f.from) return false;
    if (f.to && (e.ts ?? '') > f.to) return false;
    return true;
  }

  /** Keeps each select's choices to the values present, without losing the current choice. */
  private refreshChoices(all: readonly ShownEntry[]): void {
    const values: Record<string, (e: ShownEntry) => string | undefined> = {
      type: (e) => e.type,
      server: (e) => e.server,
      agent: (e) => e.agent ?? '(none)',
      outcome: (e) => e.outcome,
      rule: (e) => e.rule,
    };
    for (const [key, select] of this.selects) {
      const present = [...new Set(all.map(values[key]!).filter((v): v is string => v !== undefined))].sort();
      if (present.length + 1 === select.options.length) continue;
      const current = select.value;
      replace(select, h('option', { value: '' }, 'any'), ...present.map((v) => h('option', { value: v }, v)));
      select.value = current;
    }
  }

  draw(): void {
    const all = this.entries();
    this.refreshChoices(all);
    const matching = all.filter((e) => this.matches(e));
    const rows = matching.slice(-MAX_ROWS).reverse();
    this.count.textContent =
      matching.length > rows.length
        ? `${matching.length} matching entries; the newest ${rows.length} are shown. Narrow the filters, or use: ringfence audit tail`
        : `${matching.length} matching entries of ${all.length} read.`;
    replace(
      this.table,
      ...rows.map((e) => {
        const row = h(
          'tr',
          { class: `clickable${e.n === this.selected ? ' selected' : ''}`, 'data-seq': String(e.seq ?? '') },
          h('td', {}, e.seq ?? '?'),
          h('td', { class: 'mono' }, e.ts ?? ''),
          h('td', {}, e.type, e.phase ? ` (${e.phase})` : ''),
          h('td', {}, e.server ?? ''),
          h('td', { class: 'mono' }, e.subject ?? (e.host ? `${e.host}:${e.port}` : '')),
          h('td', { class: e.outcome ?? '' }, e.outcome ?? ''),
          h('td', {}, e.rule ?? ''),
          h('td', {}, e.reason ?? ''),
          h('td', {}, e.agent ?? ''),
        );
        row.addEventListener('click', () => {
          this.selected = e.n;
          this.detail.hidden = false;
          this.detail.textContent = e.json;
          for (const other of this.table.querySelectorAll('tr.selected')) other.classList.remove('selected');
          row.classList.add('selected');
        });
        return row;
      }),
    );
  }
}

interface HostRow {
  server: string;
  target: string;
  allowed: number;
  refused: number;
  last: string;
}

const BUCKETS = 24;

/** Attempts per server and host:port, and allowed against refused over the span of the log read. */
export function drawEgress(root: HTMLElement, entries: readonly ShownEntry[]): void {
  const egress = entries.filter((e) => e.type === 'mcp.egress');
  if (egress.length === 0) {
    root.replaceChildren(
      h(
        'p',
        { class: 'card' },
        'No connection attempts recorded: no contained server has tried to reach the network yet.',
      ),
    );
    return;
  }
  const rows = new Map<string, HostRow>();
  for (const e of egress) {
    const key = `${e.server}\u0000${e.host}:${e.port}`;
    const row = rows.get(key) ?? {
      server: e.server ?? '',
      target: `${e.host}:${e.port}`,
      allowed: 0,
      refused: 0,
      last: '',
    };
    if (e.outcome === 'allowed') row.allowed += e.count ?? 1;
    else row.refused += e.count ?? 1;
    row.last = e.ts ?? row.last;
    rows.set(key, row);
  }
  const times = egress.map((e) => Date.parse(e.ts ?? '')).filter(Number.isFinite);
  const start = Math.min(...times);
  const span = Math.max(Math.max(...times) - start, 1);
  const buckets = Array.from({ length: BUCKETS }, () => ({ allowed: 0, refused: 0 }));
  for (const e of egress) {
    const t = Date.parse(e.ts ?? '');
    if (!Number.isFinite(t)) continue;
    const bucket = buckets[Math.min(BUCKETS - 1, Math.floor(((t - start) / span) * BUCKETS))]!;
    bucket[e.outcome === 'allowed' ? 'allowed' : 'refused'] += e.count ?? 1;
  }
  const peak = Math.max(1, ...buckets.map((b) => b.allowed + b.refused));
  const width = 720;
  const height = 160;
  const barWidth = width / BUCKETS;
  const scale = (n: number) => (n / peak) * (height - 40);
  const bars = buckets.flatMap((b, i) => [
    svg(
      'rect',
      {
        x: i * barWidth + 2,
        y: height - 20 - scale(b.allowed),
        width: barWidth - 4,
        height: scale(b.allowed),
        class: 'legend-allowed',
      },
      svg('title', {}, `${b.allowed} allowed`),
    ),
    svg(
      'rect',
      {
        x: i * barWidth + 2,
        y: height - 20 - scale(b.allowed) - scale(b.refused),
        width: barWidth - 4,
        height: scale(b.refused),
        class: 'legend-refused',
      },
      svg('title', {}, `${b.refused} refused`),
    ),
  ]);
  const chart = svg(
    'svg',
    {
      viewBox: `0 0 ${width} ${height}`,
      width,
      height,
      role: 'img',
      'aria-label': 'egress attempts over time, allowed and refused',
    },
    ...bars,
    svg('text', { x: 0, y: height - 4 }, new Date(start).toISOString().slice(0, 16)),
    svg('text', { x: width - 110, y: height - 4 }, new Date(start + span).toISOString().slice(0, 16)),
    svg('text', { x: 0, y: 12 }, `peak ${peak} per bar`),
  );
  const sorted = [...rows.values()].sort((a, b) => b.refused - a.refused || b.allowed - a.allowed);
  root.replaceChildren(
    h(
      'article',
      { class: 'card' },
      h('h2', {}, 'Attempts over time'),
      h(
        'p',
        {},
        h('span', { class: 'allowed' }, '■ allowed'),
        '  ',
        h('span', { class: 'refused' }, '■ refused'),
        h('span', { class: 'muted' }, `  ${egress.length} entries`),
      ),
      chart,
    ),
    h(
      'table',
      { class: 'egress' },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          ...['server', 'host:port', 'allowed', 'refused', 'last attempt (UTC)'].map((c) => h('th', {}, c)),
        ),
      ),
      h(
        'tbody',
        {},
        ...sorted.map((r) =>
          h(
            'tr',
            {},
            h('td', {}, r.server),
            h('td', { class: 'mono' }, r.target),
            h('td', { class: 'allowed' }, r.allowed),
            h('td', { class: 'refused' }, r.refused),
            h('td', { class: 'mono' }, r.last),
          ),
        ),
      ),
    ),
  );
}

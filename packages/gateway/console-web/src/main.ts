/**
 * The console page: fetches the read-only JSON of the console server (same origin, its cookie, by
 * URLs relative to the page's own address, which carries the session's page key: console/session.ts),
 * draws each view, and redraws when the server says the audit log or a home file changed.
 */
import type { ChainStatus, EntriesPage, Overview, ShownEntry } from '../../src/console/api.js';
import { DecisionsView, drawEgress } from './timeline.js';
import { drawPolicy, drawReviews, drawServers } from './views.js';

const VIEWS = ['servers', 'reviews', 'decisions', 'egress', 'policy'] as const;
type View = (typeof VIEWS)[number];

const $ = (id: string) => document.getElementById(id)!;

async function get<T>(path: string): Promise<T> {
  const response = await fetch(path, { credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

const entries: ShownEntry[] = [];
let last = 0;
let overview: Overview | undefined;
const decisions = new DecisionsView($('view-decisions'), () => entries);

function current(): View {
  const name = location.hash.slice(1);
  return (VIEWS as readonly string[]).includes(name) ? (name as View) : 'servers';
}

function show(): void {
  const view = current();
  for (const section of document.querySelectorAll<HTMLElement>('main > section'))
    section.hidden = section.dataset.view !== view;
  for (const link of document.querySelectorAll<HTMLElement>('#tabs a'))
    link.classList.toggle('active', link.dataset.view === view);
}

async function loadOverview(): Promise<void> {
  overview = await get<Overview>('api/overview');
  $('gateway').textContent = overview.gateway.text;
  $('review-count').textContent = overview.reviews.length > 0 ? `(${overview.reviews.length})` : '';
  drawServers($('view-servers'), overview);
  drawReviews($('view-reviews'), overview);
  drawPolicy($('view-policy'), overview);
}

async function loadEntries(): Promise<void> {
  for (;;) {
    const page = await get<EntriesPage>(`api/entries?after=${last}`);
    if (page.notice) $('live').textContent = `read-only · ${page.notice}`;
    entries.push(...page.entries);
    if (page.entries.length > 0) last = page.entries[page.entries.length - 1]!.n;
    if (page.entries.length === 0 || last >= page.last) break;
  }
  decisions.draw();
  drawEgress($('view-egress'), entries);
}

async function loadChain(): Promise<void> {
  const chain = await get<ChainStatus>('api/chain');
  const element = $('chain');
  element.textContent = `audit chain: ${chain.ok ? chain.message : `BROKEN at line ${chain.line} (${chain.code}): ${chain.message}`}`;
  element.className = `chain ${chain.ok ? 'ok' : 'bad'}`;
}

function failed(error: unknown): void {
  $('live').textContent = `could not load: ${(error as Error).message}`;
}

function listen(): void {
  const events = new EventSource('api/events');
  events.addEventListener('audit', () => {
    // A new gateway start or expose decision changes the Servers view too.
    Promise.all([loadEntries(), loadChain(), loadOverview()]).catch(failed);
  });
  events.addEventListener('files', () => {
    loadOverview().catch(failed);
  });
  events.addEventListener('open', () => {
    $('live').textContent = 'read-only · live';
  });
  events.addEventListener('error', () => {
    $('live').textContent = 'read-only · live updates lost (is ringfence console still running?)';
  });
}

window.addEventListener('hashchange', show);
show();
Promise.all([loadOverview(), loadEntries(), loadChain()])
  .then(() => document.body.setAttribute('data-loaded', 'true'))
  .catch(failed);
listen();

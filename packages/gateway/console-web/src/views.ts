/** The Servers, Reviews and Policy views, drawn from /api/overview. */
import type { Overview, ReviewSide, ReviewView, ServerView, ShownText } from '../../src/console/api.js';
import { diffLines, type Mark } from './diff.js';
import { type Child, h } from './dom.js';

/** A rendered string, flagged when the server's text held characters that are shown escaped. */
export function shown(text: ShownText, tag: 'span' | 'pre' = 'span'): HTMLElement {
  return h(
    tag,
    text.escaped > 0
      ? { class: 'has-escapes', title: `${text.escaped} invisible or control character(s) shown as \\u{HEX}` }
      : {},
    text.text,
  );
}

const escapedNote = (what: string, text: ShownText): Child =>
  text.escaped > 0 &&
  h(
    'p',
    { class: 'warn' },
    `${what} contains ${text.escaped} invisible or control character(s), shown escaped as \\u{HEX}.`,
  );

const list = (items: readonly ShownText[], empty: string): Child =>
  items.length === 0
    ? h('span', { class: 'muted' }, empty)
    : h('ul', {}, ...items.map((item) => h('li', {}, shown(item))));

function serverCard(server: ServerView): HTMLElement {
  const stateClass =
    server.state.text === 'running'
      ? 'running'
      : server.state.text.startsWith('not serving')
        ? 'bad'
        : 'muted';
  return h(
    'article',
    { class: 'card server', 'data-server': server.name.text },
    h(
      'h2',
      {},
      shown(server.name),
      ' ',
      h('span', { class: 'badge' }, server.kind),
      ' ',
      h('span', { class: `badge ${stateClass}` }, server.state.text),
    ),
    h(
      'dl',
      {},
      h('dt', {}, server.kind === 'container' ? 'image' : 'URL'),
      h('dd', { class: 'mono' }, shown(server.target)),
      h('dt', {}, 'egress'),
      h('dd', {}, shown(server.egress)),
      h('dt', {}, 'mounts'),
      h('dd', {}, list(server.mounts, server.kind === 'container' ? 'none' : 'not a container')),
      h('dt', {}, 'pinned'),
      h('dd', {}, `${server.pinned} definition(s)`),
      h('dt', {}, 'exposed'),
      h('dd', { class: 'exposed' }, list(server.exposed, 'nothing in the latest gateway run')),
      h('dt', {}, 'withheld'),
      h('dd', { class: 'withheld' }, list(server.withheld, 'nothing')),
      h('dt', {}, 'ceilings'),
      h('dd', {}, list(server.ceilings, 'none')),
    ),
  );
}

export function drawServers(root: HTMLElement, overview: Overview): void {
  root.replaceChildren(
    ...(overview.servers.length === 0
      ? [
          h(
            'p',
            { class: 'card' },
            'No servers registered. Add one at a terminal: ringfence mcp add NAME --url URL',
          ),
        ]
      : overview.servers.map(serverCard)),
  );
}

function marked(text: ShownText, marks: readonly Mark[] | undefined): HTMLElement {
  const lines = text.text.split('\n');
  return h(
    'pre',
    {},
    ...lines.map((line, i) => h('span', { class: `line-${marks?.[i] ?? 'same'}` }, line || ' ')),
  );
}

function sideColumn(
  title: string,
  side: ReviewSide | undefined,
  marks?: { description: Mark[]; rest: Mark[] },
): HTMLElement {
  if (!side)
    return h(
      'div',
      {},
      h('h3', {}, title),
      h('p', { class: 'muted' }, 'nothing pinned under this name: it is new'),
    );
  return h(
    'div',
    {},
    h('h3', {}, title),
    side.digest ? h('p', { class: 'mono muted' }, side.digest) : null,
    h('h3', {}, 'description'),
    marked(side.description, marks?.description),
    escapedNote('The description', side.description),
    h('h3', {}, 'schema and other fields'),
    marked(side.rest, marks?.rest),
    escapedNote('The definition', side.rest),
  );
}

function reviewCard(review: ReviewView): HTMLElement {
  const split = (side: ReviewSide | undefined) => ({
    description: side?.description.text.split('\n') ?? [],
    rest: side?.rest.text.split('\n') ?? [],
  });
  const before = split(review.before);
  const after = split(review.after);
  const description = diffLines(before.description, after.description);
  const rest = diffLines(before.rest, after.rest);
  const sameVisible =
    review.before &&
    review.before.description.text !== review.after.description.text &&
    review.before.description.text.replace(/\\u\{[0-9A-F]+\}/g, '') ===
      review.after.description.text.replace(/\\u\{[0-9A-F]+\}/g, '');
  return h(
    'article',
    { class: 'card review', 'data-server': review.server.text },
    h(
      'h2',
      {},
      shown(review.server),
      ' / ',
      review.definition,
      ' ',
      shown(review.name),
      ' ',
      h('span', { class: 'badge warn' }, review.change === 'new' ? `new ${review.definition}` : 'changed'),
    ),
    review.change === 'changed' &&
      review.movedFields.length > 0 &&
      h('p', {}, 'also moved: ', ...review.movedFields.flatMap((f, i) => [i > 0 ? ', ' : '', shown(f)])),
    sameVisible &&
      h(
        'p',
        { class: 'warn' },
        'The descriptions differ only in invisible or control characters: compare the escapes.',
      ),
    h(
      'div',
      { class: 'sides' },
      sideColumn('pinned (what the client sees now)', review.before, {
        description: description.before,
        rest: rest.before,
      }),
      sideColumn('pending (withheld until approved)', review.after, {
        description: description.after,
        rest: rest.after,
      }),
    ),
    h('h3', {}, 'Approve at a terminal (the page cannot):'),
    h('pre', { class: 'command' }, review.commands.join('\n')),
  );
}

export function drawReviews(root: HTMLElement, overview: Overview): void {
  root.replaceChildren(
    ...(overview.reviews.length === 0
      ? [
          h(
            'p',
            { class: 'card' },
            'Nothing waits for review: every definition the servers list matches its pin.',
          ),
        ]
      : overview.reviews.map(reviewCard)),
  );
}

export function drawPolicy(root: HTMLElement, overview: Overview): void {
  const { policy } = overview;
  root.replaceChildren(
    h(
      'article',
      { class: 'card policy' },
      h(
        'h2',
        {},
        'Organisation policy ',
        h(
          'span',
          {
            class: `badge ${policy.state === 'refused' ? 'bad' : policy.state === 'verified' ? 'ok' : 'muted'}`,
          },
          policy.state,
        ),
      ),
      h('p', {}, shown(policy.summary)),
      policy.lines.length > 0 && h('pre', {}, policy.lines.map((l) => l.text).join('\n')),
    ),
  );
}

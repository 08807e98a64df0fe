/**
 * Listings as the client sees them: every icon of a tool, prompt, resource and template is one a
 * client draws without fetching (`icons.ts`), and every resource URI and template is in the
 * gateway's namespace unless `--only` may show it bare (`resource-uri.ts`). Real guard, real pin
 * store in a temporary home, no policy, both modes.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Naming, PREFIXED } from '../catalog/present.js';
import { fingerprintDefinition } from '../pins/fingerprint.js';
import { PinStore } from '../pins/store.js';
import { LOCAL_ONLY } from '../ports/policy.js';
import { SchemaGuard } from '../schema/guard.js';
import { HOSTILE_URIS } from './__fixtures__/hostile-links.js';
import { buildServerCatalog } from './catalog.js';
import { isBareSafe } from './resource-uri.js';

const guard = new SchemaGuard();
const homes: string[] = [];
beforeAll(() => guard.warmUp(), 60_000);
afterAll(async () => {
  await guard.close();
  await Promise.all(homes.map((home) => rm(home, { recursive: true, force: true })));
});

const PNG_ICON = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0]).toString('base64')}`;
const ICONS = [...HOSTILE_URIS, PNG_ICON].map((src) => ({ src }));
const schema = { type: 'object', properties: {} };

const listings = {
  rawTools: [{ name: 'read', description: 'r', inputSchema: schema, icons: ICONS }],
  rawPrompts: [{ name: 'greet', icons: ICONS }],
  // Every hostile URI as a resource of its own, each with the hostile icons.
  rawResources: HOSTILE_URIS.map((uri, index) => ({ uri, name: `r${index}`, icons: ICONS })),
  rawTemplates: [
    { uriTemplate: 'https://attacker.example/{id}', name: 'web', icons: ICONS },
    { uriTemplate: 'vscode:extension/{id}', name: 'app', icons: ICONS },
    { uriTemplate: 'test://template/{id}/data', name: 'data', icons: ICONS },
  ],
};

async function catalogFor(naming: Naming) {
  const home = await mkdtemp(join(tmpdir(), 'rf-links-'));
  homes.push(home);
  return buildServerCatalog({
    server: 'files',
    destination: 'test',
    ...listings,
    problems: [],
    localAllow: undefined,
    pins: new PinStore(home),
    guard,
    policy: LOCAL_ONLY,
    naming,
  });
}

describe('listings: no link or icon a client would open or fetch itself', () => {
  for (const [mode, naming] of [
    ['serving all servers', PREFIXED],
    ['with --only', { prefixed: false }],
  ] as const) {
    it(`${mode}: only drawable icons, every URI namespaced but a plain test: one under --only`, async () => {
      const catalog = await catalogFor(naming);
      const presented = [
        ...catalog.entries,
        ...catalog.prompts,
        ...catalog.resources,
        ...catalog.templates,
      ].map((e) => e.presented);
      // Resources that can be served at all: not the empty, the too long or the ringfence: one.
      expect(catalog.resources.length).toBeGreaterThan(HOSTILE_URIS.length - 6);
      expect(presented.length).toBe(2 + catalog.resources.length + 3);
      for (const definition of presented) expect(definition.icons).toStrictEqual([{ src: PNG_ICON }]);
      for (const entry of [...catalog.resources, ...catalog.templates]) {
        const own = entry.kind === 'resource' ? entry.uri : entry.template;
        const shown = entry.kind === 'resource' ? entry.presented.uri : entry.presented.uriTemplate;
        expect(shown, own).toBe(!naming.prefixed && isBareSafe(own) ? own : `ringfence:files/${own}`);
      }
      expect(catalog.templates.map((t) => t.presented.uriTemplate)).toEqual([
        'ringfence:files/https://attacker.example/{id}',
        'ringfence:files/vscode:extension/{id}',
        naming.prefixed ? 'ringfence:files/test://template/{id}/data' : 'test://template/{id}/data',
      ]);
      // The pin is of the definition as the server sent it, icons and all: a changed icon is a
      // changed definition, withheld until approved.
      const tool = catalog.entries[0]!;
      expect(tool.digest).toBe(
        (fingerprintDefinition(listings.rawTools[0], 'tool') as { pinnable: { digest: string } }).pinnable
          .digest,
      );
      const dropped = HOSTILE_URIS.length * presented.length;
      expect(catalog.problems).toEqual([
        `${dropped} icon(s) or icon member(s) in its listings were not passed on: a client fetches an icon itself, past the server's egress sidecar, so only base64 data: PNG, JPEG, GIF or WebP images up to 32 KiB are (see docs/gateway.md#icons)`,
      ]);
    });
  }
});

import { describe, expect, it } from 'vitest';
import { type Naming, PREFIXED } from '../../catalog/present.js';
import { BARE_URIS, HOSTILE_URIS } from '../__fixtures__/hostile-links.js';
import { clientUri } from '../resource-uri.js';
import {
  type SanitiseContext,
  type Sanitised,
  sanitisePrompt,
  sanitiseRead,
  sanitiseResult,
} from './sanitise.js';

/**
 * The attack corpus (`__fixtures__/hostile-links.ts`) through every place a result carries a URI
 * or an icon: resource links, embedded resources, prompt messages and reads, serving all servers
 * and with `--only`. None reaches the client as a link it could open, or an icon it would fetch.
 */

const LATEST = '2025-11-25';
const ONLY: Naming = { prefixed: false };
const context = (naming: Naming): SanitiseContext => ({
  protocolVersion: LATEST,
  server: 'files',
  label: 'files/read',
  linkUri: (uri) => clientUri('files', uri, naming),
});
const PNG_ICON = `data:image/png;base64,${Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]).toString('base64')}`;

function passed(outcome: Sanitised) {
  if (!outcome.ok) throw new Error(`expected a result, got the problem: ${outcome.problem}`);
  return outcome;
}
const linked = (uri: string, naming: Naming = PREFIXED) =>
  passed(sanitiseResult({ content: [{ type: 'resource_link', uri, name: 'report' }] }, context(naming)));

describe('sanitise: hostile links and icons in results, both modes', () => {
  it('namespaces every link of every hostile URI, in both modes, in links, embedded resources and reads', () => {
    for (const naming of [PREFIXED, ONLY]) {
      for (const uri of HOSTILE_URIS) {
        const shown = `ringfence:files/${uri}`;
        const what = `${naming.prefixed ? 'all' : '--only'} ${JSON.stringify(uri)}`;
        expect((linked(uri, naming).reply.content[0] as { uri: string }).uri, what).toBe(shown);
        const embedded = passed(
          sanitiseResult({ content: [{ type: 'resource', resource: { uri, text: 'x' } }] }, context(naming)),
        );
        expect((embedded.reply.content[0] as { resource: { uri: string } }).resource.uri, what).toBe(shown);
        const prompt = sanitisePrompt(
          { messages: [{ role: 'user', content: { type: 'resource_link', uri, name: 'n' } }] },
          context(naming),
        );
        expect(
          prompt.ok && (prompt.reply.messages[0] as { content: { uri: string } }).content.uri,
          what,
        ).toBe(shown);
        const read = sanitiseRead({ contents: [{ uri, text: 'x' }] }, context(naming));
        expect(read.ok && (read.reply.contents[0] as { uri: string }).uri, what).toBe(shown);
      }
    }
    for (const uri of BARE_URIS) {
      expect((linked(uri, ONLY).reply.content[0] as { uri: string }).uri).toBe(uri);
      expect((linked(uri).reply.content[0] as { uri: string }).uri).toBe(`ringfence:files/${uri}`);
    }
  });

  it('passes a link only the icons a client draws without fetching, in both modes', () => {
    for (const naming of [PREFIXED, ONLY]) {
      const icons = [...HOSTILE_URIS, PNG_ICON].map((src) => ({ src }));
      const out = passed(
        sanitiseResult(
          { content: [{ type: 'resource_link', uri: 'test://r', name: 'r', icons }] },
          context(naming),
        ),
      );
      const link = out.reply.content[0] as { uri: string; icons: unknown };
      expect(link.icons).toStrictEqual([{ src: PNG_ICON }]);
      // Every hostile icon, and the URI replaced (under --only too: test: shows bare, yet counts).
      expect(out.dropped).toBe(HOSTILE_URIS.length + 1);
      const none = passed(
        sanitiseResult(
          {
            content: [
              { type: 'resource_link', uri: 'test://r', name: 'r', icons: [{ src: 'https://a.example/' }] },
            ],
          },
          context(naming),
        ),
      );
      expect(Object.hasOwn(none.reply.content[0] as object, 'icons')).toBe(false);
    }
  });
});
